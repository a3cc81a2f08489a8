/**
 * What an MSCCL program's steps become in the import (import.ts): actions (a step's receive, its
 * local copy or reduction, its send), built per threadblock, and messages (each send paired with
 * the receive it meets). Also the import's shared vocabulary: chunk ranges (Ref), the Context
 * every phase fails and notes through. Reads the program (ir.ts); builds no schedule.
 */
import { AlgorithmFileError } from "../core/errors.js";
import { at, KINDS, type MscclProgram, type StepType } from "./ir.js";

/** What every phase of the import shares: the program, where notes go, and how it fails. */
export interface Context {
  readonly program: MscclProgram;
  readonly file: string;
  readonly notes: string[];
  /** Throws AlgorithmFileError '<file>: <where>: <what>'. */
  readonly fail: (where: string, what: string) => never;
}

export function context(program: MscclProgram, file: string, notes: string[]): Context {
  const fail = (where: string, what: string): never => {
    throw new AlgorithmFileError(`${file}: ${where}: ${what}`);
  };
  return { program, file, notes, fail };
}

/** A chunk range of a buffer: i, o, s, or t (the threadblock's receive buffer). */
export interface Ref {
  readonly buf: "i" | "o" | "s" | "t";
  readonly off: number;
  readonly cnt: number;
}

type ActionKind = "send" | "recv" | "copy" | "reduce";

export interface Action {
  readonly gpu: number;
  readonly tb: number;
  readonly step: number;
  readonly type: StepType;
  readonly kind: ActionKind;
  /** Transfers. */
  readonly peer: number;
  readonly channel: number;
  /** send: read; recv: written; copy/reduce: the destination. */
  readonly ref: Ref;
  readonly src?: Ref;
  /** reduce: dst <- with ⊕ src, where with is not dst. */
  readonly with?: Ref;
  /** A send whose source a receive of its round overwrites: it sends a copy taken just before the round. */
  stage?: Ref;
  /** Position in its threadblock's actions. */
  readonly pos: number;
  /** Its threadblock, numbered over all GPUs. */
  readonly tbg: number;
  node: number;
}

export const isTransfer = (a: Action) => a.kind === "send" || a.kind === "recv";

/** Every threadblock's actions (indices into `actions`), as buildActions makes them. */
export interface Threadblocks {
  readonly actions: Action[];
  /** Per GPU and tb: its actions in order. */
  readonly tbActions: number[][][];
  /** Per GPU, tb, step: its first and last action (-1 for a nop). */
  readonly firstOf: number[][][];
  readonly lastOf: number[][][];
  /** Per GPU and tb: the receive buffer's size in chunks. */
  readonly tmpSize: number[][];
  /** Threadblocks over all GPUs. */
  readonly count: number;
}

/** Each step's actions, per threadblock (a fused step's receive, reduction and send in that order). */
export function buildActions(program: MscclProgram): Threadblocks {
  const actions: Action[] = [];
  const tbActions: number[][][] = [];
  /** Per GPU, tb, step: its first and last action (-1 for a nop). */
  const firstOf: number[][][] = [];
  const lastOf: number[][][] = [];
  /** Per GPU and tb: the receive buffer's size in chunks. */
  const tmpSize: number[][] = [];
  let tbg = 0;
  for (const g of program.gpus) {
    tbActions.push([]);
    firstOf.push([]);
    lastOf.push([]);
    tmpSize.push([]);
    for (const t of g.tbs) {
      const list: number[] = [];
      const firsts: number[] = [];
      const lasts: number[] = [];
      /** Each receive-reduce step's own part of the threadblock's receive buffer. */
      let tmp = 0;
      const add = (a: Omit<Action, "gpu" | "tb" | "pos" | "tbg" | "node" | "peer" | "channel"> & Partial<Action>) => {
        list.push(actions.length);
        actions.push({ peer: -1, channel: t.chan, ...a, gpu: g.id, tb: t.id, pos: list.length - 1, tbg, node: -1 });
      };
      for (const s of t.steps) {
        const start = list.length;
        const kind = KINDS[s.type];
        const src: Ref = { buf: s.srcbuf, off: s.srcoff, cnt: s.cnt };
        const dst: Ref = { buf: s.dstbuf, off: s.dstoff, cnt: s.cnt };
        const tb: Ref = { buf: "t", off: tmp, cnt: s.cnt };
        const base = { step: s.s, type: s.type };
        if (kind.reduce && kind.recv) tmp += s.cnt;
        switch (s.type) {
          case "s":
            add({ ...base, kind: "send", peer: t.send, ref: src });
            break;
          case "r":
            add({ ...base, kind: "recv", peer: t.recv, ref: dst });
            break;
          case "rcs":
            add({ ...base, kind: "recv", peer: t.recv, ref: dst });
            add({ ...base, kind: "send", peer: t.send, ref: dst });
            break;
          case "rrs":
            add({ ...base, kind: "recv", peer: t.recv, ref: tb });
            add({ ...base, kind: "reduce", ref: tb, src });
            add({ ...base, kind: "send", peer: t.send, ref: tb });
            break;
          case "rrc":
          case "rrcs":
            add({ ...base, kind: "recv", peer: t.recv, ref: tb });
            add({ ...base, kind: "reduce", ref: dst, src: tb, ...(sameRef(src, dst) ? {} : { with: src }) });
            if (s.type === "rrcs") add({ ...base, kind: "send", peer: t.send, ref: dst });
            break;
          case "cpy":
            add({ ...base, kind: "copy", ref: dst, src });
            break;
          case "re":
            add({ ...base, kind: "reduce", ref: dst, src });
            break;
          case "nop":
            break;
        }
        firsts.push(list.length > start ? (list[start] as number) : -1);
        lasts.push(list.length > start ? (list[list.length - 1] as number) : -1);
      }
      tbActions[g.id]?.push(list);
      firstOf[g.id]?.push(firsts);
      lastOf[g.id]?.push(lasts);
      tmpSize[g.id]?.push(tmp);
      tbg++;
    }
  }
  return { actions, tbActions, firstOf, lastOf, tmpSize, count: tbg };
}

