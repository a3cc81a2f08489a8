/**
 * `cclab run --backend sim`: N simulated ranks in this process, each running the program's main
 * under the runtime's guard (timeouts, aborts, checked mode, faults) over an in-process store.
 * Since every rank shares this process, the launcher also owns what a process would do alone, and
 * names the rank in each case (each rank's code runs in an async-local context that says which):
 * - process.exit() in a rank fails that rank (it would end every rank, with no output);
 * - a throw in a stray callback, or an unhandled rejection, fails the rank that set it up;
 * - a main that never settles (nothing left to run, so Node would exit 13) fails that rank.
 */
import { createHook } from "node:async_hooks";
import { useTopology } from "../collectives/plans.js";
import { InvalidArgumentError, RankError } from "../core/errors.js";
import { formatDuration } from "../core/timer.js";
import { MemoryStore } from "../kvstore.js";
import type { Semantics, SimOptions } from "../sim/index.js";
import { checkedFromEnv, withChecks } from "./checked.js";
import { FaultyComm, parseFaults, withFaults } from "./faults.js";
import { type AbortInfo, AbortWatch, defaultTimeoutMs, GuardedComm } from "./guard.js";
import { loadProgram } from "./init.js";
import { faultSpecs, finish, jobTopology, type LaunchOptions, type LaunchResult } from "./launch-common.js";
import { RankOutput } from "./output.js";
import { eventLoopBound, MIN_BLOCKED_MS } from "./watchdog.js";

/** One rank's state as the launcher sees it. */
interface SimRank {
  finished: boolean;
  readonly activity: { inFlight: number };
  /** Fails the rank from outside its main (a stray throw, process.exit, a main that never settles). */
  fail(e: unknown): void;
  faulty?: FaultyComm;
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

export async function launchSim(o: LaunchOptions): Promise<LaunchResult> {
  const started = Date.now();
  const { spawn, SEMANTICS } = await import("../sim/index.js");
  const semantics = o.sim?.semantics;
  if (semantics !== undefined && !(SEMANTICS as readonly string[]).includes(semantics)) {
    throw new InvalidArgumentError(
      { op: "run", arg: "--semantics" },
      `unknown semantics ${JSON.stringify(semantics)}; expected one of ${SEMANTICS.join(", ")}`,
    );
  }
  const simOptions: SimOptions = { ...o.sim, semantics: semantics as Semantics | undefined };
  const prog = await loadProgram(o.program);
  const n = o.nprocs;
  const timeoutMs = o.timeoutMs ?? defaultTimeoutMs();
  const faults = parseFaults(faultSpecs(o));
  const checked = o.check ?? checkedFromEnv();
  // --topology: each rank's comm runs its collectives on the machine's shape (one, checked once).
  const machine = jobTopology(o);
  const shape =
    machine.topology === undefined
      ? undefined
      : (await import("../tools/topology-shape.js")).shapeOfSpec(machine.topology, n, machine.placement, { op: "run" });
  const store = new MemoryStore(undefined, timeoutMs);
  const watch = new AbortWatch(store);
  const output = new RankOutput();
  const ranks: SimRank[] = [];
  let failure: AbortInfo | undefined;
  watch.on((info) => {
    failure ??= info;
  });
  // A failure after a rank's main returned (a callback it left behind) still fails the job, naming it.
  let late: AbortInfo | undefined;

  // A failure outside every rank's code (no rank to blame) still ends the job, naming what happened.
  let outside: unknown;
  const failHere = (what: string) => (e: unknown) => {
    const r = output.current();
    const err = new InvalidArgumentError({ rank: r, op: "run", arg: "main" }, `${what}: ${describe(e)}`);
    if (r !== undefined && ranks[r]) ranks[r].fail(err);
    else outside ??= err;
  };
  const onUncaught = failHere("uncaught exception in a callback");
  const onUnhandled = failHere("unhandled promise rejection");
  const onBeforeExit = () => {
    // Nothing is left to run: every unfinished rank awaits something that nothing will resolve.
    // Blame those not blocked in a cclab call (the others wait on them); if all are, blame all.
    const stuck = ranks.filter((r) => !r.finished);
    const culprits = stuck.filter((r) => r.activity.inFlight === 0);
    for (const r of culprits.length ? culprits : stuck) {
      r.fail(
        new InvalidArgumentError(
          { rank: ranks.indexOf(r), op: "run", arg: "main" },
          "main(comm, args) never settled: it awaits a promise that nothing will resolve (no timer, I/O or cclab operation is pending)",
        ),
      );
    }
  };
  const realExit = process.exit;
  process.exit = ((code?: number | string | null) => {
    const r = output.current();
    throw new InvalidArgumentError(
      { rank: r, op: "run", arg: "main" },
      `process.exit(${code ?? ""}) was called ${r === undefined ? "outside every rank" : "by this rank"} while the job runs; ` +
        "sim ranks share one process, so a rank ends by returning from main (or throwing)",
    );
  }) as typeof process.exit;
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUnhandled);
  process.on("beforeExit", onBeforeExit);
  // Sim ranks share this thread: one whose code never yields holds every other, and no timer of
  // the guard can fire. --timeout is then enforced from another thread, which ends the job.
  const bound = eventLoopBound(
    timeoutMs,
    `cclab run: {rank} has held the thread every sim rank shares for {s} s without a pause, past the job's timeout (${formatDuration(timeoutMs)}, at least ${MIN_BLOCKED_MS / 1000} s): ` +
      "no other rank or timer can run, so the job stops here (exit 137); a loop that never ends?",
  );
  // Which rank's code runs: every callback or promise continuation says, from its async context.
  const resumes = createHook({
    before: () => {
      const r = output.current();
      if (r !== undefined) bound.running(r);
    },
  }).enable();

