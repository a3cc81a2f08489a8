/**
 * The fault catalogue: one row per fault or bad input (issue 14's numbered items and more), the
 * backends it applies to, what every run of it must end with (exit code, error class, the words
 * the output must name: rank, operation, argument), its time bound, and (checked by the runner
 * for every row) that no process of the job survives it. catalogue.test.ts runs it in `npm test`;
 * `npm run docs:faults` runs it and writes docs/faults.md with each row's measured time.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { mpirunCommand } from "../../src/backends/mpi/index.js";
import { findJobSockets, socketBase } from "../../src/runtime/socket-dir.js";
import { type Backend, CLI, cclabRun, fakePeer, freePort, gone, type Outcome, SCENARIO, start } from "./runner.js";

export interface Expect {
  /** Exit code of the process the row watches (cclab run, mpirun, a rank). */
  readonly exit: number;
  /** The error class the output must show. */
  readonly error?: string;
  /** Words the output must contain: the rank, the operation, the argument. */
  readonly names: readonly string[];
  /** Lines `ok <scenario>` required: every rank's data checked right (exit-0 rows). */
  readonly okLines?: number;
}

export interface Row {
  readonly id: string;
  /** The issue's item: issue 14's ('1', '2(a)', ...), issue 27's ('27.1', ...), or '' for rows beyond their lists. */
  readonly item: string;
  readonly fault: string;
  readonly backends: readonly Backend[];
  /** Seconds from launch to the end of the job (loaded 2-core machine; docs/faults.md has measured times). */
  readonly boundS: number;
  readonly expect: Expect | ((b: Backend) => Expect);
  readonly run: (backend: Backend, marker: string) => Promise<Outcome>;
  /** Why this row does not run here (it still documents the fault). */
  readonly skip?: string;
}

/** When the runner kills a job that hangs (CCLAB_FAULTS_HARD_MS to change it, e.g. to show old code hanging quickly). */
const HARD_MS = Number(process.env.CCLAB_FAULTS_HARD_MS) || 90_000;

/**
 * Rows whose fault is caught by code every backend shares (the CLI's parsing, the launcher's
 * checks, the front API's arguments, src/checks.ts): they run on sim only.
 */
const SAME_CODE: readonly Backend[] = ["sim"];

interface JobSpec {
  readonly id: string;
  readonly item: string;
  readonly fault: string;
  readonly backends?: readonly Backend[];
  readonly n?: number | string;
  readonly scenario?: string;
  readonly args?: readonly string[];
  readonly flags?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly boundS?: number | ((b: Backend) => number);
  readonly expect: Expect | ((b: Backend) => Expect);
  readonly skip?: string;
}

/** A row that is one `cclab run` of a scenario. */
function job(j: JobSpec): Row {
  const backends = j.backends ?? ["sim", "mpi"];
  return {
    id: j.id,
    item: j.item,
    fault: j.fault,
    backends,
    boundS: typeof j.boundS === "number" ? j.boundS : (j.boundS?.("mpi") ?? (backends.includes("mpi") ? 20 : 8)),
    expect: j.expect,
    skip: j.skip,
    run: (backend, marker) =>
      cclabRun(backend, j.n ?? 2, j.flags ?? [], j.scenario ?? "allreduce", j.args ?? [], j.env ?? {}, marker).done(
        HARD_MS,
      ),
  };
}

const fails = (error: string, ...names: string[]): Expect => ({ exit: 1, error, names });
const ok = (n: number, ...names: string[]): Expect => ({ exit: 0, names, okLines: n });
const both = (sim: Expect, mpi: Expect) => (b: Backend) => (b === "sim" ? sim : mpi);

/** mpirun's own command line for `-np n`, as the mpi backend builds it (its own session directory included). */
const mpirun = (n: number): string[] => mpirunCommand(n, []).args;

/** A rank started by hand with torchrun's variables (no launcher), for the handshake rows. */
function torchrunRank(rank: number, world: number, port: number, marker: string, flags: string[] = []) {
  return start(
    process.execPath,
    [CLI, "run", "-n", String(world), "--backend", "mpi", "--timeout", "2", ...flags, SCENARIO, "allreduce"],
    {
      RANK: String(rank),
      WORLD_SIZE: String(world),
      MASTER_ADDR: "127.0.0.1",
      MASTER_PORT: String(port),
      CCLAB_STORE_TOKEN: "0123456789abcdef0123456789abcdef",
      // Joining has its own deadline (at least 30 s by default); these rows show it expiring.
      CCLAB_JOIN_TIMEOUT: "2",
    },
    marker,
  );
}

/** A rank started by hand with only torchrun's variables (no launcher, no token unless given), at ordinary timeouts. */
function plainRank(rank: number, world: number, port: number, marker: string, env: NodeJS.ProcessEnv = {}) {
  return start(
    process.execPath,
    [CLI, "run", "-n", String(world), "--backend", "mpi", "--timeout", "20", SCENARIO, "allreduce"],
    { RANK: String(rank), WORLD_SIZE: String(world), MASTER_ADDR: "127.0.0.1", MASTER_PORT: String(port), ...env },
    marker,
  );
}

