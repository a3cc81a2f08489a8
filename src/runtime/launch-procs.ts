/**
 * `cclab run --backend mpi|nccl`: the ranks as processes (mpi: one mpirun; nccl: one process per
 * rank), with the rendezvous store hosted here. The launcher signals only processes it started
 * itself, through the handles it holds: each child leads a process group created for it
 * (detached), and is signalled only while it has not exited (so its pid is still its own). Ranks
 * that mpirun starts are mpirun's to stop; if mpirun or this launcher dies, each rank's watchdog
 * (watchdog.ts) ends it. Nothing read from the store or the network is ever signalled.
 */
import { type ChildProcess, spawn as spawnProcess } from "node:child_process";
import { hostname } from "node:os";
import { InvalidArgumentError, UnavailableError } from "../core/errors.js";
import { deadline } from "../core/timer.js";
import { ABORT_KEY, joinedKey, type KVStore, parseAbort } from "../kvstore.js";
import { DEFAULT_MASTER_PORT } from "./env.js";
import { type AbortInfo, defaultTimeoutMs } from "./guard.js";
import { finish, jobTopology, type LaunchOptions, type LaunchResult, type RankExit } from "./launch-common.js";
import { LinePrefixer } from "./output.js";
import { makeToken, StoreClient, StoreServer } from "./store/index.js";
import { nodeArgv, ownModule } from "./user-module.js";
import { HELD_THREAD, STOPPED_PAST_TIMEOUT } from "./watchdog.js";

/** The nccl backend's per-rank settings (more ranks than GPUs), or none where it cannot say (no NCCL here). */
async function ncclRankEnv(nprocs: number, nnodes: number) {
  try {
    const { ncclLaunchEnv } = await import("../backends/nccl/index.js");
    return ncclLaunchEnv({ nprocs, nnodes });
  } catch {
    return undefined;
  }
}

/** The mpi backend (loaded only for --backend mpi: it loads the native addon). */
async function loadMpi() {
  try {
    return await import("../backends/mpi/index.js");
  } catch (e) {
    throw new UnavailableError(`the mpi backend (src/backends/mpi) could not be loaded: ${(e as Error).message}`);
  }
}

interface Child {
  readonly rank: number;
  readonly child: ChildProcess;
  exit?: RankExit;
}

/** Why the store could not listen at `addr:port`, as the flag that set the port (a raw EADDRINUSE otherwise). */
function storeListenError(e: unknown, addr: string, port: number, defaulted: boolean): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== "EADDRINUSE" && code !== "EACCES") return e;
  const which = defaulted ? `port ${port} (--master-port's default for a job across nodes)` : `port ${port}`;
  const what =
    code === "EADDRINUSE"
      ? `${which} on ${addr} is in use by another program or job`
      : `${which} on ${addr} may not be opened by this user (ports below 1024 need privileges)`;
  return new InvalidArgumentError(
    { op: "run", arg: "--master-port" },
    `the store cannot listen there: ${what}; give a free port with --master-port, the same on every node`,
  );
}

/** The store this launcher uses: hosted here (node 0), or the master's, as the launcher of a remote node. */
async function openStore(o: LaunchOptions, token: string, world: number, timeoutMs: number) {
  const nnodes = o.nnodes ?? 1;
  const nodeRank = o.nodeRank ?? 0;
  // mpirun with a hostfile may start ranks on other nodes, which must reach the store.
  const multi = nnodes > 1 || o.hostfile !== undefined;
  const masterAddr = multi ? (o.masterAddr ?? (o.hostfile !== undefined ? hostname() : "127.0.0.1")) : "127.0.0.1";
  const port = o.masterPort ?? (nnodes > 1 ? DEFAULT_MASTER_PORT : 0);
  if (nodeRank === 0) {
    // Loopback unless the job spans nodes; then only the interface of --master-addr, never all of them.
    const server = await StoreServer.start({ token, world, nodes: nnodes, host: masterAddr, port }).catch((e) => {
      throw storeListenError(e, masterAddr, port, o.masterPort === undefined);
    });
    return { server, client: null, store: server.local, masterAddr, masterPort: server.port };
  }
  const client = await StoreClient.connect({
    host: masterAddr,
    port,
    token,
    role: { launcherOfNode: nodeRank },
    timeoutMs,
    notice: (line) => process.stderr.write(`cclab run: node ${nodeRank}: ${line}\n`),
  });
  return { server: null, client, store: client as KVStore, masterAddr, masterPort: port };
}

