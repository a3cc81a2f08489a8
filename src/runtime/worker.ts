/**
 * One rank of a process backend, as cclab run starts it (directly, or under mpirun):
 *   node --import tsx src/runtime/worker.ts program.ts [args...]
 * Joins the job from the environment (init), runs the program's main(comm, args), and on any
 * failure publishes it as the job's abort (so the other ranks stop within moments) and exits 1.
 * A rank that leaves any other way says why before it goes: process.exit in the middle of main,
 * a throw in a stray callback, a main that never settles, or a fault that never fired.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { type RankRecorder, rankRecorderFromEnv } from "../tracing.js";
import { unfiredFaults } from "./faults.js";
import { defaultTimeoutMs, type GuardedComm } from "./guard.js";
import { abortOnExit, finalize, init, loadProgram } from "./init.js";
import { installRankPrefix } from "./output.js";
import { allowBlocking } from "./watchdog.js";

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

export async function runWorker(argv: readonly string[]): Promise<number> {
  const [program, ...args] = argv;
  const rank = process.env.RANK ?? process.env.OMPI_COMM_WORLD_RANK ?? process.env.PMI_RANK ?? process.env.SLURM_PROCID;
  // cclab run prefixes what it reads from our pipes; under mpirun we prefix our own lines.
  const restore = process.env.CCLAB_PREFIXED === "1" || rank === undefined ? () => {} : installRankPrefix(Number(rank));
  let comm: GuardedComm | undefined;
  let recorder: RankRecorder | undefined;
  let failed: unknown;
  let ended = false;
  const fail = async (e: unknown) => {
    if (failed !== undefined) return;
    failed = e;
    process.stderr.write(`${describe(e)}\n`);
    recorder?.write();
    if (comm) await finalize(comm, e);
    ended = true;
    restore();
    process.exit(1);
  };
  // An error thrown outside main's promise chain (a stray callback) fails the rank the same way.
  process.on("uncaughtException", (e) => void fail(e));
  process.on("unhandledRejection", (e) => void fail(e));
  // Nothing left to run while main is still pending: main awaits something nothing will resolve.
  process.on("beforeExit", () => {
    if (!ended && comm) {
      void fail(
        new InvalidArgumentError(
          { rank: comm.rank, op: "run", arg: "main" },
          "main(comm, args) never settled: it awaits a promise that nothing will resolve (no timer, I/O or cclab operation is pending)",
        ),
      );
    }
  });
  // Any other way out (process.exit in the middle of main): name it, in the one write an exit handler can make.
  process.on("exit", (code) => {
    if (ended || !comm) return;
    const why = `rank ${comm.rank} exited (process.exit(${code})) before its main returned`;
    process.stderr.write(`${why}\n`);
    abortOnExit(comm, why);
  });
  try {
    if (!program) throw new Error("usage: worker.ts program.ts [args...]");
    // Join first: a rank that then cannot load its program (or dies loading it) is named by the
    // store; one that never joins can only be guessed at from the ranks that did.
    comm = await init();
    // Loading the program (and tsx compiling it) is start-up, not the program's own code: the
    // job's timeout bounds it as it does joining, not the 3 s a held event loop gets.
    const loaded = allowBlocking(defaultTimeoutMs());
    const prog = await loadProgram(program).finally(loaded);
    recorder = rankRecorderFromEnv(comm); // cclab run --trace
    await prog.main(recorder?.comm ?? comm, [...args]);
    recorder?.write();
    const unfired = unfiredFaults(comm);
    if (unfired.length) {
      throw new InvalidArgumentError({ rank: comm.rank, op: "run", arg: "--fault" }, unfired.join("; "));
    }
    await finalize(comm);
    ended = true;
    restore();
    return 0;
  } catch (e) {
    await fail(e);
    return 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/runtime/worker.ts")) {
  const code = await runWorker(process.argv.slice(2));
  process.exit(code);
}