  try {
    // cclab run --seed/--semantics/--trace reach the simulator as its spawn options.
    await spawn(
      n,
      (comm) =>
        output.run(comm.rank, async () => {
          const rank = comm.rank;
          let reject!: (e: unknown) => void;
          const failed = new Promise<never>((_, r) => (reject = r));
          bound.running(rank);
          const me: SimRank = {
            finished: false,
            activity: { inFlight: 0 },
            fail: (e) => {
              if (!me.finished) return reject(e);
              console.error(describe(e));
              late ??= { rank, reason: e instanceof Error ? e.message : String(e) };
            },
          };
          ranks[rank] = me;
          const faulty = withFaults(withChecks(comm, checked, { store, timeoutMs, watch }), faults, {
            rank,
            mode: "throw",
          });
          if (faulty instanceof FaultyComm) me.faulty = faulty;
          const c = new GuardedComm(faulty, {
            store,
            rank,
            timeoutMs,
            watch,
            activity: me.activity,
            holdProcess: false,
          });
          if (shape) useTopology(c, shape);
          try {
            const running = Promise.resolve().then(() => prog.main(c, [...(o.args ?? [])]));
            // Once the rank failed from outside, its main may still reject (aborted): that is not news.
            running.catch(() => {});
            await Promise.race([running, failed]);
            const unfired = me.faulty?.unfired() ?? [];
            if (unfired.length) throw new InvalidArgumentError({ rank, op: "run", arg: "--fault" }, unfired.join("; "));
          } catch (e) {
            // The sim world aborts the other ranks itself and names this one in its RankError.
            console.error(describe(e));
            throw e;
          } finally {
            me.finished = true;
          }
        }),
      simOptions,
    );
  } catch (e) {
    if (!failure) {
      const rank = e instanceof RankError ? e.rank : -1;
      failure = { rank, reason: e instanceof Error ? e.message : String(e) };
    }
  } finally {
    process.exit = realExit;
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUnhandled);
    process.off("beforeExit", onBeforeExit);
    resumes.disable();
    bound.stop();
    watch.stop();
    output.close();
    // A delayed rank's pending sleep would otherwise keep this process up after the job ended.
    for (const r of ranks) r?.faulty?.stop();
  }
  if (!failure && late) failure = late;
  if (!failure && outside !== undefined) failure = { rank: -1, reason: describe(outside) };
  return finish(failure, [], started, o);
}
