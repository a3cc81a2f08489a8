/**
 * The sim backend: N ranks in one Node process (torch.multiprocessing.spawn's shape), with
 * deterministic, seeded interleavings, NCCL-, MPI- or gloo-like send semantics, deadlock
 * explanations and fail-fast error propagation. The reference backend every test and tool uses.
 */
import type { Comm } from "../comm.js";
import { InvalidArgumentError } from "../core/errors.js";
import { SimComm } from "./comm.js";
import { SEMANTICS, type SimOptions, World } from "./world.js";

export { NonMemberComm, SimComm } from "./comm.js";
export { describeWait, findCycle, hintFor } from "./deadlock.js";
export { SEMANTICS, type Semantics, type SimOptions } from "./world.js";

function checkOptions(n: number, options: SimOptions): void {
  const site = (arg: string) => ({ op: "spawn", arg });
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError(site("n"), `the number of ranks must be a positive integer, got ${n}`);
  }
  if (options.semantics !== undefined && !SEMANTICS.includes(options.semantics)) {
    throw new InvalidArgumentError(
      site("options.semantics"),
      `unknown semantics ${JSON.stringify(options.semantics)}; expected one of ${SEMANTICS.join(", ")}`,
    );
  }
  const limit = options.eagerLimitBytes;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
    throw new InvalidArgumentError(site("options.eagerLimitBytes"), `must be a non-negative integer, got ${limit}`);
  }
  if (options.seed !== undefined && !Number.isInteger(options.seed)) {
    throw new InvalidArgumentError(site("options.seed"), `must be an integer, got ${options.seed}`);
  }
}

/**
 * Runs `fn(comm)` for ranks 0..n-1 on a simulated world and resolves with their return values,
 * in rank order. If a rank throws, every other rank's pending and later operations reject with
 * AbortError, and once every rank function has settled, spawn rejects with a RankError naming
 * the first rank that failed.
 */
export async function spawn<T>(n: number, fn: (comm: Comm) => Promise<T> | T, options: SimOptions = {}): Promise<T[]> {
  checkOptions(n, options);
  if (typeof fn !== "function") {
    throw new InvalidArgumentError({ op: "spawn", arg: "fn" }, "expected a function (comm) => ...");
  }
  const world = new World(n, options);
  const results = new Array<T>(n);
  const ranks: Promise<void>[] = [];
  for (let r = 0; r < n; r++) {
    const comm = new SimComm(world, world.worldComm, r);
    ranks.push(
      Promise.resolve()
        .then(() => fn(comm))
        .then(
          (v) => {
            results[r] = v;
            world.finish(r);
          },
          (e: unknown) => world.finish(r, e),
        ),
    );
  }
  await world.run();
  await Promise.all(ranks);
  if (world.failure) throw world.failure;
  return results;
}
