/**
 * The nccl backend where no GPU is: the addon still loads and says what it has (CUDA compiled
 * in or not, NCCL loaded or not), ncclAvailable() explains every missing piece with the paths it
 * tried and how to get it, verify exits non-zero saying why, the dlopen path works against a
 * stand-in libnccl.so.2 compiled here, an addon built without CUDA says so, and the backend's
 * TypeScript (streams, batching, non-blocking enqueue, aborts, timeouts, builtin collectives and
 * the differential harness over every algorithm) runs on the fake engine (test/support/nccl-fake.ts).
 * The same checks on real GPUs: npm run test:gpu (test/gpu/).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  initNccl,
  NCCL_HINTS,
  NVIDIA_PROC_GPUS,
  ncclAvailable,
  ncclDiagnose,
  readDevice,
  sharedGpuEnv,
  toDevice,
  writeDevice,
} from "../src/backends/nccl/index.js";
import { allReduce } from "../src/collectives/api.js";
import { tensor, view } from "../src/core/buffer.js";
import { EngineError, InvalidArgumentError, TimeoutError } from "../src/core/errors.js";
import { MemoryStore, ownKey } from "../src/kvstore.js";
import { loadNative, tryLoad } from "../src/native/load.js";
import { resetNcclSearchCache } from "../src/native/nccl.js";
import type { NativeNccl } from "../src/native/types.js";
import { allAlgorithms } from "../src/schedule/registry.js";
import { explainUnavailable, ncclSizes, verifyNccl } from "../src/verify/nccl.js";
import { runNcclAlgorithm } from "../src/verify/nccl-cases.js";
import { P2P_CASES, TIMEOUT_CASE } from "./gpu/p2p-cases.js";
import { FakeNcclWorld, runFakeRanks } from "./support/nccl-fake.js";

const load = loadNative();
const addon = load.ok ? load.addon : undefined;
const native = addon?.nccl;
if (!native) console.warn(`nccl addon tests skipped: ${load.ok ? "the addon has no nccl engine" : load.reason}`);
const hasCc = spawnSync("cc", ["--version"]).status === 0;
const hasCmake = spawnSync("cmake", ["--version"]).status === 0;
const gpusListed = (() => {
  try {
    return readdirSync(NVIDIA_PROC_GPUS).length;
  } catch {
    return 0;
  }
})();

const saved = { ...process.env };
afterEach(() => {
  for (const k of ["CCLAB_NCCL_LIBRARY", "CCLAB_PYTHON"]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  resetNcclSearchCache();
});

describe("the addon reports nccl and cuda sanely", () => {
  it.skipIf(!native)("engines() says whether CUDA is compiled in, and nccl only once usable", () => {
    const e = addon!.engines();
    expect(e.cuda).toBe(native!.cuda);
    expect(typeof e.nccl).toBe("boolean");
    if (!native!.loaded()) expect(e.nccl).toBe(false);
    expect(typeof native!.driverVersion()).toBe("number");
    for (const fn of ["load", "deviceCount", "malloc", "commInitRank", "send", "collective", "localReduce"] as const) {
      expect(typeof native![fn]).toBe("function");
    }
  });

  it.skipIf(!native)("device calls fail with an explanation, not a crash, where there is no GPU", () => {
    if (!native!.cuda) {
      expect(() => native!.deviceCount()).toThrow(/built without CUDA/);
      return;
    }
    let n = -1;
    try {
      n = native!.deviceCount();
    } catch (e) {
      expect((e as { engine?: string }).engine).toBe("cuda");
      expect(typeof (e as { code?: number }).code).toBe("number");
      expect((e as Error).message).toMatch(/cudaGetDeviceCount: cuda error \d+: cudaError/);
    }
    expect(n === -1 || n >= 0).toBe(true);
  });

  it.skipIf(!native)("load() reports dlopen's reason for every candidate", () => {
    if (native!.loaded()) return;
    const r = native!.load(["/nonexistent/libnccl.so.2", "libcclab-no-such-library.so.9"]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.tried.map((t) => t.path)).toEqual(["/nonexistent/libnccl.so.2", "libcclab-no-such-library.so.9"]);
    for (const t of r.tried) expect(t.error).toMatch(/cannot open shared object file|No such file/);
  });
});

describe("ncclAvailable and verify without a GPU", () => {
  const diag = ncclDiagnose();

  it.skipIf(diag.ok)("gives a reason and a hint, listing every library path tried", () => {
    const a = ncclAvailable();
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.reason.length).toBeGreaterThan(0);
    expect(a.hint.length).toBeGreaterThan(0);
    if (diag.problems.some((p) => p.what === "nccl")) {
      expect(a.reason).toContain("libnccl.so.2");
      expect(a.reason).toMatch(/tried:\n {2}libnccl\.so\.2: /);
      expect(a.reason).toContain("/usr/local/cuda/lib64/libnccl.so.2: not found");
      expect(a.reason).toMatch(/pip's nvidia-nccl-cu13\/cu12/);
      expect(a.hint).toContain(NCCL_HINTS.nccl);
    }
    if (native && !native.cuda) expect(a.reason).toMatch(/built without CUDA/);
  });

  it.skipIf(!native)("CCLAB_NCCL_LIBRARY=/nonexistent is the only candidate, and the error names it", () => {
    if (native!.loaded()) return;
    process.env.CCLAB_NCCL_LIBRARY = "/nonexistent";
    const a = ncclAvailable();
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.reason).toContain("CCLAB_NCCL_LIBRARY=/nonexistent did not load; tried:\n  /nonexistent: not found");
    expect(a.reason).not.toContain("/usr/local/cuda/lib64");
  });

  it("looks where pip puts NCCL, through the python it is given", () => {
    process.env.CCLAB_PYTHON = "/nonexistent/python3";
    const d = native ? ncclDiagnose() : undefined;
    if (!d || native?.loaded()) return;
    const reason = d.problems.find((p) => p.what === "nccl")?.reason ?? "";
    expect(reason).toContain("/nonexistent/python3 (pip's nvidia-nccl-cu13/cu12): could not ask it");
  });

  it.skipIf(diag.ok)("verifyNccl returns non-zero and prints why and how to get it", async () => {
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const code = await verifyNccl({ backend: "nccl", size: 4, runs: 1 });
      expect(code).toBe(2);
      const text = err.mock.calls.map((c) => c.join(" ")).join("\n");
      expect(text).toContain("cclab verify --backend nccl: cannot run on this machine:");
      expect(text).toContain("to fix:");
      expect(text).toContain("docs/gpu.md");
      expect(text).toBe(explainUnavailable(diag));
    } finally {
      err.mockRestore();
    }
  });

  it.skipIf(diag.ok)(
    "cclab verify --backend nccl -n 2 names each missing piece with how to get it, and exits 2",
    () => {
      const r = spawnSync(process.execPath, ["src/cli/bin.js", "verify", "--backend", "nccl", "-n", "2"], {
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(r.stderr).toContain("cannot run on this machine");
      const names = {
        addon: /native addon/,
        cuda: /built without CUDA/,
        nccl: /libnccl\.so\.2/,
        device: /no (NVIDIA )?GPU/,
      };
      for (const p of diag.problems) {
        expect(r.stderr).toMatch(names[p.what]);
        expect(r.stderr).toContain(`to fix: ${p.hint}`);
      }
      expect(r.status).toBe(2);
    },
  );

  it("cclab verify --backend nccl -n 0 is refused as bad input, GPU or not", () => {
    const r = spawnSync(process.execPath, ["src/cli/bin.js", "verify", "--backend", "nccl", "-n", "0"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).toMatch(/InvalidArgumentError: verify: argument '-n': must be an integer in \[1, 16384\], got 0/);
    expect(r.status).not.toBe(0);
  });

  it("an addon without CUDA still names a missing GPU, from the NVIDIA driver's own list", () => {
    const noCuda = {
      cuda: false,
      cudaRuntimeVersion: 0,
      loaded: () => null,
      load: () => ({ ok: false, tried: [] }),
      driverVersion: () => 0,
    } as unknown as NativeNccl;
    const d = ncclDiagnose({ CCLAB_NCCL_LIBRARY: "/nonexistent/libnccl.so.2" }, noCuda);
    const what = d.problems.map((p) => p.what);
    expect(what[0]).toBe("cuda");
    expect(what.includes("device")).toBe(gpusListed === 0);
    if (gpusListed === 0) {
      expect(d.problems.find((p) => p.what === "device")!.reason).toContain(`${NVIDIA_PROC_GPUS} is absent or empty`);
    }
  });

  it("world sizes: verify's -n, else CCLAB_NCCL_NP, else 2..max(4, GPUs) up to 8", () => {
    expect(ncclSizes(1, {})).toEqual([2, 3, 4]);
    expect(ncclSizes(8, {})).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(ncclSizes(16, {})).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(ncclSizes(1, { CCLAB_NCCL_NP: "2,5" })).toEqual([2, 5]);
    expect(ncclSizes(1, { CCLAB_NCCL_NP: "2,5" }, "3")).toEqual([3]);
    expect(ncclSizes(8, {}, "2,4")).toEqual([2, 4]);
    expect(() => ncclSizes(1, { CCLAB_NCCL_NP: "x" })).toThrow(/CCLAB_NCCL_NP/);
    expect(() => ncclSizes(1, {}, "2,0")).toThrow(/-n/);
  });
});

describe("more ranks than GPUs", () => {
  it("gives each rank its own NCCL_HOSTID and loopback sockets, with a warning", () => {
    const a = sharedGpuEnv({ rank: 0, localSize: 4, size: 4, deviceCount: 1, env: {} });
    const b = sharedGpuEnv({ rank: 3, localSize: 4, size: 4, deviceCount: 1, env: {} });
    expect(a.vars.NCCL_HOSTID).toBeDefined();
    expect(a.vars.NCCL_HOSTID).not.toBe(b.vars.NCCL_HOSTID);
    expect(a.vars.NCCL_SOCKET_IFNAME).toBe("lo");
    expect(a.warning).toMatch(/4 ranks share 1 GPU.*NCCL_HOSTID.*testing only/);
  });
  it("leaves one-GPU-per-rank jobs and the user's own settings alone", () => {
    expect(sharedGpuEnv({ rank: 1, localSize: 2, size: 2, deviceCount: 2, env: {} })).toEqual({ vars: {} });
    const mine = sharedGpuEnv({ rank: 1, localSize: 3, size: 6, deviceCount: 1, env: { NCCL_HOSTID: "x" } });
    expect(mine.vars.NCCL_HOSTID).toBeUndefined();
    expect(mine.vars.NCCL_SOCKET_IFNAME).toBeUndefined(); // across nodes, loopback would be wrong
  });

  it("NCCL 2.30+: NCCL_MULTI_RANK_GPU_ENABLE where it is documented (<= 2 ranks per GPU), NCCL_HOSTID beyond", () => {
    const at = (localSize: number, deviceCount: number, ncclVersion: number | undefined, env = {}) =>
      sharedGpuEnv({ rank: 1, localSize, size: localSize, deviceCount, ncclVersion, env });
    const two = at(2, 1, 23007);
    expect(two).toMatchObject({ path: "multirank", vars: { NCCL_MULTI_RANK_GPU_ENABLE: "1" } });
    expect(two.vars.NCCL_HOSTID).toBeUndefined();
    expect(two.warning).toMatch(/NCCL_MULTI_RANK_GPU_ENABLE=1/);
    expect(at(4, 2, 23000).path).toBe("multirank");
    expect(at(3, 1, 23007)).toMatchObject({ path: "hostid", vars: { NCCL_SOCKET_IFNAME: "lo" } });
    expect(at(3, 1, 23007).vars.NCCL_MULTI_RANK_GPU_ENABLE).toBeUndefined();
    expect(at(2, 1, 22907).path).toBe("hostid"); // 2.29: no such switch
    expect(at(2, 1, undefined).path).toBe("hostid");
    expect(at(2, 1, 23007, { CCLAB_NCCL_SHARED_GPU: "hostid" }).path).toBe("hostid");
    expect(at(3, 1, 22809, { CCLAB_NCCL_SHARED_GPU: "multirank" }).path).toBe("multirank");
    expect(at(2, 1, 23007, { NCCL_HOSTID: "mine" })).toMatchObject({ path: "hostid" });
    expect(at(3, 1, 23007, { NCCL_MULTI_RANK_GPU_ENABLE: "1" })).toMatchObject({ path: "multirank", vars: {} });
    expect(() => at(2, 1, 23007, { CCLAB_NCCL_SHARED_GPU: "both" })).toThrow(/CCLAB_NCCL_SHARED_GPU/);
  });
});

/** A stand-in libnccl.so.2: every symbol cclab needs, answering as NCCL 2.28.9 would before any GPU work. */
function fakeLibrary(dir: string, name: string, opts: { omit?: string; version?: number }): string {
  const required = [
    "ncclCommDestroy",
    "ncclCommAbort",
    "ncclCommGetAsyncError",
    "ncclCommCount",
    "ncclSend",
    "ncclRecv",
    "ncclGroupStart",
    "ncclGroupEnd",
    "ncclAllReduce",
    "ncclBroadcast",
    "ncclReduce",
    "ncclAllGather",
    "ncclReduceScatter",
    "ncclAlltoAll",
  ].filter((s) => s !== opts.omit);
  const src = [
    "#include <string.h>",
    `int ncclGetVersion(int* v) { *v = ${opts.version ?? 22809}; return 0; }`,
    'const char* ncclGetErrorString(int r) { return r == 5 ? "invalid usage (stand-in)" : "stand-in error"; }',
    "int ncclGetUniqueId(void* id) { memset(id, 0xab, 128); return 0; }",
    // ncclGetLastError is one process-wide buffer, as NCCL's: only a WARN changes it.
    "typedef struct { char internal[128]; } ncclUniqueId;",
    "static char lastError[256];",
    "const char* ncclGetLastError(void* comm) { (void)comm; return lastError; }",
    // 3 ranks: fails raising a WARN; any other size: fails without one.
    "int ncclCommInitRank(void** comm, int nranks, ncclUniqueId id, int rank) {",
    '  (void)id; (void)rank; *comm = 0; if (nranks == 3) strcpy(lastError, "stand-in WARN: 3 ranks refused"); return 5;',
    "}",
    ...required.map((s) => `int ${s}(void) { return 5; }`),
  ].join("\n");
  const c = join(dir, `${name}.c`);
  const so = join(dir, `${name}.so.2`);
  writeFileSync(c, src);
  const r = spawnSync("cc", ["-shared", "-fPIC", "-o", so, c], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cc failed: ${r.stderr}`);
  return so;
}

// Order matters: once a library loads, the process keeps it (as dlopen does).
describe.skipIf(!native || !hasCc)("dlopen of libnccl.so.2 (a stand-in compiled here)", () => {
  const dir = mkdtempSync(join(tmpdir(), "cclab-nccl-"));

  it("a library without a required symbol is refused, naming the symbol", () => {
    if (native!.loaded()) return;
    const so = fakeLibrary(dir, "libnoSend", { omit: "ncclSend" });
    const r = native!.load([so]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.tried[0]!.error).toMatch(/lacks ncclSend/);
  });

  it("NCCL older than 2.10 is refused", () => {
    if (native!.loaded()) return;
    const so = fakeLibrary(dir, "libold", { version: 2908 });
    const r = native!.load([so]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.tried[0]!.error).toMatch(/NCCL 2\.9\.8 is too old/);
  });

  it("CCLAB_NCCL_LIBRARY loads it: version, optional entry points, unique id, error strings", () => {
    if (native!.loaded()) return;
    process.env.CCLAB_NCCL_LIBRARY = fakeLibrary(dir, "libnccl", {});
    const d = ncclDiagnose();
    expect(d.library?.versionString).toBe("2.28.9");
    expect(d.library?.path).toBe(process.env.CCLAB_NCCL_LIBRARY);
    expect(d.library?.optional).toMatchObject({ alltoAll: true, gather: false, commInitRankConfig: false });
    expect(d.problems.map((p) => p.what)).not.toContain("nccl");
    const id = native!.getUniqueId();
    expect(id.length).toBe(128);
    expect([...id].every((b) => b === 0xab)).toBe(true);
    expect(native!.errorString(5)).toBe("invalid usage (stand-in)");
    expect(addon!.engines().nccl).toBe(native!.cuda);
    if (native!.cuda) expect(addon!.engines().ncclVersion).toBe("2.28.9");
    // Loaded once: later candidates are not tried again.
    expect(native!.load(["/elsewhere/libnccl.so.2"])).toMatchObject({ ok: true, versionString: "2.28.9" });
  });

  it("an NCCL error carries ncclGetLastError's text only where the failing call raised it", (ctx) => {
    if (!native!.cuda || !native!.loaded()?.path.startsWith(dir)) ctx.skip(); // needs the stand-in loaded above
    const id = new Uint8Array(128);
    expect(() => native!.commInitRank(3, id, 0, true)).toThrow(
      /^ncclCommInitRank: nccl error 5: invalid usage \(stand-in\) \(stand-in WARN: 3 ranks refused\)$/,
    );
    // The WARN is still in NCCL's buffer: a later failure that raised none must not carry it.
    expect(() => native!.commInitRank(2, id, 0, true)).toThrow(
      /^ncclCommInitRank: nccl error 5: invalid usage \(stand-in\)$/,
    );
  });
});

it("the GPU session's scripts parse (a syntax error would cost a device call)", () => {
  for (const f of ["test/gpu/device-prep.sh", "test/gpu/device-run.sh"]) {
    const r = spawnSync("bash", ["-n", f], { encoding: "utf8" });
    expect(r.status, `${f}: ${r.stderr}`).toBe(0);
  }
});

describe.skipIf(!hasCmake || !existsSync("/usr/local/cuda/bin/nvcc"))("CMake finds the CUDA toolkit", () => {
  it("in /usr/local/cuda/bin when nvcc is not on PATH", { timeout: 120_000 }, (ctx) => {
    const which = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).stdout.trim();
    const dirs = [
      ...new Set(
        ["cmake", "c++", "make", "node"]
          .map(which)
          .filter(Boolean)
          .map((p) => dirname(p)),
      ),
    ];
    if (dirs.some((d) => existsSync(join(d, "nvcc")))) ctx.skip(); // nvcc sits beside the tools: nothing to find
    const out = mkdtempSync(join(tmpdir(), "cclab-nvcc-"));
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: dirs.join(delimiter) };
    for (const k of ["CUDACXX", "CUDA_PATH", "CUDA_HOME", "CCLAB_NO_CUDA"]) delete env[k];
    const r = spawnSync("cmake", ["-S", "native", "-B", out, "-DCCLAB_WITH_MPI=OFF"], {
      encoding: "utf8",
      env,
      timeout: 110_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/engines compiled in: .*cuda \d+\.\d+/);
  });
});

describe.skipIf(!hasCmake || !hasCc)("an addon built without CUDA", () => {
  it("builds, loads, and says it has no GPU support", { timeout: 300_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), "cclab-nocuda-"));
    const cmakeJs = join("node_modules", "cmake-js", "bin", "cmake-js");
    const r = spawnSync(
      process.execPath,
      [cmakeJs, "rebuild", "--directory", "native", "--out", out, "--CDCCLAB_WITH_MPI=OFF"],
      {
        encoding: "utf8",
        env: { ...process.env, CCLAB_NO_CUDA: "1", npm_config_nodedir: "" },
        timeout: 280_000,
      },
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/the nccl engine is built without GPU support/);
    const l = tryLoad([join(out, "Release", "cclab.node")]);
    expect(l.ok).toBe(true);
    if (!l.ok) return;
    const n = l.addon.nccl as NativeNccl;
    expect(n.cuda).toBe(false);
    expect(l.addon.engines()).toMatchObject({ cuda: false, nccl: false, mpi: false });
    expect(() => n.deviceCount()).toThrow(/built without CUDA.*npm run build:native/);
    expect(() => n.commInitRank(2, new Uint8Array(128), 0, false)).toThrow(/built without CUDA/);
    const d = ncclDiagnose({}, n);
    expect(d.problems[0]).toMatchObject({ what: "cuda", hint: NCCL_HINTS.cuda });
    expect(d.problems[0]!.reason).toMatch(/built without CUDA/);
  });
});

describe("the backend on the fake engine (no GPU)", () => {
  for (const [name, fn] of P2P_CASES) {
    it(`${name} (4 ranks, non-blocking enqueue)`, async () => {
      await runFakeRanks(4, (c) => fn(c), { inProgressPolls: 2 });
    });
  }

  it("a collective's whole plan is enqueued stream-ordered: one group per step, no host wait until synchronize", async () => {
    const n = 4;
    await runFakeRanks(n, async (c, fake) => {
      const input = Array.from({ length: 1000 }, (_, i) => c.rank * 1000 + i);
      const buf = await toDevice(c, tensor("float32", input));
      // Every way the host can wait on the device, counted from here on.
      const waits: string[] = [];
      let groups = 0;
      const spy = fake as unknown as Record<string, (...a: unknown[]) => unknown>;
      for (const m of ["streamSynchronize", "streamQuery", "eventQuery", "eventSynchronize"]) {
        const f = spy[m];
        if (typeof f !== "function") continue;
        spy[m] = (...a: unknown[]) => {
          waits.push(m);
          return f.apply(fake, a);
        };
      }
      const groupEnd = fake.groupEnd.bind(fake);
      fake.groupEnd = () => {
        groups++;
        return groupEnd();
      };
      await allReduce(c, buf, { algorithm: "ring" });
      expect(waits).toEqual([]);
      expect(groups).toBe(2 * (n - 1));
      await c.synchronize();
      const got = await readDevice(buf);
      const want = input.map((_, i) => (1000 * n * (n - 1)) / 2 + n * i);
      expect([...got]).toEqual(want);
    });
  });

  it(TIMEOUT_CASE[0], async () => {
    const aborts: string[] = [];
    await runFakeRanks(
      3,
      async (c, fake) => {
        const before = fake.aborted.length;
        await TIMEOUT_CASE[1](c, (ms) => {
          c.device.timeoutMs = ms;
        });
        if (c.rank === 0) expect(fake.aborted.length).toBeGreaterThan(before);
      },
      { onAbort: (rank, e) => aborts.push(`${rank}: ${e.name}`) },
    );
    expect(aborts).toEqual(["0: TimeoutError"]);
  });

  it("an asynchronous NCCL error aborts the communicator and names rank and operation", async () => {
    await runFakeRanks(2, async (c, fake) => {
      if (c.rank !== 1) return;
      const x = await toDevice(c, tensor("int32", [1]));
      await c.send(view(x), 0); // nobody receives: it stays queued
      fake.injectAsyncError(c.handle, 6, "peer 0 went away");
      let err: unknown;
      try {
        await c.synchronize();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EngineError);
      const e = err as EngineError;
      expect(e.engine).toBe("nccl");
      expect(e.code).toBe(6);
      expect(e.message).toMatch(
        /^rank 1: send to peer 0 \(asynchronous error; ncclCommAbort called\): nccl error 6: .*peer 0 went away/,
      );
      expect(c.aborted).toBe(e);
      await expect(c.recv(view(x), 0)).rejects.toThrow(/aborted/);
    });
  });

  it("a peer that exits while this rank still receives from it: a remote error that says so", async () => {
    await runFakeRanks(2, async (c) => {
      if (c.rank === 1) return; // done at once: its process lets go of the communicator
      const r = c.alloc("int32", 1);
      let err: unknown;
      try {
        await c.recv(view(r), 1, { label: "from a rank that left" });
        await c.synchronize();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe(6);
      expect((err as Error).message).toMatch(
        /^rank 0: recv from peer 1 \(from a rank that left\) \(asynchronous error; ncclCommAbort called\): nccl error 6: .*Connection closed by remote peer.*a peer rank's process exited or closed its connection/,
      );
    });
  });

  it("destroy finalizes: a send still queued when its rank is done reaches the peer (an abort would drop it)", async () => {
    const [, one] = await runFakeRanks(2, async (c, fake) => {
      const store = c.proc.store;
      if (c.rank === 1) {
        await c.send(view(await toDevice(c, tensor("int32", [41, 42]))), 0); // enqueued, not delivered
        c.destroy();
        await store.set(ownKey(1, "test/destroyed"), "1");
        return { fake, handle: c.handle };
      }
      await store.get(ownKey(1, "test/destroyed"));
      const r = c.alloc("int32", 2);
      await c.recv(view(r), 1);
      expect([...(await readDevice(view(r)))]).toEqual([41, 42]);
      return undefined;
    });
    expect(one!.fake.finalized).toEqual([one!.handle]);
    expect(one!.fake.destroyed).toEqual([one!.handle]);
    expect(one!.fake.aborted).toEqual([]);
  });

  it("process exit: a clean one lets a finalizing communicator finish, a failing one aborts it at once", async () => {
    for (const failing of [false, true]) {
      const [, one] = await runFakeRanks(2, async (c, fake) => {
        const store = c.proc.store;
        const x = await toDevice(c, tensor("int32", [c.rank + 7]));
        if (c.rank === 0) {
          if (!failing) await c.recv(view(x), 1); // posted before rank 1 exits
          await store.set(ownKey(0, "test/posted"), "1");
          await store.get(ownKey(1, "test/exited"));
          if (!failing) expect([...(await readDevice(view(x)))]).toEqual([8]);
          return undefined;
        }
        await store.get(ownKey(0, "test/posted"));
        await c.send(view(x), 0); // enqueued; delivered only if rank 0 receives
        c.destroy();
        c.device.close(failing);
        await store.set(ownKey(1, "test/exited"), "1");
        return { fake, handle: c.handle };
      });
      expect(one!.fake.finalized).toEqual([one!.handle]);
      expect(one!.fake.destroyed).toEqual(failing ? [] : [one!.handle]);
      expect(one!.fake.aborted).toEqual(failing ? [one!.handle] : []);
    }
  });

  it("a communicator still initialising is aborted when its creation times out", async () => {
    const world = new FakeNcclWorld();
    const store = new MemoryStore(undefined, 10_000);
    const natives = [world.native(), world.native()];
    // A 3-rank communicator whose rank 2 never comes.
    const settled = await Promise.allSettled(
      natives.map((native, rank) => initNccl({ rank, size: 3, store, native, timeoutMs: 300 })),
    );
    for (const [rank, r] of settled.entries()) {
      expect(r.status).toBe("rejected");
      const e = (r as PromiseRejectedResult).reason;
      expect(e).toBeInstanceOf(TimeoutError);
      expect((e as Error).message).toMatch(
        new RegExp(`^rank ${rank}: ncclCommInitRank \\(3 ranks, nccl/world\\) did not complete within 0\\.3 s`),
      );
    }
    expect(natives.map((n) => n.aborted.length)).toEqual([1, 1]);
  });

  it("NCCL's refusal of ranks sharing a GPU says what to do about it", async () => {
    const message =
      "Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.";
    await expect(runFakeRanks(2, async () => {}, { initError: () => ({ code: 5, message }) })).rejects.toThrow(
      /^rank \d: ncclCommInitRank .*nccl error 5: invalid usage \(Multiple Ranks are using the same GPU.*\); ranks of this communicator share a GPU: cclab run handles that \(per-rank NCCL_HOSTID, or NCCL_MULTI_RANK_GPU_ENABLE=1/,
    );
  });

  it("completion events are reused, not one leaked per NCCL group", async () => {
    const created = await runFakeRanks(2, async (c, fake) => {
      const peer = 1 - c.rank;
      const a = await toDevice(c, tensor("int32", [c.rank]));
      const b = c.alloc("int32", 1);
      const before = fake.eventsCreated;
      let works: ReturnType<typeof c.isend>[] = [];
      for (let i = 0; i < 200; i++) {
        works = [c.isend(view(a), peer), c.irecv(view(b), peer)];
        for (const w of works) await w.wait();
        await c.group([
          { kind: "send", peer, view: view(a) },
          { kind: "recv", peer, view: view(b) },
        ]);
        await c.synchronize();
      }
      expect(works.every((w) => w.test())).toBe(true);
      expect([...(await readDevice(view(b)))]).toEqual([peer]);
      return fake.eventsCreated - before;
    });
    for (const n of created) expect(n).toBeLessThan(24);
  });

  it("no file under src/ imports the NCCL test double (or anything else under test/)", () => {
    // import ... from "…", import("…"), export ... from "…" naming test/ or the fake.
    const IMPORTS_TEST = /\b(from|import)\s*\(?\s*["'][^"']*(nccl-fake|(^|\/)test\/)[^"']*["']/;
    expect(IMPORTS_TEST.test('import { runFakeRanks } from "../../../test/support/nccl-fake.js";')).toBe(true);
    const offenders: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.[cm]?[jt]s$/.test(e.name) && IMPORTS_TEST.test(readFileSync(p, "utf8"))) offenders.push(p);
      }
    };
    walk("src");
    expect(offenders).toEqual([]);
  });

  it("local operations wait for a non-blocking enqueue instead of overtaking it", async () => {
    await runFakeRanks(
      2,
      async (c) => {
        const a = await toDevice(c, tensor("float64", [c.rank]));
        const b = c.alloc("float64", 1);
        const p = c.group([
          { kind: "send", peer: 1 - c.rank, view: view(a) },
          { kind: "recv", peer: 1 - c.rank, view: view(b) },
        ]);
        for (let i = 0; i < 10 && !c.device.busy(); i++) await Promise.resolve();
        expect(c.device.busy()).toBe(true);
        expect(() => c.copy(view(a), view(b))).toThrow(InvalidArgumentError);
        await p;
        c.copy(view(a), view(b));
        expect([...(await readDevice(view(a)))]).toEqual([1 - c.rank]);
      },
      { inProgressPolls: 3 },
    );
  });

  it("writeDevice checks element type and count", async () => {
    await runFakeRanks(1, async (c) => {
      const b = c.alloc("float32", 2);
      await expect(writeDevice(view(b), new Float64Array(2))).rejects.toThrow(/Float32Array/);
      await expect(writeDevice(view(b), new Float32Array(3))).rejects.toThrow(/need 2 elements/);
    });
  });

  for (const [n, polls, nccl228] of [
    [2, 0, true],
    [3, 2, false],
    [4, 1, true],
  ] as const) {
    it(`every algorithm agrees with NCCL's builtin and the oracle: n=${n}${nccl228 ? "" : ", NCCL < 2.28 (grouped send/recv)"}`, async () => {
      const results = await runFakeRanks(
        n,
        async (c) => {
          const out = [];
          for (const alg of allAlgorithms()) out.push(await runNcclAlgorithm(c, c.builtin, alg, 10, 1234 + n));
          return out;
        },
        { inProgressPolls: polls, nccl228 },
      );
      const failures = results.flat().flatMap((r) => r.failures);
      expect(failures, failures.slice(0, 5).join("\n")).toEqual([]);
      expect(results[0]!.length).toBe(allAlgorithms().length);
      expect(results[0]!.reduce((a, r) => a + r.builtinCases, 0)).toBeGreaterThan(0);
    });
  }
});
