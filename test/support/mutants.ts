/**
 * Mutants of a registered schedule for the checker's tests (test/checker.test.ts at small n,
 * test/verify-broken-1024.test.ts at 1,024 ranks): each rank's steps passed through an edit.
 * May touch: nothing.
 */
import type { Algorithm, Step } from "../../src/schedule/dsl.js";
import type { RankCall } from "../../src/specs/types.js";

/** `alg` with each rank's steps passed through `edit` (call, steps) -> steps. */
export function broken(
  alg: Algorithm,
  edit: (c: RankCall, steps: Step[]) => Step[],
  name = `${alg.name}-broken`,
): Algorithm {
  return {
    ...alg,
    name,
    *schedule(c, mem) {
      yield* edit(c, [...alg.schedule(c, mem)]);
    },
  };
}

/** Rank 1's (or each rank `which` picks) second step receives one element less than its peer sends, and does no local work. */
export const shortReceive = (
  alg: Algorithm,
  name?: string,
  which: (rank: number) => boolean = (rank) => rank === 1,
): Algorithm =>
  broken(
    alg,
    (c, steps) =>
      steps.map((s, i) =>
        which(c.rank) && i === 1
          ? {
              ...s,
              transfers: s.transfers.map((t) =>
                t.kind === "recv" ? { ...t, region: { ...t.region, count: t.region.count - 1 } } : t,
              ),
              local: [],
            }
          : s,
      ),
    name,
  );
