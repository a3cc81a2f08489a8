/** The one range check every topology builder makes on the rank it is asked about. */
import { invariant } from "../../src/core/assert.js";

export function checkRank(what: string, rank: number, size: number): void {
  invariant(
    Number.isInteger(size) && size >= 1 && Number.isInteger(rank) && rank >= 0 && rank < size,
    () => `${what}: rank ${rank} out of range for size ${size}`,
  );
}