export async function launchProcesses(o: LaunchOptions): Promise<LaunchResult> {
  const started = Date.now();
  const nnodes = o.nnodes ?? 1;
  const nodeRank = o.nodeRank ?? 0;
  const n = o.nprocs;
  const world = n * nnodes;
  const env = { ...process.env, ...o.env };
  // mpirun starts the ranks on one node, or on every node of --hostfile; otherwise (nccl, sim's
  // never here, mpi with one cclab run per node) this launcher starts its node's ranks itself.
  const viaMpirun = o.backend === "mpi" && (nnodes === 1 || o.hostfile !== undefined);
  // Across nodes every launcher must present the same token, so it comes from the user; from one
  // launcher (one node, or mpirun with a hostfile) it is fresh and random, and only this
  // launcher's own children get it.
  const token = nnodes > 1 && !viaMpirun ? env.CCLAB_STORE_TOKEN : makeToken();
  if (!token || token.length < 16) {
    throw new InvalidArgumentError(
      { op: "run", arg: "--nnodes" },
      "a job across nodes needs the same CCLAB_STORE_TOKEN (16+ random characters, e.g. $(openssl rand -hex 16)) exported on every node",
    );
  }
  const timeoutMs = o.timeoutMs ?? defaultTimeoutMs(env);
  const out = o.stdout ?? ((t: string) => void process.stdout.write(t));
  const err = o.stderr ?? ((t: string) => void process.stderr.write(t));
  const mpi = o.backend === "mpi" ? await loadMpi() : undefined;
  const { server, client, store, masterAddr, masterPort } = await openStore(o, token, world, timeoutMs);

  const common: NodeJS.ProcessEnv = {
    ...env,
    WORLD_SIZE: String(world),
    LOCAL_WORLD_SIZE: String(n),
    MASTER_ADDR: masterAddr,
    MASTER_PORT: String(masterPort),
    CCLAB_STORE_TOKEN: token,
    CCLAB_STORE_HOSTED: "1",
    CCLAB_BACKEND: o.backend,
    CCLAB_LAUNCHER_PID: String(process.pid),
    CCLAB_LAUNCHER_HOST: hostname(),
  };
  if (o.timeoutMs !== undefined) common.CCLAB_TIMEOUT = String(o.timeoutMs / 1000);
  if (o.check) common.CCLAB_CHECK = "1";
  if (o.faults?.length) common.CCLAB_FAULT = [env.CCLAB_FAULT, ...o.faults].filter(Boolean).join(";");
  // --topology: every rank's world comm gets the machine's shape (init.ts reads these).
  const machine = jobTopology(o);
  if (machine.topology !== undefined) common.CCLAB_TOPOLOGY = machine.topology;
  if (machine.placement !== undefined) common.CCLAB_PLACEMENT = machine.placement;

  const worker = ownModule("./worker.ts", import.meta.url);
  const children: Child[] = [];
  let failure: AbortInfo | undefined;
  const timers: (() => void)[] = [];
  let allExited!: () => void;
  const exited = new Promise<void>((r) => (allExited = r));

  /** Signals this launcher's own children that have not exited (each leads the group made for it). */
  const signalAll = (sig: NodeJS.Signals) => {
    for (const c of children) {
      if (c.exit || c.child.exitCode !== null || c.child.signalCode !== null) continue;
      const pid = c.child.pid;
      if (pid === undefined || pid <= 1) continue;
      try {
        process.kill(-pid, sig);
      } catch {
        // Exited between the check and the signal.
      }
    }
  };
  const stopOthers = (graceMs: number) => {
    timers.push(
      deadline(graceMs, () => {
        signalAll("SIGTERM");
        timers.push(deadline(2000, () => signalAll("SIGKILL")));
      }),
    );
  };
  const failed = (info: AbortInfo) => {
    if (failure) return;
    failure = info;
    stopOthers(o.graceMs ?? 5000);
  };
  store.get(ABORT_KEY, Number.POSITIVE_INFINITY).then(
    (v) => failed(parseAbort(v)),
    () => {},
  );
  // Interrupted (Ctrl-C, kill): the children are in their own groups, so pass it on, then exit.
  const interrupted = (sig: NodeJS.Signals) => {
    failed({ rank: -1, reason: `cclab run was interrupted (${sig})` });
    signalAll("SIGTERM");
    timers.push(deadline(2000, () => signalAll("SIGKILL")));
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, interrupted);
  // Stopped (SIGSTOP, Ctrl-Z) and resumed: the ranks may have given up meanwhile, and then that is
  // why the job failed. The evidence is a rank's watchdog line saying this very process (its pid)
  // was stopped past the timeout (watchdog.ts), not this process's own SIGCONT: a SIGCONT alone
  // (fg, timeout(1), Slurm, kill -CONT) says nothing, and its handler may run only after the
  // children's exits have been seen.
  const stoppedHere = `(pid ${process.pid}) has been stopped for`;
  let gaveUp = false;
  // A rank whose own code never came back to its event loop says so before it ends itself (init.ts).
  let held: AbortInfo | undefined;
  const errLines = (t: string) => {
    if (t.includes(stoppedHere) && t.includes(STOPPED_PAST_TIMEOUT)) gaveUp = true;
    const m = held ? null : new RegExp(`cclab: rank (\\d+): (${HELD_THREAD}[^\n]*)`).exec(t);
    if (m) held = { rank: Number(m[1]), reason: m[2]!.replace(/ stopping this rank$/, "") };
    err(t);
  };

  /** A process exit nobody explained yet: publish it (as mpirun's, if the rank is not known). */
  const explainExit = (rank: number, how: string) => {
    if (failure) return;
    const info: AbortInfo = { rank, reason: rank < 0 ? `mpirun ${how}` : `rank ${rank} ${how}` };
    failed(info);
    // Ranks still running learn it from the store, as from any other abort.
    store.abort(info.rank, info.reason).catch(() => {});
  };

  /**
   * Until every rank has joined, no rank has run any of the program; a rank that never joined is
   * then the cause, and the deaths the store saw (mpirun stopping the others) are its effect.
   */
  const blame = async (): Promise<AbortInfo | undefined> => {
    if (failure && !/^rank \d+ died|^mpirun /.test(failure.reason)) return failure;
    const never: number[] = [];
    for (let r = 0; r < world; r++) if (!(await store.check([joinedKey(r)]).catch(() => true))) never.push(r);
    if (never.length === 0) return failure;
    // Not one rank reached the store and mpirun failed: mpirun itself is the cause (its own output says why).
    const mpirun = children.find((c) => c.rank < 0)?.exit;
    if (never.length === world && mpirun && (mpirun.code !== 0 || mpirun.signal)) {
      const how = mpirun.signal ? `was killed by ${mpirun.signal}` : `exited with code ${mpirun.code}`;
      return {
        rank: -1,
        reason: `mpirun ${how} before any rank joined the job: no rank started (see mpirun's output above)`,
      };
    }
    const who = never.length === 1 ? `rank ${never[0]}` : `ranks ${never.join(", ")}`;
    return {
      rank: never[0]!,
      reason: `${who} never joined the job: exited or killed before reaching the store (see its output above)`,
    };
  };

  const start = (rank: number, argv: string[], childEnv: NodeJS.ProcessEnv, prefix: boolean) => {
    const [cmd, ...args] = argv;
    const child = spawnProcess(cmd!, args, { env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const entry: Child = { rank, child };
    children.push(entry);
    const outP = new LinePrefixer(prefix ? `[rank ${rank}] ` : "", out);
    const errP = new LinePrefixer(prefix ? `[rank ${rank}] ` : "", errLines);
    child.stdout!.on("data", (d: Buffer) => outP.push(d));
    child.stderr!.on("data", (d: Buffer) => errP.push(d));
    let streams = 0;
    let status: { code: number | null; signal: string | null } | null = null;
    const settle = () => {
      if (streams < 2 || !status) return;
      outP.flush();
      errP.flush();
      entry.exit = { rank, pid: child.pid, ...status };
      if (status.code !== 0 || status.signal) {
        const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
        explainExit(rank, how);
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
    child.on("error", (e: NodeJS.ErrnoException) => {
      status = { code: 127, signal: null };
      const hint = e.code === "ENOENT" && cmd === "mpirun" && mpi?.MPI_HINT ? `; to get it: ${mpi.MPI_HINT}` : "";
      const why = e.code === "ENOENT" ? `${cmd} was not found on PATH${hint}` : e.message;
      errP.push(`cclab run: cannot start ${cmd}: ${why}\n`);
      if (!failure) failed({ rank: -1, reason: `cannot start ${cmd}: ${why}` });
      streams = 2;
      settle();
    });
    child.on("exit", (code, signal) => {
      status = { code, signal };
      settle();
    });
  };

  try {
    if (mpi && viaMpirun) {
      // With a hostfile, ranks on other nodes get only what mpirun exports (-x): the job's variables.
      const exportEnv = o.hostfile
        ? Object.keys(common).filter(
            (k) => k.startsWith("CCLAB_") || /^(MASTER_ADDR|MASTER_PORT|WORLD_SIZE|LOCAL_WORLD_SIZE)$/.test(k),
          )
        : [];
      const c = mpi.mpirunCommand(world, nodeArgv(worker, [o.program, ...(o.args ?? [])]), {
        hostfile: o.hostfile,
        perNode: nnodes > 1 ? n : undefined,
        exportEnv,
      });
      // mpirun's ranks inherit this environment and prefix their own lines (worker.ts).
      start(-1, [c.cmd, ...c.args], common, false);
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
    failure = await blame();
    // The stop explains only deaths (the watchdog's SIGKILL, mpirun ending), never an interrupt or a rank's own error.
    const death = !failure || /died|was killed by|^mpirun /.test(failure.reason);
    if (held && death) failure = held;
    else if (gaveUp && death) {
      failure = {
        rank: -1,
        reason:
          "cclab run itself was stopped (SIGSTOP or Ctrl-Z) and resumed; its ranks stop on their own once it has been stopped past the timeout",
      };
    }
  } finally {
    for (const s of signals) process.off(s, interrupted);
    for (const cancel of timers) cancel();
    signalAll("SIGKILL");
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