/** The messages: one constraint-graph node each (numbered 0..messages-1), then one per local action. */
export interface Messages {
  readonly messages: number;
  /** Per message: its send's and its receive's action. */
  readonly sendOf: readonly number[];
  readonly recvOf: readonly number[];
  /** Nodes of the constraint graph: the messages, then the local actions. */
  readonly nodes: number;
}

/**
 * Per (sender, receiver, channel), the sender's sends pair with the receiver's receives in order;
 * a count mismatch or a send or receive left over fails, naming the steps. Sets every action's node.
 */
export function pairMessages(ctx: Context, tbs: Threadblocks): Messages {
  const { program, fail } = ctx;
  const { actions, tbActions } = tbs;
  const n = program.ngpus;
  const tbFor = (gpu: number, dir: "send" | "recv", peer: number, chan: number): number | undefined => {
    const found = (program.gpus[gpu]?.tbs ?? []).filter((t) => t[dir] === peer && t.chan === chan);
    if (found.length > 1) {
      fail(
        at(gpu),
        `threadblocks ${found.map((t) => t.id).join(" and ")} both ${dir === "send" ? "send to" : "receive from"} gpu ${peer} on channel ${chan}: the executor gives each peer and channel one connection`,
      );
    }
    return found[0]?.id;
  };
  let messages = 0;
  const sendOf: number[] = [];
  const recvOf: number[] = [];
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) {
      if (a === b) continue;
      for (let c = 0; c < program.nchannels; c++) {
        const st = tbFor(a, "send", b, c);
        const rt = tbFor(b, "recv", a, c);
        const sends = st === undefined ? [] : (tbActions[a]?.[st] ?? []).filter((i) => actions[i]?.kind === "send");
        const recvs = rt === undefined ? [] : (tbActions[b]?.[rt] ?? []).filter((i) => actions[i]?.kind === "recv");
        const k = Math.min(sends.length, recvs.length);
        for (let j = 0; j < k; j++) {
          const s = actions[sends[j] as number] as Action;
          const r = actions[recvs[j] as number] as Action;
          if (s.ref.cnt !== r.ref.cnt) {
            fail(
              at(s.gpu, s.tb, s.step, s.type),
              `sends ${s.ref.cnt} chunk(s) to gpu ${b} on channel ${c}, but the receive it pairs with (its ${nth(j)} to that GPU on that channel), ${at(r.gpu, r.tb, r.step, r.type)}, takes ${r.ref.cnt}`,
            );
          }
          s.node = messages;
          r.node = messages;
          sendOf.push(sends[j] as number);
          recvOf.push(recvs[j] as number);
          messages++;
        }
        // A send or receive left over: name it, and the threadblock that should have matched it.
        const extra = sends.length > k ? sends[k] : recvs[k];
        if (extra !== undefined) {
          const x = actions[extra] as Action;
          const [verb, other, otherTb] = x.kind === "send" ? ["sends to", b, rt] : ["receives from", a, st];
          const [them, mirror] = x.kind === "send" ? ["receives from", "receive"] : ["sends to", "send"];
          fail(
            at(x.gpu, x.tb, x.step, x.type),
            otherTb === undefined
              ? `${verb} gpu ${other} on channel ${c}, but no threadblock of gpu ${other} ${them} gpu ${x.gpu} on channel ${c}`
              : `${verb} gpu ${other} on channel ${c} (its ${nth(k)} message there), but ${at(other, otherTb)}, which ${them} gpu ${x.gpu} on channel ${c}, has only ${k} ${mirror}(s): no ${mirror} matches it`,
          );
        }
      }
    }
  }
  let nodes = messages;
  for (const a of actions) if (!isTransfer(a)) a.node = nodes++;
  return { messages, sendOf, recvOf, nodes };
}

/** An action in words, for the deadlock message. */
export function describe(a: Action): string {
  const w = at(a.gpu, a.tb, a.step, a.type);
  if (a.kind === "send") return `${w} sends ${a.ref.cnt} chunk(s) to gpu ${a.peer} on channel ${a.channel}`;
  if (a.kind === "recv") return `${w} receives ${a.ref.cnt} chunk(s) from gpu ${a.peer} on channel ${a.channel}`;
  return `${w} ${a.kind === "copy" ? "copies into" : "reduces into"} ${refText(a.ref)}`;
}

export const sameRef = (x: Ref, y: Ref) => x.buf === y.buf && x.off === y.off && x.cnt === y.cnt;
const refText = (r: Ref) =>
  r.buf === "t" ? "its receive buffer" : `${r.buf}[${r.off}${r.cnt > 1 ? `:${r.off + r.cnt}` : ""}]`;
const nth = (k: number) =>
  `${k + 1}${k % 10 === 0 && k !== 10 ? "st" : k % 10 === 1 && k !== 11 ? "nd" : k % 10 === 2 && k !== 12 ? "rd" : "th"}`;
