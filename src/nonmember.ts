/**
 * What a non-member of a subgroup gets from split (torch's GroupMember.NON_GROUP_MEMBER): rank
 * -1, and every call fails with the same message on every backend. destroy() is a no-op, so
 * cleanup code may destroy every comm it was handed.
 */
import type { Comm, Work } from "./comm.js";
import type { DataBuffer } from "./core/buffer.js";
import { InvalidArgumentError } from "./core/errors.js";

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
