/**
 * What the nccl backend finds on this machine, as markdown lines for the record in docs/gpu.md
 * (test/gpu/device-run.sh runs it): the addon's engines, CUDA (runtime compiled in, driver), the
 * GPUs, NCCL's version and path, and which way ranks sharing a GPU get past NCCL's check at each
 * world size verify runs. Exits 2, saying why, where the backend cannot run here.
 *   node --import tsx test/gpu/device-info.ts [sizes, default 2,3,4]
 */
import { ncclDiagnose, sharedGpuEnv } from "../../src/backends/nccl/index.js";
import { loadNative } from "../../src/native/load.js";
import { explainUnavailable } from "../../src/verify/nccl.js";

const cudaVersion = (v: number) => (v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : "none");
const sizes = (process.argv[2] ?? "2,3,4").split(",").map(Number);

const l = loadNative();
console.log(`- addon: ${l.ok ? `${l.path}, engines ${JSON.stringify(l.addon.engines())}` : l.reason}`);
const d = ncclDiagnose();
const nccl = l.ok ? l.addon.nccl : undefined;
if (nccl) {
  console.log(
    `- CUDA: runtime ${cudaVersion(nccl.cudaRuntimeVersion)} compiled in (static), driver API ${cudaVersion(d.driverVersion)}`,
  );
}
if (nccl?.cuda && d.devices > 0) {
  for (let i = 0; i < d.devices; i++) {
    const g = nccl.deviceInfo(i);
    const gib = (g.totalMemory / 2 ** 30).toFixed(1);
    console.log(`- GPU ${i}: ${g.name}, sm_${g.major}${g.minor}, ${gib} GiB, bus ${g.pciBusId}`);
  }
}
if (d.library) {
  const lib = d.library;
  const optional = Object.entries(lib.optional)
    .filter(([, has]) => has)
    .map(([name]) => name);
  console.log(
    `- NCCL: ${lib.versionString} (${lib.version}) from ${lib.path}; optional entry points: ${optional.join(", ")}`,
  );
  for (const n of sizes) {
    const s = sharedGpuEnv({ rank: 0, localSize: n, size: n, deviceCount: d.devices, ncclVersion: lib.version });
    const vars = Object.entries(s.vars)
      .map(([k, v]) => `${k}=${k === "NCCL_HOSTID" ? "<per rank>" : v}`)
      .join(" ");
    console.log(
      `- ${n} ranks: ${s.path ? `share the GPU via ${s.path} (${vars || "the user's own settings"})` : "one GPU each"}`,
    );
  }
}
if (!d.ok) {
  console.error(explainUnavailable(d, "test/gpu/device-info.ts"));
  process.exit(2);
}
