/**
 * Where the MSCCL import's chunk ranges live in memory (the placer: in place, input and output
 * alias as the collective says), and the race check: two threadblocks of a GPU touching a chunk,
 * one writing, with no chain of steps and messages ordering them, reject the program. Reads
 * actions (actions.ts) and the happens-before edges order.ts found; changes nothing.
 */
import type { Action, Context, Ref, Threadblocks } from "./actions.js";
import { at } from "./ir.js";

/** Per GPU, where an in-place call's output sits in its input (mem 0) or its input in its output (mem 1), in chunks. */
export type Alias = { readonly mem: 0 | 1; readonly off: number; readonly of: "i" | "o" } | undefined;

/** Where a chunk range lives, in the memory the analysis uses: in place, input and output alias as the collective says. */
export type Placer = (gpu: number, tb: number, r: Ref) => { mem: number; from: number; to: number };

export function placer(alias: readonly Alias[], inPlace: boolean): Placer {
  return (gpu, tb, r) => {
    if (r.buf === "t") return { mem: 3 + tb, from: r.off, to: r.off + r.cnt };
    if (r.buf === "s") return { mem: 2, from: r.off, to: r.off + r.cnt };
    const a = inPlace ? alias[gpu] : undefined;
    if (a && a.of === r.buf) return { mem: a.mem, from: a.off + r.off, to: a.off + r.off + r.cnt };
    const mem = r.buf === "i" ? 0 : 1;
    return { mem, from: r.off, to: r.off + r.cnt };
  };
}

export const overlaps = (x: { mem: number; from: number; to: number }, y: { mem: number; from: number; to: number }) =>
  x.mem === y.mem && x.from < y.to && y.from < x.to && x.to > x.from && y.to > y.from;

/**
 * Fails on the first race: vector clocks over every threadblock give happens-before (a
 * threadblock's order plus `hbPreds`: dependencies, a receive's send), and per memory cell any
 * two accesses from different threadblocks, one a write, must be ordered by it.
 */
export function checkRaces(
  ctx: Context,
  tbs: Threadblocks,
  hbPreds: readonly (readonly number[])[],
  order: readonly number[],
  place: Placer,
): void {
  const { program } = ctx;
  const { actions, tbActions, count: ntb } = tbs;
  // Vector clocks over every threadblock: clock[i][t] = how many of tb t's actions happen before action i, i's own included.
  const clock: Int32Array[] = new Array(actions.length);
  for (const i of order) {
    const a = actions[i] as Action;
    const c = new Int32Array(ntb);
    const prev = a.pos > 0 ? (tbActions[a.gpu]?.[a.tb]?.[a.pos - 1] as number) : -1;
    for (const p of prev >= 0 ? [prev, ...(hbPreds[i] ?? [])] : (hbPreds[i] ?? [])) {
      const pc = clock[p] as Int32Array;
      for (let t = 0; t < ntb; t++) if ((pc[t] as number) > (c[t] as number)) c[t] = pc[t] as number;
    }
    c[a.tbg] = a.pos + 1;
    clock[i] = c;
  }
  const rank = new Int32Array(actions.length);
  order.forEach((i, k) => {
    rank[i] = k;
  });
  for (const g of program.gpus) {
    // Per memory cell, its accesses (action, writes?), outside the threadblocks' own receive buffers.
    const cells = new Map<number, { i: number; write: boolean }[]>();
    const touch = (i: number, r: Ref, write: boolean) => {
      const a = actions[i] as Action;
      const p = place(a.gpu, a.tb, r);
      if (p.mem > 2) return;
      for (let x = p.from; x < p.to; x++) {
        const key = p.mem * 1_000_000 + x;
        let l = cells.get(key);
        if (!l) cells.set(key, (l = []));
        l.push({ i, write });
      }
    };
    for (const t of tbActions[g.id] ?? []) {
      for (const i of t) {
        const a = actions[i] as Action;
        if (a.kind === "send") touch(i, a.ref, false);
        else if (a.kind === "recv") touch(i, a.ref, true);
        else {
          if (a.src) touch(i, a.src, false);
          if (a.with) touch(i, a.with, false);
          touch(i, a.ref, true);
        }
      }
    }
    for (const [key, list] of cells) {
      list.sort((x, y) => (rank[x.i] as number) - (rank[y.i] as number));
      for (let p = 0; p < list.length; p++) {
        for (let q = p + 1; q < list.length; q++) {
          const x = list[p] as { i: number; write: boolean };
          const y = list[q] as { i: number; write: boolean };
          const ax = actions[x.i] as Action;
          const ay = actions[y.i] as Action;
          if (ax.tb === ay.tb || (!x.write && !y.write)) continue;
          if (((clock[y.i] as Int32Array)[ax.tbg] as number) > ax.pos) continue;
          const mem = Math.floor(key / 1_000_000);
          const cell = `${mem === 0 ? "i" : mem === 1 ? "o" : "s"}[${key % 1_000_000}]`;
          const verb = (w: boolean) => (w ? "writes" : "reads");
          ctx.fail(
            at(g.id),
            `race: ${at(g.id, ax.tb, ax.step, ax.type)} ${verb(x.write)} ${cell}${program.inplace ? " (in place)" : ""} and ${at(g.id, ay.tb, ay.step, ay.type)} ${verb(y.write)} it, and no dependency orders them (depid/deps, directly or through other steps and messages)`,
          );
        }
      }
    }
  }
}
