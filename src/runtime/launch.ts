/**
 * The launcher behind `cclab run` (torchrun's job): starts N ranks of a cclab program (a module
 * exporting main(comm, args)) on sim (one process), mpi (through mpirun) or nccl (N processes),
 * hosts the rendezvous store, prefixes every output line with its rank, and when any rank fails,
 * stops the others and reports the first failure.
 */
import { type ChildProcess, spawn as spawnProcess } from "node:child_process";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Comm } from "../comm.js";
import { InvalidArgumentError, RankError, UnavailableError } from "../core/errors.js";
import { checkedFromEnv, withChecks } from "./checked.js";
import { DEFAULT_MASTER_PORT, isLoopback } from "./env.js";
import { FaultyComm, parseFaults, withFaults } from "./faults.js";
import { type AbortInfo, AbortWatch, abortKey, defaultTimeoutMs, GuardedComm, parseAbort } from "./guard.js";
import { loadProgram } from "./init.js";
import { LinePrefixer, RankOutput } from "./output.js";
import { type KVStore, MemoryStore, makeToken, StoreClient, StoreServer } from "./store.js";

export const BACKENDS = ["sim", "mpi", "nccl"] as const;
export type LaunchBackend = (typeof BACKENDS)[number];

export interface LaunchOptions {
  /** Ranks per node (torchrun's --nproc-per-node). */
  nprocs: number;
  backend: LaunchBackend;
  program: string;
  args?: readonly string[];
  nnodes?: number;
  nodeRank?: number;
  masterAddr?: string;
  /** Default: a free port for one node, 29500 across nodes. */
  masterPort?: number;
  /** Per blocking call; default CCLAB_TIMEOUT or 300 s. */
  timeoutMs?: number;
  check?: boolean;
  /** Fault specs (see faults.ts). */
  faults?: readonly string[];
  /** After the first failure, how long the other ranks get to fail on their own before SIGTERM, then SIGKILL. */
  graceMs?: number;
  /** Extra environment for process ranks. */
  env?: NodeJS.ProcessEnv;
  /** Extra environment for one rank (nccl: ranks sharing a GPU get their own NCCL_HOSTID by default). */
  rankEnv?: (rank: number, localRank: number) => NodeJS.ProcessEnv;
  /** sim only: passed to spawn (seed, semantics, trace: cclab run --seed/--semantics/--trace). */
  sim?: { seed?: number; semantics?: string; trace?: unknown };
  /** Where prefixed output goes (default: this process's stdout/stderr). */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

export interface RankExit {
  readonly rank: number;
  readonly pid: number | undefined;
  readonly code: number | null;
  readonly signal: string | null;
}

export interface LaunchResult {
  readonly exitCode: number;
  /** The first rank that failed and why (from the store's abort key, else the first bad exit). */
  readonly failure?: AbortInfo;
  /** One line per failure, for the user. */
  readonly summary: string;
  /** Process ranks' pids and exits (empty for sim). */
  readonly exits: readonly RankExit[];
  /** Seconds from launch to the last rank's exit. */
  readonly seconds: number;
}

function checkOptions(o: LaunchOptions): void {
  const bad = (arg: string, detail: string) => new InvalidArgumentError({ op: "run", arg }, detail);
  if (!Number.isInteger(o.nprocs) || o.nprocs < 1) throw bad("-n", `must be a positive integer, got ${o.nprocs}`);
  if (!(BACKENDS as readonly string[]).includes(o.backend)) {
    throw bad("--backend", `unknown backend ${JSON.stringify(o.backend)}; expected one of ${BACKENDS.join(", ")}`);
  }
  const nnodes = o.nnodes ?? 1;
  const nodeRank = o.nodeRank ?? 0;
  if (!Number.isInteger(nnodes) || nnodes < 1) throw bad("--nnodes", `must be a positive integer, got ${nnodes}`);
  if (!Number.isInteger(nodeRank) || nodeRank < 0 || nodeRank >= nnodes) {
    throw bad("--node-rank", `must be in [0, ${nnodes}), got ${nodeRank}`);
  }
  if (nnodes > 1 && o.backend !== "nccl") {
    throw bad("--nnodes", `${o.backend} runs on one node from cclab run (give mpirun a hostfile for MPI across nodes)`);
  }
  if (o.masterPort !== undefined && (!Number.isInteger(o.masterPort) || o.masterPort < 0 || o.masterPort > 65535)) {
    throw bad("--master-port", `must be a port number, got ${o.masterPort}`);
  }
  if (o.timeoutMs !== undefined && !(o.timeoutMs > 0)) throw bad("--timeout", `must be positive, got ${o.timeoutMs}`);
  parseFaults(o.faults ?? []);
}

/** Runs the job to completion; never throws for a rank's failure (that is in the result). */
export async function launch(options: LaunchOptions): Promise<LaunchResult> {
  checkOptions(options);
  return options.backend === "sim" ? launchSim(options) : launchProcesses(options);
}

// ---- sim: N ranks in this process ----

interface SimModule {
  spawn: (n: number, fn: (comm: Comm) => Promise<unknown>, options?: object) => Promise<unknown[]>;
}

async function launchSim(o: LaunchOptions): Promise<LaunchResult> {
  const started = Date.now();
  const sim = (await import(new URL("../sim/index.js", import.meta.url).href)) as Partial<SimModule>;
  if (typeof sim.spawn !== "function") throw new UnavailableError("the sim backend (src/sim) exports no spawn()");
  const simSpawn = sim.spawn;
  const spawnSim = (k: number, fn: (comm: Comm) => Promise<unknown>) => simSpawn(k, fn, o.sim);
  const prog = await loadProgram(o.program);
  const n = o.nprocs;
  const timeoutMs = o.timeoutMs ?? defaultTimeoutMs();
  const faults = parseFaults([...(o.faults ?? []), ...(process.env.CCLAB_FAULT ? [process.env.CCLAB_FAULT] : [])]);
  const checked = o.check ?? checkedFromEnv();
  const job = `sim-${makeToken().slice(0, 8)}`;
  const store = new MemoryStore(undefined, timeoutMs);
  const watch = new AbortWatch(store, job);
  const output = new RankOutput();
  const faulties: FaultyComm[] = [];
  let failure: AbortInfo | undefined;
  watch.on((info) => {
    failure ??= info;
  });
  try {
    await spawnSim(n, (comm) =>
      output.run(comm.rank, async () => {
        const rank = comm.rank;
        const faulty = withFaults(withChecks(comm, checked, { store, timeoutMs, watch }), faults, {
          rank,
          mode: "throw",
        });
        if (faulty instanceof FaultyComm) faulties.push(faulty);
        const c = new GuardedComm(faulty, {
          store,
          rank,
          timeoutMs,
          job,
          watch,
        });
        try {
          await prog.main(c, [...(o.args ?? [])]);
        } catch (e) {
          // The sim world aborts the other ranks itself and names this one in its RankError.
          console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
          throw e;
        }
      }),
    );
  } catch (e) {
    if (!failure) {
      const rank = e instanceof RankError ? e.rank : -1;
      failure = { rank, reason: e instanceof Error ? e.message : String(e) };
    }
  } finally {
    watch.stop();
    output.close();
    // A delayed rank's pending sleep would otherwise keep this process up after the job ended.
    for (const f of faulties) f.stop();
  }
  return finish(failure, [], started, o);
}

// ---- processes: nccl (N node processes) and mpi (mpirun) ----

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** node + the tsx loader: how a rank process runs TypeScript (the program and the worker). */
export function nodeArgv(script: string, args: readonly string[]): string[] {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm")).href;
  return [process.execPath, "--import", tsx, script, ...args];
}

interface MpiModule {
  mpirunCommand: (np: number, argv: string[]) => { cmd: string; args: string[] };
}

interface NcclModule {
  ncclLaunchEnv: (o: { nprocs: number; nnodes: number }) => {
    perRank: (rank: number) => Record<string, string>;
    warning?: string;
  };
}

/** The nccl backend's per-rank settings (more ranks than GPUs), or none where it cannot say. */
async function ncclRankEnv(
  nprocs: number,
  nnodes: number,
): Promise<ReturnType<NcclModule["ncclLaunchEnv"]> | undefined> {
  try {
    const m = (await import(new URL("../backends/nccl/index.js", import.meta.url).href)) as Partial<NcclModule>;
    return m.ncclLaunchEnv?.({ nprocs, nnodes });
  } catch {
    return undefined;
  }
}

async function launchProcesses(o: LaunchOptions): Promise<LaunchResult> {
  const started = Date.now();
  const nnodes = o.nnodes ?? 1;
  const nodeRank = o.nodeRank ?? 0;
  const n = o.nprocs;
  const world = n * nnodes;
  const masterAddr = o.masterAddr ?? "127.0.0.1";
  const multi = nnodes > 1;
  const env = { ...process.env, ...o.env };
  // Across nodes every launcher must agree on the token and job id, so they come from the user.
  const token = multi ? env.CCLAB_STORE_TOKEN : makeToken();
  const job = multi ? env.CCLAB_JOB_ID : `job-${makeToken().slice(0, 8)}`;
  if (!token || !job) {
    throw new InvalidArgumentError(
      { op: "run", arg: "--nnodes" },
      "a job across nodes needs the same CCLAB_STORE_TOKEN and CCLAB_JOB_ID exported on every node",
    );
  }
  const out = o.stdout ?? ((t: string) => void process.stdout.write(t));
  const err = o.stderr ?? ((t: string) => void process.stderr.write(t));

  let server: StoreServer | null = null;
  let store: KVStore;
  let client: StoreClient | null = null;
  let masterPort = o.masterPort ?? (multi ? DEFAULT_MASTER_PORT : 0);
  if (nodeRank === 0) {
    server = await StoreServer.start({
      token,
      host: multi || !isLoopback(masterAddr) ? "0.0.0.0" : "127.0.0.1",
      port: masterPort,
      abortKey: abortKey(job),
    });
    masterPort = server.port;
    store = server.local;
  } else {
    client = await StoreClient.connect({ host: masterAddr, port: masterPort, token, timeoutMs: 60_000 });
    store = client;
  }

  const common: NodeJS.ProcessEnv = {
    ...env,
    WORLD_SIZE: String(world),
    LOCAL_WORLD_SIZE: String(n),
    MASTER_ADDR: masterAddr,
    MASTER_PORT: String(masterPort),
    CCLAB_STORE_TOKEN: token,
    CCLAB_JOB_ID: job,
    CCLAB_STORE_HOSTED: "1",
    CCLAB_BACKEND: o.backend,
  };
  if (o.timeoutMs !== undefined) common.CCLAB_TIMEOUT = String(o.timeoutMs / 1000);
  if (o.check) common.CCLAB_CHECK = "1";
  if (o.faults?.length) common.CCLAB_FAULT = [env.CCLAB_FAULT, ...o.faults].filter(Boolean).join(";");

  const worker = here("./worker.ts");
  const children: { rank: number; child: ChildProcess; exit?: RankExit }[] = [];
  let failure: AbortInfo | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let allExited!: () => void;
  const exited = new Promise<void>((r) => (allExited = r));

  const signalAll = (sig: NodeJS.Signals) => {
    for (const c of children) {
      if (c.exit || c.child.pid === undefined) continue;
      try {
        // Each rank leads its own process group, so this reaches whatever it started (mpirun's ranks).
        process.kill(-c.child.pid, sig);
      } catch {
        // Already gone.
      }
    }
  };
  const failed = (info: AbortInfo) => {
    if (failure) return;
    failure = info;
    const grace = o.graceMs ?? 5000;
    graceTimer = setTimeout(() => {
      signalAll("SIGTERM");
      killTimer = setTimeout(() => signalAll("SIGKILL"), 2000);
    }, grace);
  };
  const watching = store.get(abortKey(job), Number.POSITIVE_INFINITY).then(
    (v) => failed(parseAbort(v)),
    () => {},
  );
  void watching;

  const start = (rank: number, argv: string[], childEnv: NodeJS.ProcessEnv, prefix: boolean) => {
    const [cmd, ...args] = argv;
    const child = spawnProcess(cmd!, args, { env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const entry: (typeof children)[number] = { rank, child };
    children.push(entry);
    const outP = new LinePrefixer(prefix ? `[rank ${rank}] ` : "", out);
    const errP = new LinePrefixer(prefix ? `[rank ${rank}] ` : "", err);
    child.stdout!.on("data", (d: Buffer) => outP.push(d));
    child.stderr!.on("data", (d: Buffer) => errP.push(d));
    let streams = 0;
    let status: { code: number | null; signal: string | null } | null = null;
    const settle = () => {
      if (streams < 2 || !status) return;
      outP.flush();
      errP.flush();
      entry.exit = { rank, pid: child.pid, ...status };
      if ((status.code !== 0 || status.signal) && !failure) {
        const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
        const info = { rank, reason: `rank ${rank} ${how}` };
        failed(info);
        // Ranks still running learn it from the store, as from any other abort.
        store.setIfAbsent(abortKey(job), JSON.stringify(info)).catch(() => {});
      }
      if (children.every((c) => c.exit)) allExited();
    };
    child.stdout!.on("close", () => {
      streams++;
      settle();
    });
    child.stderr!.on("close", () => {
      streams++;
      settle();
    });
    child.on("error", (e) => {
      status = { code: 127, signal: null };
      errP.push(`cannot start ${cmd}: ${e.message}\n`);
      streams = 2;
      settle();
    });
    child.on("exit", (code, signal) => {
      status = { code, signal };
      settle();
    });
  };

  try {
    if (o.backend === "mpi") {
      const mpi = (await import(new URL("../backends/mpi/index.js", import.meta.url).href).catch((e: Error) => {
        throw new UnavailableError(`the mpi backend (src/backends/mpi) could not be loaded: ${e.message}`);
      })) as Partial<MpiModule>;
      if (typeof mpi.mpirunCommand !== "function")
        throw new UnavailableError("the mpi backend exports no mpirunCommand()");
      const c = mpi.mpirunCommand(n, nodeArgv(worker, [o.program, ...(o.args ?? [])]));
      const argv = [c.cmd, ...c.args];
      // mpirun's ranks inherit this environment and prefix their own lines (worker.ts).
      start(-1, argv, common, false);
    } else {
      const shared = o.backend === "nccl" ? await ncclRankEnv(n, nnodes) : undefined;
      if (shared?.warning) err(`${shared.warning}\n`);
      for (let local = 0; local < n; local++) {
        const rank = nodeRank * n + local;
        const rankEnv = {
          ...common,
          RANK: String(rank),
          LOCAL_RANK: String(local),
          CCLAB_PREFIXED: "1",
          ...shared?.perRank(rank),
          ...o.rankEnv?.(rank, local),
        };
        start(rank, nodeArgv(worker, [o.program, ...(o.args ?? [])]), rankEnv, true);
      }
    }
    await exited;
  } finally {
    clearTimeout(graceTimer);
    clearTimeout(killTimer);
    signalAll("SIGKILL");
    await killLeftovers(store, world);
    await client?.close();
    await server?.close();
  }
  return finish(
    failure,
    children.map((c) => c.exit!),
    started,
    o,
  );
}

/** SIGKILLs every rank process of this machine that registered its pid and is still alive. */
async function killLeftovers(store: KVStore, world: number): Promise<void> {
  const me = hostname();
  for (let r = 0; r < world; r++) {
    try {
      if (!(await store.check([`pid/${r}`]))) continue;
      const [host, pid] = (await store.get(`pid/${r}`, 1000)).toString("utf8").split(":");
      if (host === me && pid) process.kill(Number(pid), "SIGKILL");
    } catch {
      // Gone already, or the store is: nothing to kill.
    }
  }
}

function finish(failure: AbortInfo | undefined, exits: RankExit[], started: number, o: LaunchOptions): LaunchResult {
  const seconds = (Date.now() - started) / 1000;
  const bad = exits.filter((e) => e.code !== 0 || e.signal);
  if (!failure && bad.length === 0) return { exitCode: 0, summary: "", exits, seconds };
  const first = failure ?? { rank: bad[0]!.rank, reason: `exited with code ${bad[0]!.code}` };
  const own = exits.find((e) => e.rank === first.rank);
  const exit = own ? ` (${own.signal ? `killed by ${own.signal}` : `exit code ${own.code}`})` : "";
  const who = first.rank >= 0 ? `rank ${first.rank} failed first` : "the job failed";
  const lines = [`cclab run: ${who}: ${first.reason.replace(/^rank \d+:? (failed: )?/, "")}${exit}`];
  for (const e of exits) {
    if (e.rank < 0) continue;
    const how = e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`;
    lines.push(`  rank ${e.rank} (pid ${e.pid}): ${how}`);
  }
  if (o.backend === "mpi" && exits[0]) lines.push(`  mpirun: exit code ${exits[0].code}`);
  return { exitCode: 1, failure: first, summary: lines.join("\n"), exits, seconds };
}
