/**
 * The GPU suite without vitest (for a bare GPU machine; see docs/gpu.md):
 *   node --import tsx test/gpu/run.ts [runs]
 * Prints what it checks and a summary; exits 0 when everything passed, 2 when the nccl backend
 * cannot run here (saying why), 1 on any failure.
 */
import { ncclDiagnose } from "../../src/backends/nccl/index.js";
import { explainUnavailable } from "../../src/verify/nccl.js";
import { gpuSizes, RING_AND_TREE, runDifferential, runP2P, runSemantics } from "./suite.js";

const d = ncclDiagnose();
if (!d.ok) {
  console.error(explainUnavailable(d, "test/gpu"));
  process.exit(2);
}
const runs = Number(process.argv[2] ?? 6);
const seed = Number(process.env.CCLAB_SEED ?? 20261123);
const sizes = gpuSizes(d.devices);
const lib = d.library!;
console.log(
  `test/gpu: NCCL ${lib.versionString} (${lib.path}), ${d.devices} GPU(s), sizes ${sizes.join(", ")}, ${runs} cases, seed ${seed}`,
);
const failures: string[] = [];
let passed = 0;
for (const n of sizes) {
  const t0 = Date.now();
  const p = await runP2P(n, (l) => console.log(`  ${l}`));
  const ok = p.result.exitCode === 0 && (p.output.match(/^\[rank \d+\] done /gm)?.length ?? 0) === n;
  console.log(`${ok ? "PASS" : "FAIL"} p2p semantics, ${n} ranks (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  if (ok) passed++;
  else failures.push(`p2p ${n} ranks: ${p.result.summary}`);
}
for (const n of sizes) {
  const t0 = Date.now();
  const p = await runSemantics(n, (l) => console.log(`  ${l}`));
  const ok =
    p.result.exitCode === 0 && !/FAIL /.test(p.output) && (p.output.match(/^\[rank \d+\] done /gm)?.length ?? 0) === n;
  console.log(
    `${ok ? "PASS" : "FAIL"} docs/semantics.md cases, ${n} ranks (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  if (ok) passed++;
  else failures.push(`semantics ${n} ranks: ${p.result.summary}`);
}
for (const algo of RING_AND_TREE) {
  for (const n of sizes) {
    const t0 = Date.now();
    const r = await runDifferential(n, algo, runs, seed, (l) => console.log(`  ${l}`));
    const bad = r.rows.flatMap((row) => row.failures);
    const ok = bad.length === 0 && r.launchFailures.length === 0 && r.rows.length > 0;
    const what = `${r.rows.length} algorithms vs NCCL, ${n} ranks, NCCL_ALGO=${algo.algo}${algo.collective ? ` (${algo.collective})` : ""}`;
    console.log(`${ok ? "PASS" : "FAIL"} ${what} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    if (ok) passed++;
    else failures.push(`${what}:\n    ${[...bad.slice(0, 10), ...r.launchFailures].join("\n    ")}`);
  }
}
console.log(`\n${passed} passed, ${failures.length} failed`);
for (const f of failures) console.log(`FAILED ${f}`);
process.exit(failures.length > 0 ? 1 : 0);
