/**
 * The sim backend's Comm: one object per (rank, communicator), validating arguments at the
 * boundary and handing posted operations to the World. Non-members of a subgroup get
 * NonMemberComm, whose every call fails with the same message the other backends use.
 */

import { checkHostView, checkP2POps, checkPeer, checkSplitRanks, type HostView } from "../checks.js";
import type { CallTag, Comm, OpOptions, P2POp, Work } from "../comm.js";
import { type DataBuffer, HostBuffer, sameView, type View } from "../core/buffer.js";
import { type DType, parseDType } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import { checkOpFitsDType, combineOf, parseOp, type ReduceOp, reduceArrays, scaleArrays } from "../core/op.js";
import { NonMemberComm } from "../nonmember.js";
import { type CommInfo, copyElements, SimOp, type World } from "./world.js";

export { NonMemberComm };

export class SimComm implements Comm {
  readonly backend = "sim";
  readonly size: number;
  readonly worldRanks: readonly number[];
  /** This rank's world rank. */
  private readonly me: number;
  private splits = 0;
  private destroyed = false;

  constructor(
    private readonly world: World,
    private readonly info: CommInfo,
    readonly rank: number,
  ) {
    this.size = info.members.length;
    this.worldRanks = info.members;
    this.me = info.members[rank]!;
  }

  // ---- validation ----

  private live(op: string): void {
    if (this.destroyed) {
      throw new InvalidArgumentError({ rank: this.rank, op }, `this communicator (${this.info.name}) was destroyed`);
    }
  }

  private checkLabel(options: OpOptions | undefined, op: string): string | undefined {
    const label = options?.label;
    if (label !== undefined && typeof label !== "string") {
      throw new InvalidArgumentError({ rank: this.rank, op, arg: "options.label" }, "a label must be a string");
    }
    return label;
  }

  private make(
    kind: "send" | "recv",
    v: unknown,
    peer: unknown,
    label: string | undefined,
    op: string,
    call?: CallTag,
  ): SimOp {
    const hv = checkHostView(this.rank, v, op, "view", "sim");
    const p = checkPeer(this.rank, this.size, peer, op);
    return new SimOp(kind, this.info, this.me, this.info.members[p]!, this.rank, p, hv, label, this.world.round, call);
  }

  private post(kind: "send" | "recv", v: View, peer: number, options: OpOptions | undefined, name: string): SimOp {
    this.live(name);
    const op = this.make(kind, v, peer, this.checkLabel(options, name), name, options?.call);
    return this.world.post(op);
  }

  private work(op: SimOp): Work {
    return {
      wait: () => this.world.waitAll(this.me, [op]),
      // Settled counts as complete (as torch's is_completed); wait() reports a failure.
      test: () => op.state !== "pending",
    };
  }

  // ---- point-to-point ----

  async send(view: View, peer: number, options?: OpOptions): Promise<void> {
    const op = this.post("send", view, peer, options, "send");
    return this.world.waitAll(this.me, [op]);
  }

  async recv(view: View, peer: number, options?: OpOptions): Promise<void> {
    const op = this.post("recv", view, peer, options, "recv");
    return this.world.waitAll(this.me, [op]);
  }

  isend(view: View, peer: number, options?: OpOptions): Work {
    return this.work(this.post("send", view, peer, options, "isend"));
  }

  irecv(view: View, peer: number, options?: OpOptions): Work {
    return this.work(this.post("recv", view, peer, options, "irecv"));
  }

  async group(ops: readonly P2POp[], options?: OpOptions): Promise<void> {
    this.live("group");
    checkP2POps(this.rank, ops);
    const groupLabel = this.checkLabel(options, "group");
    // Validate everything before posting anything: a group is posted whole or not at all.
    const made = ops.map((o: P2POp, i) => {
      const label = this.checkLabel(o, `group ops[${i}] ${o.kind}`) ?? groupLabel;
      return this.make(o.kind, o.view, o.peer, label, `group ops[${i}] ${o.kind}`, options?.call);
    });
    const posted = made.map((op) => this.world.post(op));
    return this.world.waitAll(this.me, posted);
  }

  async split(ranks: readonly number[]): Promise<Comm> {
    this.live("split");
    checkSplitRanks(this.rank, this.size, ranks);
    const { group, rank } = await this.world.split(this.info, this.rank, this.splits++, ranks);
    return rank >= 0 ? new SimComm(this.world, group, rank) : new NonMemberComm("sim", this.me, group.members);
  }

  // ---- local operations ----

  alloc(dtype: DType, count: number): DataBuffer {
    this.live("alloc");
    const dt = parseDType(dtype, { rank: this.rank, op: "alloc" });
    if (!Number.isInteger(count) || count < 0) {
      throw new InvalidArgumentError(
        { rank: this.rank, op: "alloc", arg: "count" },
        `count must be a non-negative integer, got ${count}`,
      );
    }
    return new HostBuffer(dt, count);
  }

  private pair(op: string, dst: View, src: View): [HostView, HostView] {
    this.live(op);
    const d = checkHostView(this.rank, dst, op, "dst", "sim");
    const s = checkHostView(this.rank, src, op, "src", "sim");
    if (d.buffer.dtype !== s.buffer.dtype || d.count !== s.count) {
      throw new InvalidArgumentError(
        { rank: this.rank, op, arg: "src" },
        `src is ${s.count} x ${s.buffer.dtype} but dst is ${d.count} x ${d.buffer.dtype}; they must agree`,
      );
    }
    return [d, s];
  }

  copy(dst: View, src: View): void {
    const [d, s] = this.pair("copy", dst, src);
    copyElements(d.buffer.data, d.offset, s.buffer.data, s.offset, d.count);
    this.world.recordLocal(this.me, "copy", d);
  }

  reduceInto(dst: View, src: View, op: ReduceOp, a?: View): void {
    let [d, s] = this.pair("reduceInto", dst, src);
    const rop = parseOp(op, { rank: this.rank, op: "reduceInto" });
    checkOpFitsDType(rop, d.buffer.dtype, { rank: this.rank, op: "reduceInto" });
    if (a && !sameView(a, dst)) {
      const [, x] = this.pair("reduceInto", dst, a);
      // dst = a (op) src: where src is dst, reduce a into it (the op commutes bit for bit), else start from a.
      if (sameView(src, dst)) s = x;
      else copyElements(d.buffer.data, d.offset, x.buffer.data, x.offset, d.count);
    }
    reduceArrays(d.buffer.dtype, combineOf(rop), d.buffer.data, d.offset, s.buffer.data, s.offset, d.count);
    this.world.recordLocal(this.me, "reduce", d);
  }

  scale(dst: View, src: View, mul: number, div: number): void {
    const [d, s] = this.pair("scale", dst, src);
    if (!Number.isFinite(mul) || !Number.isFinite(div) || div === 0) {
      throw new InvalidArgumentError(
        { rank: this.rank, op: "scale", arg: "mul/div" },
        `need finite mul and a finite non-zero div, got ${mul} / ${div}`,
      );
    }
    scaleArrays(d.buffer.dtype, d.buffer.data, d.offset, s.buffer.data, s.offset, d.count, mul, div);
    this.world.recordLocal(this.me, "scale", d);
  }

  async synchronize(): Promise<void> {
    // Host memory: every local operation completed when it returned, every transfer when its wait did.
  }

  destroy(): void {
    this.destroyed = true;
  }
}
