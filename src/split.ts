/**
 * What split (torch's new_group) shares across backends: the check of its ranks argument, and
 * the comm a non-member gets (torch's GroupMember.NON_GROUP_MEMBER): rank -1, every call fails
 * with the same message on every backend; destroy() is a no-op, so cleanup code may destroy
 * every comm it was handed.
 */
import type { Comm, Work } from "./comm.js";
import type { DataBuffer } from "./core/buffer.js";
import { InvalidArgumentError } from "./core/errors.js";

/** Validates split's `ranks` on `rank` of a comm of `size`: non-empty, in range, no repeats. */
export function checkSplitRanks(rank: number, size: number, ranks: readonly number[]): void {
  const site = { rank, op: "split", arg: "ranks" };
  if (!Array.isArray(ranks) || ranks.length === 0) {
    throw new InvalidArgumentError(site, "expected a non-empty array of ranks");
  }
  const seen = new Set<number>();
  for (const r of ranks) {
    if (typeof r !== "number" || !Number.isInteger(r) || r < 0 || r >= size) {
      throw new InvalidArgumentError(
        site,
        `${String(r)} in [${ranks.join(", ")}] is not a rank of this communicator (ranks 0..${size - 1})`,
      );
    }
    if (seen.has(r)) throw new InvalidArgumentError(site, `rank ${r} appears twice in [${ranks.join(", ")}]`);
    seen.add(r);
  }
}

export class NonMemberComm implements Comm {
  readonly rank = -1;
  readonly size: number;
  constructor(
    readonly backend: string,
    private readonly worldRank: number,
    readonly worldRanks: readonly number[],
  ) {
    this.size = worldRanks.length;
  }
  private fail(op: string): never {
    throw new InvalidArgumentError(
      { op },
      `rank ${this.worldRank} (world) is not a member of group [${this.worldRanks.join(", ")}]`,
    );
  }
  async send(): Promise<void> {
    this.fail("send");
  }
  async recv(): Promise<void> {
    this.fail("recv");
  }
  isend(): Work {
    this.fail("isend");
  }
  irecv(): Work {
    this.fail("irecv");
  }
  async group(): Promise<void> {
    this.fail("group");
  }
  async split(): Promise<Comm> {
    this.fail("split");
  }
  alloc(): DataBuffer {
    this.fail("alloc");
  }
  copy(): void {
    this.fail("copy");
  }
  reduceInto(): void {
    this.fail("reduceInto");
  }
  scale(): void {
    this.fail("scale");
  }
  async synchronize(): Promise<void> {
    this.fail("synchronize");
  }
  destroy(): void {}
}
