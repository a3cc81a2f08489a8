/**
 * An imported MSCCL program's cclab schedule (import.ts): each GPU's actions grouped into
 * rounds, and the generator that yields a rank's rounds as DSL steps over the call's memory
 * (staging the buffers where the call's in-place mode is not the program's). Reads actions
 * (actions.ts) and their rounds (order.ts); writes only through the DSL.
 */
import {
  copy,
  type LocalOp,
  type Memory,
  type Region,
  recv,
  reduce,
  type Schedule,
  type Step,
  send,
  step,
  sub,
} from "../schedule/dsl.js";
import type { CollectiveSpec, RankCall } from "../specs/types.js";
import { type Action, isTransfer, type Ref, sameRef } from "./actions.js";
import type { MscclProgram } from "./ir.js";

/** One round of one GPU, in chunk units. */
export interface Round {
  readonly label: string;
  readonly transfers: readonly Action[];
  readonly locals: readonly Action[];
  /** Sends that go out of a copy (Action.stage), taken in a step of their own just before the round. */
  readonly staged: readonly Action[];
}

/** Per GPU, its rounds in order: a round's transfers sorted by peer, channel, sends first; its label the steps in it. */
export function gpuRounds(
  program: MscclProgram,
  actions: readonly Action[],
  order: readonly number[],
  roundOf: (a: Action) => number,
): Round[][] {
  const rounds: Round[][] = program.gpus.map(() => []);
  const byRound: Map<number, { t: Action[]; l: Action[] }>[] = program.gpus.map(() => new Map());
  for (const i of order) {
    const a = actions[i] as Action;
    const m = byRound[a.gpu] as Map<number, { t: Action[]; l: Action[] }>;
    const k = roundOf(a);
    let r = m.get(k);
    if (!r) m.set(k, (r = { t: [], l: [] }));
    (isTransfer(a) ? r.t : r.l).push(a);
  }
  byRound.forEach((m, gpu) => {
    for (const k of [...m.keys()].sort((x, y) => x - y)) {
      const r = m.get(k) as { t: Action[]; l: Action[] };
      r.t.sort(
        (x, y) => x.peer - y.peer || x.channel - y.channel || Number(x.kind === "recv") - Number(y.kind === "recv"),
      );
      const names = [...new Set([...r.t, ...r.l].map((a) => `tb${a.tb}.${a.step} ${a.type}`))];
      const label = `${names.slice(0, 6).join(", ")}${names.length > 6 ? `, +${names.length - 6}` : ""}`;
      rounds[gpu]?.push({ label, transfers: r.t, locals: r.l, staged: r.t.filter((a) => a.stage) });
    }
  });
  return rounds;
}

/**
 * Rank c.rank's schedule: its rounds over the call's memory, chunk j of a buffer being elements
 * [j·e, (j+1)·e). Where the call's mode is one the program does not have, the memory the program
 * expects is staged: an out-of-place program called in place reads a copy of the input; an
 * in-place program called out of place runs on the output with the input copied where the
 * in-place layout puts it (reduce-scatter's on a copy of the input, its block copied out at the end).
 */
export function* scheduleOf(
  p: MscclProgram,
  spec: CollectiveSpec,
  c: RankCall,
  mem: Memory,
  rounds: readonly Round[],
  tmpSize: readonly number[],
  mult: number,
): Schedule {
  const e = (c.count * mult) / p.nchunksperloop;
  const g = p.gpus[c.rank];
  if (!g) return;
  let input = mem.input;
  let output = mem.output;
  const tail: Step[] = [];
  const a = spec.layout(c).alias;
  if (c.inPlace && !p.inplace) {
    input = mem.scratch(mem.input.count);
    yield step("stage input (the program is out of place only)", [], [copy(input, mem.input)]);
  } else if (!c.inPlace && !p.outofplace && a) {
    if (a.kind === "output-in-input") {
      const whole = mem.scratch(mem.input.count);
      yield step("stage input (the program is in place only)", [], [copy(whole, mem.input)]);
      input = whole;
      output = sub(whole, a.offset, mem.output.count);
      tail.push(step("copy out (the program is in place only)", [], [copy(mem.output, output)]));
    } else {
      const into = sub(mem.output, a.offset, mem.input.count);
      if (into.count > 0)
        yield step("copy input into place (the program is in place only)", [], [copy(into, mem.input)]);
      input = into;
    }
  }
  const scratch = mem.scratch(g.sChunks * e);
  const tmp = tmpSize.map((k) => mem.scratch(k * e));
  const bases = { i: input, o: output, s: scratch };
  const region = (a: Action, r: Ref): Region =>
    r.buf === "t" ? sub(tmp[a.tb] as Region, r.off * e, r.cnt * e) : sub(bases[r.buf], r.off * e, r.cnt * e);
  for (const r of rounds) {
    if (r.staged.length > 0) {
      const copies = r.staged.map((x) => copy(region(x, x.stage as Ref), region(x, x.ref)));
      yield step(`stage ${r.staged.map((x) => `tb${x.tb}.${x.step} ${x.type}`).join(", ")}`, [], copies);
    }
    const locals: LocalOp[] = [];
    for (const x of r.locals) {
      const dst = region(x, x.ref);
      const src = region(x, x.src as Ref);
      if (x.kind === "copy") {
        if (!sameRef(x.ref, x.src as Ref)) locals.push(copy(dst, src));
      } else locals.push(reduce(dst, src, x.with ? region(x, x.with) : undefined));
    }
    const transfers = r.transfers.map((x) => {
      const t = x.kind === "send" ? send(x.peer, region(x, x.stage ?? x.ref)) : recv(x.peer, region(x, x.ref));
      return x.channel === 0 ? t : { ...t, channel: x.channel };
    });
    yield step(r.label, transfers, locals);
  }
  yield* tail;
}