/** Polls (every 50 ms, up to ms) until `ready()` holds: there is no event for another process's listen. */
async function until(ready: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** A TCP connection to 127.0.0.1:port, or the error code that refused it. */
function tcp(port: number): Promise<Socket | string> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1", () => resolve(s));
    s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/**
 * A row that hands cclab a file it wrote (an MSCCL program, an algorithm file): `cclab <args...>
 * FILE`, with FILE a fresh temporary file holding `content`.
 */
function fileRow(r: {
  id: string;
  item: string;
  fault: string;
  name: string;
  content: () => string;
  args: readonly string[];
  after?: readonly string[];
  boundS?: number;
  backends?: readonly Backend[];
  expect: Expect;
}): Row {
  return {
    id: r.id,
    item: r.item,
    fault: r.fault,
    backends: r.backends ?? SAME_CODE,
    boundS: r.boundS ?? 8,
    expect: r.expect,
    run: async (_b, marker) => {
      const dir = mkdtempSync(join(tmpdir(), "cclab-row-"));
      const file = join(dir, r.name);
      writeFileSync(file, r.content());
      try {
        return await start(process.execPath, [CLI, ...r.args, file, ...(r.after ?? [])], {}, marker).done(HARD_MS);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A two-GPU MSCCL all-reduce header with `attrs` in place of the defaults named in them. */
function mscclXml(attrs: Record<string, string>, gpu = 'i_chunks="1" o_chunks="0" s_chunks="0"'): string {
  const a = {
    name: "x",
    proto: "Simple",
    nchannels: "1",
    nchunksperloop: "2",
    ngpus: "2",
    coll: "allreduce",
    inplace: "1",
    ...attrs,
  };
  const head = Object.entries(a)
    .map(([k, v]) => `${k}="${v}"`)
    .join(" ");
  return `<algo ${head}>\n<gpu id="0" ${gpu}></gpu>\n<gpu id="1" ${gpu}></gpu>\n</algo>\n`;
}

/** Who runs the rows: only root can try the store's socket as another user. */
const ROOT_USER = typeof process.getuid === "function" && process.getuid() === 0;

/** A directory list for PATH with no mpirun on it (node is started by its full path). */
function pathWithoutMpirun(): string {
  return (process.env.PATH ?? "")
    .split(":")
    .filter((d) => spawnSync("test", ["-x", `${d}/mpirun`]).status !== 0)
    .join(":");
}

/** A `cclab model` call in a 1 GiB heap. */
function modelRow(m: {
  id: string;
  item: string;
  fault: string;
  args: readonly string[];
  boundS: number;
  expect: Expect;
}): Row {
  return {
    id: m.id,
    item: m.item,
    fault: m.fault,
    backends: SAME_CODE,
    boundS: m.boundS,
    expect: m.expect,
    run: (_b, marker) =>
      start(process.execPath, ["--max-old-space-size=1024", CLI, "model", ...m.args, "--no-progress"], {}, marker).done(
        HARD_MS,
      ),
  };
}

export const ROWS: readonly Row[] = [
  // ---- the baseline: right data, exit 0, nothing left ----
  job({
    id: "baseline",
    item: "",
    fault: "none: a ring all-reduce, every element checked against the oracle",
    n: 3,
    expect: ok(3),
  }),

  // ---- 1: the launcher kills only its own children ----
  {
    id: "victim-pid-in-store",
    item: "1",
    fault:
      "a rank writes another process's pid (and a negative process group) where the old launcher read the pids it SIGKILLed at the end of every job",
    backends: ["mpi"],
    boundS: 20,
    expect: { exit: 0, names: ["refused", "rank 1 may write only keys under rank/1/, not 'pid/1'"], okLines: 2 },
    run: async (backend, marker) => {
      // The victim is not part of the job (no marker): it must outlive it.
      const victim = start("sleep", ["300"], {}, `victim-${marker}`);
      const pid = victim.child.pid!;
      const o = await cclabRun(backend, 2, [], "pid-keys", [String(pid)], {}, marker).done(HARD_MS);
      const alive = victim.child.exitCode === null && victim.child.signalCode === null;
      victim.child.kill("SIGKILL");
      return { ...o, out: `${o.out}${alive ? "" : `\nVICTIM KILLED: pid ${pid}\n`}`, code: alive ? o.code : 99 };
    },
  },

  // ---- 2: wrong data with exit 0 ----
  job({
    id: "split-halves",
    item: "2(a)",
    fault: "ranks 0,1 call split([0,1]) while ranks 2,3 call split([2,3]), then all-reduce",
    n: 4,
    scenario: "split-halves",
    expect: fails("InvalidArgumentError", "split", "argument 'ranks'", "passed [2, 3] but rank", "passed [0, 1]"),
  }),
  job({
    id: "split-order",
    item: "2(a)",
    fault: "rank 0 calls split([1,0]), the others split([0,1])",
    n: 4,
    scenario: "split-order",
    expect: fails("InvalidArgumentError", "split", "argument 'ranks'", "passed [1, 0]"),
  }),
  job({
    id: "two-in-flight",
    item: "2(b)",
    fault:
      "two ring all-reduces in flight on one communicator (the front API runs them one after the other, in issue order)",
    n: 4,
    scenario: "two-in-flight",
    expect: ok(4),
  }),
  job({
    id: "detached-buffer",
    item: "2(c)",
    fault: "rank 1's buffer was transferred away (detached ArrayBuffer) before all-reduce",
    scenario: "detached",
    expect: fails("InvalidArgumentError", "rank 1", "allReduce", "argument 'buf'", "detached"),
  }),
  job({
    id: "op-mismatch",
    item: "2(d)",
    fault: "rank 1 all-reduces with max, the others with sum (no --check)",
    n: 4,
    scenario: "op-mismatch",
    expect: both(
      fails("MismatchError", "rank 1", "allreduce/ring", "different collective calls: op ("),
      fails("MismatchError", "rank 1", "recv from peer", "different collective call: op (sender: "),
    ),
  }),
  job({
    id: "root-mismatch",
    item: "2(d)",
    fault: "rank 1 broadcasts from root 1, the others from root 0 (no --check)",
    n: 2,
    scenario: "root-mismatch",
    expect: both(
      fails("DeadlockError", "rank 0", "rank 1", "broadcast/binomial"),
      // Both ranks send and neither receives: whichever checks first names the other.
      fails("MismatchError", "never received a message from rank", "2 x float32"),
    ),
  }),
  job({
    id: "send-to-self",
    item: "2(d)",
    fault: "a blocking send to this rank itself, no receive posted",
    scenario: "self-send",
    expect: fails("DeadlockError", "rank 0", "send(to 0", "to myself"),
  }),
  job({
    id: "exit-0-mid-job",
    item: "2(e), 4",
    fault: "rank 1 calls process.exit(0) while rank 0 waits for its message",
    scenario: "exit-mid",
    args: ["0"],
    flags: ["--timeout", "60"],
    boundS: 15,
    expect: both(fails("InvalidArgumentError", "rank 1 failed first", "process.exit(0)", "argument 'main'"), {
      exit: 1,
      names: ["rank 1 failed first", "process.exit(0)", "before its main returned"],
    }),
  }),
  job({
    id: "exit-1-mid-job",
    item: "4",
    fault: "rank 1 calls process.exit(1) while rank 0 waits for its message",
    scenario: "exit-mid",
    args: ["1"],
    flags: ["--timeout", "60"],
    boundS: 15,
    // On mpi the exit code changes nothing: exit-0-mid-job holds that path.
    backends: ["sim"],
    expect: both(fails("InvalidArgumentError", "rank 1 failed first", "process.exit(1)"), {
      exit: 1,
      names: ["rank 1 failed first", "process.exit(1)", "before its main returned"],
    }),
  }),

  // ---- 3: hangs ----
  {
    id: "plain-mpirun",
    item: "3(a)",
    fault: "`mpirun -np 2 node cclab run -n 2 --backend mpi prog`: ranks started by a plain mpirun",
    backends: ["mpi"],
    boundS: 20,
    expect: ok(2),
    run: (_b, marker) =>
      start(
        "mpirun",
        [...mpirun(2), process.execPath, CLI, "run", "-n", "2", "--backend", "mpi", SCENARIO, "allreduce"],
        {},
        marker,
      ).done(HARD_MS),
  },
  {
    id: "plain-mpirun-hosted-store",
    item: "3(a)",
    fault: "plain mpirun with MASTER_PORT set and --check: rank 0 hosts the store while it blocks in MPI_Init",
    backends: ["mpi"],
    boundS: 20,
    expect: ok(2),
    run: async (_b, marker) => {
      const port = await freePort();
      return start(
        "mpirun",
        [
          ...mpirun(2),
          "-x",
          "MASTER_PORT",
          process.execPath,
          CLI,
          "run",
          "-n",
          "2",
          "--check",
          "--backend",
          "mpi",
        ].concat([SCENARIO, "allreduce"]),
        { MASTER_PORT: String(port) },
        marker,
      ).done(HARD_MS);
    },
  },
  {
    id: "stopped-launcher",
    item: "3(b)",
    fault: "the launcher is frozen (SIGSTOP) while its ranks run, --timeout 3",
    backends: ["mpi"],
    boundS: 12,
    expect: { exit: 1, names: ["has been stopped for", "past the job's timeout", "cclab run itself was stopped"] },
    run: async (backend, marker) => {
      const s = cclabRun(backend, 2, ["--timeout", "3"], "ready-ring", [], {}, marker);
      await s.waitFor("ready on rank", 2);
      const t0 = Date.now();
      process.kill(s.child.pid!, "SIGSTOP");
      // Every rank (and mpirun) must end while the launcher stays stopped.
      const left = await gone(marker, 20_000, [s.child.pid!]);
      const seconds = (Date.now() - t0) / 1000;
      process.kill(s.child.pid!, "SIGCONT");
      const o = await s.done(HARD_MS);
      return { ...o, seconds, survivors: [...left, ...o.survivors] };
    },
  },
  {
    id: "silent-peer",
    item: "3(c)",
    fault: "MASTER_PORT is a server that accepts the connection and never answers (rank started torchrun-style)",
    backends: ["mpi"],
    boundS: 10,
    expect: { exit: 1, error: "TimeoutError", names: ["rank 1", "init", "did not answer AUTH within 2 s"] },
    run: async (_b, marker) => {
      const peer = await fakePeer();
      try {
        return await torchrunRank(1, 2, peer.port, marker).done(HARD_MS);
      } finally {
        await peer.close();
      }
    },
  },
  {
    id: "no-master",
    item: "3(c)",
    fault: "nothing listens at MASTER_ADDR:MASTER_PORT (rank started torchrun-style)",
    backends: ["mpi"],
    boundS: 10,
    expect: {
      exit: 1,
      error: "TimeoutError",
      names: ["rank 1", "init", "nothing accepted a connection", "within 2 s"],
    },
    run: async (_b, marker) => torchrunRank(1, 2, await freePort(), marker).done(HARD_MS),
  },
  {
    id: "rendezvous-waits",
    item: "3(a)",
    fault: "rank 0 of 2 started torchrun-style, rank 1 never comes",
    backends: ["mpi"],
    boundS: 10,
    expect: {
      exit: 1,
      error: "TimeoutError",
      names: ["rank 0", "waiting for rank 1 to join the store", "(1 of 2 ranks arrived)", "timed out after 2 s"],
    },
    run: async (_b, marker) => torchrunRank(0, 2, await freePort(), marker).done(HARD_MS),
  },

  // ---- 4: dead ranks on mpi ----
  job({
    id: "kill-mid-communication",
    item: "4",
    fault: "rank 1 SIGKILLs itself at its 2nd operation (`--fault kill:rank=1,at=2`); sim: it throws",
    scenario: "ring",
    args: ["3"],
    flags: ["--fault", "kill:rank=1,at=2", "--timeout", "60"],
    boundS: 15,
    expect: both(fails("InjectedFault", "rank 1 failed first", "killed at its operation 2"), {
      exit: 1,
      names: ["rank 1 failed first", "died"],
    }),
  }),
  job({
    id: "killed-at-start-up",
    item: "4",
    fault: "rank 1 is SIGKILLed at start-up, while loading its program (mpirun then stops rank 0)",
    backends: ["mpi"],
    scenario: "die-at-load",
    env: { CCLAB_DIE_AT_LOAD: "1" },
    flags: ["--timeout", "60"],
    boundS: 15,
    expect: { exit: 1, names: ["rank 1 failed first", "died"] },
  }),

  // ---- 5: timeouts past 2^31-1 ms ----
  job({
    id: "timeout-35-days",
    item: "5",
    fault: "`--timeout 3000000` (35 days): every blocking call used to time out after 1 ms",
    scenario: "ring",
    args: ["3"],
    flags: ["--timeout", "3000000"],
    expect: { exit: 0, names: [], okLines: 2 },
  }),
  job({
    id: "timeout-infinity",
    item: "5",
    fault: "`--timeout Infinity`",
    flags: ["--timeout", "Infinity"],
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "run", "argument '--timeout'", "no 'wait forever'"),
  }),
  job({
    id: "cclab-timeout-infinity",
    item: "5",
    fault: "CCLAB_TIMEOUT=Infinity",
    env: { CCLAB_TIMEOUT: "Infinity" },
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "argument 'CCLAB_TIMEOUT'", "finite number of seconds"),
  }),

  // ---- 6: orphans ----
  {
    id: "launcher-killed",
    item: "6",
    fault: "`kill -9` of the launcher while its ranks compute (a CPU-bound loop)",
    backends: ["sim", "mpi"],
    boundS: 10,
    expect: { exit: 137, names: [] },
    run: async (backend, marker) => {
      const s = cclabRun(backend, 2, [], "compute", [], {}, marker);
      // Sim ranks share one thread: the first to compute keeps the others from starting.
      await s.waitFor("computing on rank", backend === "sim" ? 1 : 2);
      const t0 = Date.now();
      process.kill(s.child.pid!, "SIGKILL");
      // Every process of the job must go on its own (the runner reaps leftovers only after counting them).
      const left = await gone(marker, 10_000);
      const seconds = (Date.now() - t0) / 1000;
      const o = await s.done(HARD_MS);
      return { ...o, code: o.signal === "SIGKILL" ? 137 : o.code, seconds, survivors: [...left, ...o.survivors] };
    },
  },
  {
    id: "launcher-interrupted",
    item: "6",
    fault: "Ctrl-C (SIGINT) to the launcher while its ranks compute",
    backends: ["mpi"],
    boundS: 15,
    expect: { exit: 1, names: ["cclab run was interrupted (SIGINT)"] },
    run: async (backend, marker) => {
      const s = cclabRun(backend, 2, [], "compute", [], {}, marker);
      await s.waitFor("computing on rank", 2);
      process.kill(s.child.pid!, "SIGINT");
      return s.done(HARD_MS);
    },
  },

  // ---- 7: the store (hostile local processes, forged identities) ----
  job({
    id: "write-other-rank-key",
    item: "7",
    fault: "rank 1 writes rank 0's key (`rank/0/done`)",
    backends: ["mpi"],
    scenario: "write-other",
    expect: fails("InvalidArgumentError", "rank 1", "store set rank/0/done", "may write only keys under rank/1/"),
  }),
  job({
    id: "forged-abort",
    item: "7",
    fault: "rank 1 publishes an abort claiming to be rank 0",
    backends: ["mpi"],
    scenario: "forge-abort",
    expect: { exit: 1, names: ["rank 1 failed first", "forged by rank 1"] },
  }),
  job({
    id: "impostor-rank",
    item: "7",
    fault: "rank 1 opens a second connection claiming to be (live) rank 0",
    backends: ["mpi"],
    scenario: "impostor",
    expect: fails("InvalidArgumentError", "rank 1 failed first", "argument 'RANK'", "rank 0 already joined this job"),
  }),
  job({
    id: "derived-token",
    item: "7",
    fault: "a client presents the token older versions derived from the job id (sha256 of a Slurm job id)",
    backends: ["mpi"],
    scenario: "derived-token",
    env: { SLURM_JOB_ID: "1234" },
    expect: fails("InvalidArgumentError", "rank 1 failed first", "argument 'CCLAB_STORE_TOKEN'", "wrong token"),
  }),
  job({
    id: "master-addr-all-interfaces",
    item: "7",
    fault: "`--master-addr 0.0.0.0` on one node: the store must stay on loopback",
    backends: ["mpi"],
    n: 2,
    scenario: "bind-check",
    flags: ["--master-addr", "0.0.0.0"],
    expect: { exit: 0, names: ["store on 127.0.0.1, unreachable on"], okLines: 2 },
  }),

  job({
    id: "store-flood",
    item: "7",
    fault:
      "a rank opens 40 connections that never authenticate, sends an oversized length, a wrong token and an unknown op",
    backends: ["mpi"],
    scenario: "store-flood",
    boundS: 25,
    expect: {
      exit: 0,
      names: ["flood: 24 of 40 evicted at once", "over the limit of 1024 before AUTH", "wrong token", "unknown op 99"],
      okLines: 2,
    },
  }),

  // ---- 8: crashes without a rank named ----
  job({
    id: "stray-throw",
    item: "8",
    fault: "rank 1 throws in a timer callback while the others wait",
    scenario: "stray-throw",
    boundS: 15,
    expect: both(fails("InvalidArgumentError", "rank 1 failed first", "uncaught exception in a callback", "boom"), {
      exit: 1,
      names: ["rank 1 failed first", "boom in a stray callback"],
    }),
  }),
  job({
    id: "stray-rejection",
    item: "8",
    fault: "rank 1 leaves a rejected promise unhandled while the others wait",
    scenario: "stray-rejection",
    boundS: 15,
    // On mpi the worker handles both the same way: stray-throw holds that path.
    backends: ["sim"],
    expect: both(fails("InvalidArgumentError", "rank 1 failed first", "unhandled promise rejection"), {
      exit: 1,
      names: ["rank 1 failed first", "unhandled on rank 1"],
    }),
  }),
  job({
    id: "main-never-settles",
    item: "8",
    fault: "rank 2's main awaits a promise nothing resolves; the others wait for it (timeout 60 s)",
    n: 3,
    scenario: "never-settles",
    flags: ["--timeout", "60"],
    boundS: 15,
    expect: fails("InvalidArgumentError", "rank 2 failed first", "argument 'main'", "never settled"),
  }),
  job({
    id: "main-never-settles-checked",
    item: "8",
    fault: "the same with --check (--timeout 2): the others wait for rank 2 in checked mode",
    backends: ["sim"],
    n: 3,
    scenario: "never-settles",
    flags: ["--check", "--timeout", "2"],
    expect: fails("TimeoutError", "rank 2 did not reach this collective", "allreduce #0: checked mode"),
  }),

  // ---- 9: unclear messages ----
  job({
    id: "shared-array-buffer",
    item: "9",
    fault: "a buffer over a SharedArrayBuffer",
    scenario: "shared",
    expect: both(ok(2), fails("InvalidArgumentError", "view'", "cannot hand memory of a SharedArrayBuffer")),
  }),
  job({
    id: "dtype-mismatch-equal-size",
    item: "9",
    fault: "4 x float32 sent, 4 x int32 expected (equal byte sizes)",
    scenario: "dtype-mismatch",
    expect: both(
      fails("MismatchError", "rank 0 send(to 1", "4 x float32", "4 x int32"),
      fails("MismatchError", "rank 1: recv from peer 0", "dtype mismatch", "4 x float32", "4 x int32"),
    ),
  }),
  job({
    id: "count-mismatch",
    item: "",
    fault: "4 elements sent, 5 expected",
    scenario: "count-mismatch",
    expect: both(
      fails("MismatchError", "rank 0 send(to 1", "4 x float32", "5 x float32"),
      fails("MismatchError", "rank 1: recv from peer 0", "count mismatch"),
    ),
  }),
  {
    id: "mpirun-missing",
    item: "9",
    fault: "`--backend mpi` with no mpirun on PATH",
    backends: ["mpi"],
    boundS: 10,
    expect: { exit: 1, names: ["cannot start mpirun", "not found on PATH", "apt-get install openmpi-bin"] },
    run: (backend, marker) =>
      cclabRun(backend, 2, [], "allreduce", [], { PATH: pathWithoutMpirun() }, marker).done(HARD_MS),
  },
  {
    id: "peer-not-a-store",
    item: "9",
    fault: "MASTER_PORT is an HTTP server (rank started torchrun-style)",
    backends: ["mpi"],
    boundS: 10,
    expect: { exit: 1, names: ["rank 1", "init", 'is not a cclab-store server (it sent "HTTP/1.1 400'] },
    run: async (_b, marker) => {
      const peer = await fakePeer("HTTP/1.1 400 Bad Request\r\n\r\n");
      try {
        return await torchrunRank(1, 2, peer.port, marker).done(HARD_MS);
      } finally {
        await peer.close();
      }
    },
  },
  job({
    id: "object-with-function",
    item: "9",
    fault: "broadcastObject of an object holding a function",
    scenario: "object-function",
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "rank 0", "broadcastObject", "argument 'obj'", "could not be cloned"),
  }),
  job({
    id: "object-symbol",
    item: "9",
    fault: "broadcastObject of a symbol",
    scenario: "object-symbol",
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "rank 0", "broadcastObject", "argument 'obj'", "Symbol(s)"),
  }),
  job({
    id: "root-as-string",
    item: "9",
    fault: 'broadcast with root "1" (a string)',
    scenario: "root-string",
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "rank 0", "broadcast", "argument 'options.root'", 'got "1"'),
  }),
  ...(
    [
      ["n-empty", "`-n ''`", "", 'got ""'],
      ["n-hex", "`-n 0x3`", "0x3", 'got "0x3"'],
      ["n-exponent", "`-n 3e0`", "3e0", 'got "3e0"'],
      ["n-spaces", "`-n ' 3 '`", " 3 ", 'got " 3 "'],
      ["n-zero", "`-n 0`", "0", "got 0"],
    ] as const
  ).map(([id, what, n, got]) =>
    job({
      id,
      item: "9",
      fault: what,
      backends: SAME_CODE,
      n,
      boundS: 8,
      expect: fails("InvalidArgumentError", "run", "argument '-n'", got),
    }),
  ),
  job({
    id: "n-too-many",
    item: "9",
    fault: "`-n 100000`",
    n: 100000,
    boundS: 8,
    expect: both(
      fails("InvalidArgumentError", "argument '-n'", "[1, 4096] for the sim backend", "got 100000"),
      fails("InvalidArgumentError", "argument '-n'", "[1, 256] for the mpi backend", "got 100000"),
    ),
  }),
  job({
    id: "fault-no-such-rank",
    item: "9",
    fault: "`--fault kill:rank=9,at=1` on 4 ranks",
    n: 4,
    flags: ["--fault", "kill:rank=9,at=1"],
    boundS: 8,
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "argument '--fault'", "names rank 9", "ranks 0..3"),
  }),
  job({
    id: "fault-never-fires",
    item: "9",
    fault: "`--fault kill:rank=1,at=1000` on a job whose rank 1 makes 4 operations",
    n: 3,
    scenario: "ring",
    args: ["2"],
    flags: ["--fault", "kill:rank=1,at=1000"],
    expect: fails("InvalidArgumentError", "rank 1", "argument '--fault'", "never fired", "made 4 operations"),
  }),

  // ---- beyond the issue's list: the rest of the public boundary ----
  job({
    id: "fault-unknown-kind",
    item: "",
    fault: "`--fault explode:rank=1`",
    flags: ["--fault", "explode:rank=1"],
    boundS: 8,
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "fault", "argument 'spec'", "unknown fault 'explode'"),
  }),
  job({
    id: "fault-hex-rank",
    item: "",
    fault: "`--fault kill:rank=0x1,at=1`",
    flags: ["--fault", "kill:rank=0x1,at=1"],
    boundS: 8,
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "argument 'spec'", "rank must be a decimal integer, got '0x1'"),
  }),
  job({
    id: "timeout-delay",
    item: "",
    fault: "rank 1 is delayed 30 s at every operation, `--timeout 1`",
    scenario: "ring",
    flags: ["--timeout", "1", "--fault", "delay:rank=1,ms=30000"],
    boundS: 15,
    expect: fails("TimeoutError", "rank", "recv from peer", "timed out after 1 s"),
  }),
  job({
    id: "checked-count-fault",
    item: "",
    fault: "rank 2's count is off by one, `--check`",
    n: 3,
    flags: ["--check", "--fault", "count:rank=2,delta=1"],
    expect: fails("MismatchError", "allreduce #0: checked mode", "count (ranks 0, 1: 8; rank 2: 9)"),
  }),
  job({
    id: "count-differs",
    item: "",
    fault: "rank 1 all-reduces 3 elements, the others 4 (no --check)",
    scenario: "count-differs",
    // On mpi this is count-mismatch's path.
    backends: ["sim"],
    expect: both(
      fails("MismatchError", "allreduce/ring", "x float32"),
      fails("MismatchError", "recv from peer", "mismatch"),
    ),
  }),
  job({
    id: "peer-out-of-range",
    item: "",
    fault: "send to peer size+3",
    scenario: "bad-peer",
    // Every backend calls the one check in src/checks.ts.
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "rank 0", "send", "argument 'peer'", "peer 5 is not a rank"),
  }),
  job({
    id: "view-past-buffer",
    item: "",
    fault: "a view [1, 5) of a 2-element buffer",
    scenario: "bad-view",
    // Every backend calls the one check in src/checks.ts.
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "rank 0", "send", "argument 'view'", "is outside its buffer of 2 elements"),
  }),
  job({
    id: "split-repeated-rank",
    item: "",
    fault: "split([0, 0])",
    scenario: "split-repeat",
    // Every backend calls the one check in src/checks.ts.
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "split", "argument 'ranks'", "rank 0 appears twice"),
  }),
  job({
    id: "non-member-collective",
    item: "",
    fault: "a collective on the communicator a non-member got from split",
    scenario: "non-member",
    // Every backend hands non-members the one NonMemberComm.
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "allReduce", "argument 'comm'", "not a member of the group"),
  }),
  job({
    id: "op-does-not-fit-dtype",
    item: "",
    fault: "all-reduce float32 with op band",
    scenario: "op-dtype",
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "rank 0", "allReduce", "argument 'options.op'", "band"),
  }),
  job({
    id: "unknown-algorithm",
    item: "",
    fault: "all-reduce with algorithm 'rign'",
    scenario: "bad-algorithm",
    backends: SAME_CODE,
    expect: fails("InvalidArgumentError", "rank 0", "allReduce", "rign"),
  }),
  job({
    id: "nnodes-mpi",
    item: "",
    fault: "`--nnodes 2 --backend mpi` without a shared CCLAB_STORE_TOKEN",
    backends: ["mpi"],
    flags: ["--nnodes", "2"],
    boundS: 8,
    expect: fails("InvalidArgumentError", "argument '--nnodes'", "needs the same CCLAB_STORE_TOKEN"),
  }),
  job({
    id: "master-port-range",
    item: "",
    fault: "`--master-port 70000`",
    backends: ["mpi"],
    flags: ["--master-port", "70000"],
    boundS: 8,
    expect: fails("InvalidArgumentError", "argument '--master-port'", "got 70000"),
  }),
  {
    id: "program-without-main",
    item: "",
    fault: "a program module that exports no main",
    // Every launcher loads the program through the one loadProgram.
    backends: SAME_CODE,
    boundS: 15,
    expect: {
      exit: 1,
      error: "InvalidArgumentError",
      names: ["argument 'program'", "does not export main(comm, args)"],
    },
    run: (backend, marker) =>
      start(process.execPath, [CLI, "run", "-n", "2", "--backend", backend, "test/faults/runner.ts"], {}, marker).done(
        HARD_MS,
      ),
  },
  {
    id: "plain-mpirun-n-mismatch",
    item: "3(a)",
    fault: "`mpirun -np 2 node cclab run -n 3 ...`",
    backends: ["mpi"],
    boundS: 20,
    expect: {
      exit: 1,
      error: "InvalidArgumentError",
      names: ["argument '-n'", "cclab run -n 3, but openmpi started 2 ranks"],
    },
    run: (_b, marker) =>
      start(
        "mpirun",
        [...mpirun(2), process.execPath, CLI, "run", "-n", "3", "--backend", "mpi", SCENARIO, "allreduce"],
        {},
        marker,
      ).done(HARD_MS),
  },
  {
    id: "plain-mpirun-check-no-store",
    item: "3(a)",
    fault: "plain mpirun with --check and no MASTER_ADDR/MASTER_PORT (no store)",
    backends: ["mpi"],
    boundS: 20,
    expect: {
      exit: 1,
      error: "InvalidArgumentError",
      names: ["rank 0", "init", "argument 'CCLAB_CHECK'", "MASTER_PORT"],
    },
    run: (_b, marker) =>
      start(
        "mpirun",
        [...mpirun(2), process.execPath, CLI, "run", "-n", "2", "--check", "--backend", "mpi", SCENARIO, "allreduce"],
        {},
        marker,
      ).done(HARD_MS),
  },

  // ---- issue 27: nothing a neighbour can break ----
  {
    id: "store-idle-connections",
    item: "27.1",
    fault:
      "64 idle TCP connections (no token, never authenticating) are opened to the store and held before rank 1 starts (torchrun-style ranks with CCLAB_STORE_TOKEN)",
    backends: ["mpi"],
    boundS: 20,
    expect: { exit: 0, names: ["64 idle connections opened"], okLines: 2 },
    run: async (_b, marker) => {
      const port = await freePort();
      const env = { CCLAB_STORE_TOKEN: "0123456789abcdef0123456789abcdef" };
      const r0 = plainRank(0, 2, port, marker, env);
      const idle: Socket[] = [];
      let opened = 0;
      try {
        // The first connection that is accepted shows rank 0's store listens; 63 more join it.
        await until(async () => {
          const s = await tcp(port);
          if (typeof s === "string") return false;
          idle.push(s);
          return true;
        }, 20_000);
        for (let i = 1; i < 64; i++) {
          const s = await tcp(port);
          if (typeof s !== "string") idle.push(s);
        }
        opened = idle.length;
        for (const s of idle) s.on("error", () => {});
        const r1 = plainRank(1, 2, port, marker, env);
        const [o0, o1] = await Promise.all([r0.done(HARD_MS), r1.done(HARD_MS)]);
        return {
          ...o0,
          code: o0.code || o1.code,
          out: `${opened} idle connections opened\n${o0.out}${o1.out}`,
          err: o0.err + o1.err,
          survivors: [...o0.survivors, ...o1.survivors],
          hung: o0.hung || o1.hung,
        };
      } finally {
        for (const s of idle) s.destroy();
      }
    },
  },
  {
    id: "torchrun-no-token",
    item: "27.2",
    fault:
      "ranks started with only torchrun's variables (no CCLAB_STORE_TOKEN); before rank 1 comes, a squatter tries the store's TCP port and another user its socket",
    backends: ["mpi"],
    boundS: 20,
    expect: {
      exit: 0,
      names: ["squatter at MASTER_PORT: ECONNREFUSED", ...(ROOT_USER ? ["another user at the socket: EACCES"] : [])],
      okLines: 2,
    },
    run: async (_b, marker) => {
      const port = await freePort();
      const r0 = plainRank(0, 2, port, marker);
      let path = "";
      // The job's directory once it has claimed the port (renamed with its ticket, .<digits>): a
      // path found before the rename is gone by the time another user tries it.
      await until(() => {
        path = findJobSockets(socketBase(), port)[0] ?? "";
        return /\.\d+$/.test(dirname(path));
      }, 20_000);
      // No TCP port is open at all: the fixed token older versions presented there reaches nothing.
      const s = await tcp(port);
      const squat = typeof s === "string" ? s : "connected";
      if (typeof s !== "string") s.destroy();
      const other = ROOT_USER
        ? spawnSync(
            process.execPath,
            [
              "-e",
              "const s=require('node:net').connect(process.argv[1],()=>{console.log('connected');process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)})",
              path,
            ],
            { uid: 65534, gid: 65534, encoding: "utf8", timeout: 10_000 },
          ).stdout.trim()
        : "not tried (not root)";
      const r1 = plainRank(1, 2, port, marker);
      const [o0, o1] = await Promise.all([r0.done(HARD_MS), r1.done(HARD_MS)]);
      return {
        ...o0,
        code: o0.code || o1.code,
        out: `squatter at MASTER_PORT: ${squat}\nanother user at the socket: ${other}\n${o0.out}${o1.out}`,
        err: o0.err + o1.err,
        survivors: [...o0.survivors, ...o1.survivors],
        hung: o0.hung || o1.hung,
      };
    },
  },
  {
    id: "socket-dir-squat",
    item: "40.7",
    fault:
      "ranks with only torchrun's variables on one host, after a neighbour made $TMPDIR/cclab-<uid> first (another user's directory as root, else a file) and a lookalike of the job's directory",
    backends: ["mpi"],
    boundS: 20,
    expect: { exit: 0, names: ["squatted: cclab-<uid>, lookalike"], okLines: 2 },
    run: async (_b, marker) => {
      const port = await freePort();
      const tmp = mkdtempSync(join(tmpdir(), "cclab-squat-"));
      chmodSync(tmp, 0o1777);
      const uid = process.getuid?.() ?? 0;
      // The fixed name older versions used, and the job directory's prefix, both taken first.
      const fixed = join(tmp, `cclab-${uid}`);
      const lookalike = join(tmp, `cclab-${uid}-${port}-AAAAAA`);
      if (ROOT_USER) {
        for (const d of [fixed, lookalike]) {
          mkdirSync(d, { mode: 0o777 });
          chmodSync(d, 0o777);
          chownSync(d, 65534, 65534);
        }
      } else {
        writeFileSync(fixed, "");
        mkdirSync(lookalike, { mode: 0o777 });
        chmodSync(lookalike, 0o777);
      }
      const env = { TMPDIR: tmp, XDG_RUNTIME_DIR: "" };
      try {
        const r0 = plainRank(0, 2, port, marker, env);
        const r1 = plainRank(1, 2, port, marker, env);
        const [o0, o1] = await Promise.all([r0.done(HARD_MS), r1.done(HARD_MS)]);
        return {
          ...o0,
          code: o0.code || o1.code,
          out: `squatted: cclab-<uid>, lookalike\n${o0.out}${o1.out}`,
          err: o0.err + o1.err,
          survivors: [...o0.survivors, ...o1.survivors],
          hung: o0.hung || o1.hung,
        };
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
  },
  {
    id: "sigcont-success",
    item: "27.3",
    fault: "a bare SIGCONT to the launcher while its ranks run (fg, timeout(1), Slurm and `kill -CONT` all send one)",
    backends: ["mpi"],
    boundS: 15,
    expect: { exit: 0, names: [], okLines: 2 },
    run: async (backend, marker) => {
      const s = cclabRun(backend, 2, [], "ready-ring", [], {}, marker);
      await s.waitFor("ready on rank", 2);
      process.kill(s.child.pid!, "SIGCONT");
      return s.done(HARD_MS);
    },
  },
  {
    id: "sigint-then-sigcont",
    item: "27.3",
    fault: "SIGINT then SIGCONT to the launcher while its ranks compute (what `timeout -s INT` sends)",
    backends: ["mpi"],
    boundS: 15,
    expect: { exit: 1, names: ["the job failed: cclab run was interrupted (SIGINT)"] },
    run: async (backend, marker) => {
      const s = cclabRun(backend, 2, [], "compute", [], {}, marker);
      await s.waitFor("computing on rank", 2);
      process.kill(s.child.pid!, "SIGINT");
      process.kill(s.child.pid!, "SIGCONT");
      return s.done(HARD_MS);
    },
  },
  fileRow({
    id: "msccl-chunks-1e8",
    item: "27.4",
    fault: "an MSCCL file of 1 KB with nchunksperloop=100000000 (it ran 70 s to 8.1 GB and died), given to verify",
    name: "huge.xml",
    content: () => mscclXml({ nchunksperloop: "100000000" }),
    args: ["verify", "--algorithm-file"],
    expect: fails(
      "AlgorithmFileError",
      "huge.xml: <algo>",
      'nchunksperloop="100000000"',
      "over the limit of 65536 chunks",
    ),
  }),
  fileRow({
    id: "msccl-chunks-1e12",
    item: "27.4",
    fault: "i_chunks=1000000000000 on a GPU (a raw 'RangeError: Invalid array length' before)",
    name: "wide.xml",
    content: () => mscclXml({}, 'i_chunks="1000000000000" o_chunks="0" s_chunks="0"'),
    args: ["import", "msccl"],
    expect: fails(
      "AlgorithmFileError",
      "wide.xml: gpu 0",
      'i_chunks="1000000000000"',
      "over the limit of 65536 chunks",
    ),
  }),
  fileRow({
    id: "msccl-huge-attribute",
    item: "27.4",
    fault: "an MSCCL file with a 17 MB attribute value (200 MB ran to 4.2 GB and crashed)",
    name: "long.xml",
    content: () => mscclXml({ name: "x".repeat(17 << 20) }),
    args: ["import", "msccl"],
    expect: fails("AlgorithmFileError", "long.xml", "over the limit of 16777216 for an MSCCL program", "--max-bytes"),
  }),
  fileRow({
    id: "msccl-empty-file",
    item: "27.4",
    fault: "an empty MSCCL file ('column undefined' before)",
    name: "empty.xml",
    content: () => "",
    args: ["import", "msccl"],
    expect: fails("AlgorithmFileError", "empty.xml", "is empty"),
  }),
  fileRow({
    id: "msccl-entities",
    item: "27.4",
    fault:
      "an MSCCL file with a DOCTYPE defining a parameter entity (the XML library's raw 'Invalid entity name %' before)",
    name: "entity.xml",
    content: () => `<!DOCTYPE algo [<!ENTITY % x "y">]>\n${mscclXml({})}`,
    args: ["import", "msccl"],
    expect: fails("AlgorithmFileError", "entity.xml: <!DOCTYPE>", "not allowed in an MSCCL program"),
  }),
  {
    id: "schedule-never-returns-run",
    // On sim this is also 27.7's rank holding the event loop that every sim rank shares.
    item: "27.5, 27.7",
    fault:
      "`cclab run --timeout 2`: every rank all-reduces with a user's algorithm whose schedule() never returns (no rank's guard can fire)",
    backends: ["sim", "mpi"],
    boundS: 15,
    expect: both(
      {
        exit: 137,
        // Whichever rank plans first holds the thread: each rank's dynamic imports settle in the
        // order the loader finishes them, so it is rank 0 or rank 1 (CI saw both).
        names: [
          "cclab run: rank ",
          "has held the thread every sim rank shares for",
          "past the job's timeout (2 s, at least 3 s)",
        ],
      },
      {
        exit: 1,
        names: ["failed first: its code has kept the main thread for", "past the job's timeout (2 s, at least 3 s)"],
      },
    ),
    run: async (backend, marker) => {
      const o = await cclabRun(backend, 2, ["--timeout", "2"], "schedule-hangs", [], {}, marker).done(HARD_MS);
      // Sim ranks share the launcher's thread: it ends itself with SIGKILL (exit 137 in a shell).
      return { ...o, code: o.signal === "SIGKILL" ? 137 : o.code };
    },
  },
  ...(
    [
      [
        "schedule-never-returns",
        "hang.ts",
        "a schedule() that never returns",
        ["allreduce/hang", "n = 2, rank 0", "did not return within 1 s", "CCLAB_SCHEDULE_TIMEOUT"],
      ],
      [
        "schedule-huge-step",
        "huge-step.ts",
        "a schedule() that makes 10^7 operations in one step (4.9 GB and a crash before), its heap bound at 128 MB",
        [
          "allreduce/huge_step",
          "n = 2, rank 0",
          "ran out of its 128 MB heap before it returned",
          "CCLAB_SCHEDULE_HEAP_MB",
        ],
      ],
      [
        "schedule-throws",
        "throws.ts",
        "schedule() throws at n = 3, and another recurses without end (raw errors and no table before)",
        [
          "allgather/throws_at_3 FAILED",
          "n = 3, rank 0",
          "threw TypeError: no plan for three ranks",
          "allgather/recursion FAILED",
          "overflowed the stack (RangeError: Maximum call stack size exceeded)",
        ],
      ],
    ] as const
  ).map(([id, file, what, names]) => ({
    id,
    item: id === "schedule-throws" ? "27.5, 27.8" : "27.5",
    fault: `\`cclab verify --algorithm-file\` of ${what}`,
    backends: SAME_CODE,
    boundS: 15,
    expect: { exit: 1, names: [`test/faults/programs/algorithms/${file}`, ...names] },
    run: (_b: Backend, marker: string) =>
      start(
        process.execPath,
        [CLI, "verify", "--algorithm-file", `test/faults/programs/algorithms/${file}`, "--max-n", "4", "--runs", "5"],
        { CCLAB_SCHEDULE_TIMEOUT: id === "schedule-never-returns" ? "1" : "30", CCLAB_SCHEDULE_HEAP_MB: "128" },
        marker,
      ).done(HARD_MS),
  })),
  {
    id: "bench-algorithm-file",
    item: "27.6",
    fault:
      "`cclab bench --algorithm-file sliced_ring.ts` without --algorithm (it benchmarked the built-in 'auto' chose and exited 0)",
    backends: SAME_CODE,
    boundS: 15,
    expect: { exit: 0, names: ["# cclab bench: allreduce (sliced_ring) on 2 ranks"] },
    run: async (_b, marker) => {
      const o = await start(
        process.execPath,
        [
          CLI,
          "bench",
          "allreduce",
          "--algorithm-file",
          "examples/algorithms/sliced_ring.ts",
          ...["--backend", "sim", "-n", "2", "-b", "1K", "-e", "4K", "--iters", "2", "-w", "0", "--no-progress"],
        ],
        {},
        marker,
      ).done(HARD_MS);
      // 'auto chose' means a built-in was benchmarked instead of the file's algorithm.
      return /auto chose/.test(o.out) ? { ...o, code: 98, out: `${o.out}\nBENCHED A BUILT-IN\n` } : o;
    },
  },
  job({
    id: "hostfile-dev-zero",
    item: "27.8",
    fault:
      "`--hostfile /dev/zero` ('rank 0 failed first: ranks 0, 1 never joined the job' before, though no rank started)",
    backends: ["mpi"],
    flags: ["--hostfile", "/dev/zero"],
    boundS: 8,
    expect: fails("InvalidArgumentError", "run: argument '--hostfile'", "/dev/zero is not a regular file"),
  }),
  fileRow({
    id: "hostfile-unknown-host",
    item: "27.8",
    fault: "a hostfile naming a host that does not exist: mpirun fails before starting any rank",
    name: "hosts",
    content: () => "no-such-host.invalid slots=2\n",
    args: ["run", "-n", "2", "--backend", "mpi", "--hostfile"],
    backends: ["mpi"],
    after: [SCENARIO, "allreduce"],
    boundS: 15,
    expect: {
      exit: 1,
      names: ["cclab run: the job failed: mpirun exited with code", "before any rank joined the job: no rank started"],
    },
  }),

  // ---- 40.4: the model's memory bounded by an estimate ----
  {
    id: "model-phases-heap",
    item: "40.4",
    fault:
      "`cclab model alltoall --algorithm pairwise -n 1024 --topology fattree --engine phases` in a 128 MB heap (under the 8 M operation cap, it died: 'JavaScript heap out of memory')",
    backends: SAME_CODE,
    boundS: 45,
    expect: fails(
      "InvalidArgumentError",
      "model: argument '-n'",
      "phases: alltoall/pairwise at n = 1,024",
      "MiB of heap it may use",
      "fewer ranks (about -n",
      "NODE_OPTIONS=--max-old-space-size=",
    ),
    run: (_b, marker) =>
      start(
        process.execPath,
        [
          "--max-old-space-size=128",
          CLI,
          "model",
          "alltoall",
          ...["--algorithm", "pairwise", "-n", "1024", "--topology", "fattree", "--engine", "phases"],
        ],
        {},
        marker,
      ).done(HARD_MS),
  },

  // A `cclab model` call in a bounded heap (1 GiB: what it may use is set against V8's limit).
  modelRow({
    id: "model-alltoall-tiny-4096",
    item: "40.4, 39.5",
    fault:
      "`cclab model alltoall --algorithm pairwise -n 4096 --bytes 16K --topology fattree` in a 1 GiB heap: one element a rank pair, 16.8 M message copies to solve, far past the heap (docs/network.md listed it as running the heap out)",
    args: ["alltoall", "--algorithm", "pairwise", "-n", "4096", "--bytes", "16K", "--topology", "fattree"],
    boundS: 30,
    expect: fails(
      "InvalidArgumentError",
      "model: argument '-n'",
      "phases: alltoall/pairwise at n = 4,096",
      "16,773,120 message copies to solve",
      "MiB of heap it may use",
      "fewer ranks (about -n",
      "NODE_OPTIONS=--max-old-space-size=",
    ),
  }),
  modelRow({
    id: "model-exact-over-heap",
    item: "40.4",
    fault:
      "`cclab model alltoall --algorithm pairwise -n 1024 --topology fattree --engine exact --bytes 64M` (2.1 M operations) in a 1 GiB heap (it died: 'JavaScript heap out of memory' after 33 s)",
    args: [
      ...["alltoall", "--algorithm", "pairwise", "-n", "1024", "--topology", "fattree"],
      ...["--engine", "exact", "--bytes", "64M"],
    ],
    boundS: 30,
    expect: fails(
      "InvalidArgumentError",
      "model: argument '--engine'",
      "exact: alltoall/pairwise at n = 1024 walks about",
      "MiB of heap it may use",
      "use --engine phases (or auto)",
    ),
  }),
  modelRow({
    id: "model-linear-4096",
    item: "39.5",
    fault:
      "`cclab model gather --algorithm linear -n 4096 --bytes 16K --topology torus:64x64` in a 1 GiB heap (refused: its walk estimated as the root's 4,095 transfers times n, 16.8 M operations)",
    args: ["gather", "--algorithm", "linear", "-n", "4096", "--bytes", "16K", "--topology", "torus:64x64"],
    boundS: 30,
    expect: { exit: 0, names: ["gather/linear: n = 4096", "engine: phases", "last to finish: rank 0"] },
  }),

  // ---- 40.8, 40.10: legitimate inputs that crashed, and unclear messages ----
  job({
    id: "timeout-fractional-ms",
    item: "40.8",
    fault: "`--timeout 1.0005` (every rank died: 'RangeError: The number … cannot be converted to a BigInt')",
    flags: ["--timeout", "1.0005"],
    expect: ok(2),
  }),
  job({
    id: "timeout-one-microsecond",
    item: "40.8",
    fault: "`--timeout 0.000001` (the same RangeError; before that, 'timed out after 0 s')",
    backends: ["mpi"],
    flags: ["--timeout", "0.000001"],
    // The deadline is checked by its timer and again when a call ends: a collective that takes more
    // than 1 µs always fails, whichever comes first, and the error names the exact 1 µs, never '0 s'.
    expect: fails("TimeoutError", "failed first", "0.000001 s"),
  }),
  {
    id: "bench-file-name-with-comma",
    item: "40.10",
    fault:
      "`cclab bench --algorithm-file` of an algorithm named 'ring,v2', no --algorithm (split into 'ring' and 'v2')",
    backends: SAME_CODE,
    boundS: 15,
    expect: { exit: 0, names: ["# cclab bench: allreduce (ring,v2) on 2 ranks"] },
    run: (_b, marker) =>
      start(
        process.execPath,
        [
          CLI,
          "bench",
          "allreduce",
          "--algorithm-file",
          "test/faults/programs/algorithms/comma-name.ts",
          ...["--backend", "sim", "-n", "2", "-b", "1K", "-e", "4K", "--iters", "2", "-w", "0", "--no-progress"],
        ],
        {},
        marker,
      ).done(HARD_MS),
  },
  {
    id: "master-port-in-use",
    item: "40.10",
    fault: "`--master-port P` where another program listens on 127.0.0.1:P (a raw 'listen EADDRINUSE')",
    backends: ["mpi"],
    boundS: 10,
    expect: fails("InvalidArgumentError", "run: argument '--master-port'", "is in use", "give a free port"),
    run: async (_b, marker) => {
      const taken = await fakePeer();
      try {
        const o = await start(
          process.execPath,
          [
            CLI,
            "run",
            ...["-n", "2", "--backend", "mpi", "--nnodes", "2", "--node-rank", "0"],
            ...["--master-addr", "127.0.0.1", "--master-port", String(taken.port), SCENARIO, "allreduce"],
          ],
          { CCLAB_STORE_TOKEN: "0123456789abcdef0123456789abcdef" },
          marker,
        ).done(HARD_MS);
        // The message must name the port that was taken.
        return `${o.out}${o.err}`.includes(`port ${taken.port} on 127.0.0.1`)
          ? o
          : { ...o, code: 98, out: `${o.out}\nPORT NOT NAMED\n` };
      } finally {
        await taken.close();
      }
    },
  },
  ...(
    [
      ["0", "must be the number of ranks on this host, 1 to the world's 2, got 0"],
      ["-1", "must be a non-negative integer"],
      ["1.5", "must be a non-negative integer"],
      ["3", "must be the number of ranks on this host, 1 to the world's 2, got 3"],
    ] as const
  ).map(
    ([v, words]): Row => ({
      id: `local-world-size-${v}`,
      item: "40.10",
      fault: `a rank started torchrun-style with LOCAL_WORLD_SIZE=${v}${v === "0" ? " (taken as it was)" : ""}`,
      backends: ["mpi"],
      boundS: 10,
      expect: fails("InvalidArgumentError", "init: argument 'LOCAL_WORLD_SIZE'", words),
      run: async (_b, marker) =>
        start(
          process.execPath,
          [CLI, "run", "-n", "2", "--backend", "mpi", "--timeout", "2", SCENARIO, "allreduce"],
          {
            RANK: "0",
            WORLD_SIZE: "2",
            LOCAL_WORLD_SIZE: v,
            MASTER_ADDR: "127.0.0.1",
            MASTER_PORT: String(await freePort()),
            CCLAB_JOIN_TIMEOUT: "2",
          },
          marker,
        ).done(HARD_MS),
    }),
  ),
];
