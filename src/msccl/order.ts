/**
 * MSCCL's ordering rules as a constraint graph, and the rounds it allows (the MSCCL import,
 * import.ts): edges for a threadblock's order, dependencies (depid/deps, resolved as the
 * executor does) and messages (a send and its receive are one node); each action's round is the
 * longest path to it, and a cycle through a receive or a dependency is a deadlock, failed with
 * the steps of the cycle. Sets Action.stage on sends that must go out of a copy; otherwise only
 * reads the actions (actions.ts) and the generic graph routines (graph.ts).
 */
import { type Action, type Context, describe, isTransfer, type Messages, type Threadblocks } from "./actions.js";
import { cyclePath, tarjan } from "./graph.js";
import { at, type StepType } from "./ir.js";
import { overlaps, type Placer } from "./races.js";

/** The constraint graph: edge i runs from node from[i] to node to[i] with weight w[i] (1: a later round). */
export interface Constraints {
  readonly edges: { readonly from: number[]; readonly to: number[]; readonly w: number[] };
  /** Happens-before predecessors of each action besides its threadblock's previous one (dependencies, a receive's send). */
  readonly hbPreds: number[][];
  /** Per GPU and tb: the receive buffer's size in chunks, the staged sends' copies included. */
  readonly stageAt: number[][];
}

/** Threadblock order, dependencies, messages (merged into one node); fails on a dependency the executor cannot meet. */
export function constraintGraph(ctx: Context, tbs: Threadblocks, msgs: Messages, place: Placer): Constraints {
  const { program, fail, notes } = ctx;
  const { actions, tbActions, firstOf, lastOf, tmpSize } = tbs;
  /** Per GPU and tb: where the next staged send's copy goes in the threadblock's buffer. */
  const stageAt = tmpSize.map((x) => [...x]);
  const edges: { from: number[]; to: number[]; w: number[] } = { from: [], to: [], w: [] };
  const edge = (x: Action, y: Action, w: number, _why: "tb" | "waw" | "dep") => {
    edges.from.push(x.node);
    edges.to.push(y.node);
    edges.w.push(w);
  };
  /** Happens-before predecessors of each action besides its threadblock's previous one (dependencies, a receive's send). */
  const hbPreds: number[][] = actions.map(() => []);
  for (const g of program.gpus) {
    for (const t of g.tbs) {
      const list = tbActions[g.id]?.[t.id] ?? [];
      let run: Action[] = [];
      for (let p = 1; p < list.length; p++) {
        const x = actions[list[p - 1] as number] as Action;
        const y = actions[list[p] as number] as Action;
        // A send is buffered, so what follows it may share its round; so may a receive after a
        // receive. A send after a receive, and any transfer after a local operation, may not:
        // the threadblock waits for the receive, and a round's local operations come last.
        const w = !isTransfer(y) ? 0 : x.kind === "send" || (x.kind === "recv" && y.kind === "recv") ? 0 : 1;
        edge(x, y, w, "tb");
        run = isTransfer(x) && isTransfer(y) && w === 0 ? [...run, x] : [];
        // A receive sharing a round with earlier transfers must not write what they read or
        // write: an earlier send then sends a copy taken before the round (what the executor's
        // connection buffer holds once the send is done); an earlier receive keeps its own round.
        if (y.kind === "recv") {
          const py = place(g.id, t.id, y.ref);
          for (const s of run) {
            if (!overlaps(place(g.id, t.id, s.ref), py)) continue;
            if (s.kind === "recv") edge(s, y, 1, "waw");
            else if (!s.stage) {
              s.stage = { buf: "t", off: stageAt[g.id]?.[t.id] ?? 0, cnt: s.ref.cnt };
              (stageAt[g.id] as number[])[t.id] = s.stage.off + s.ref.cnt;
            }
          }
        }
      }
      // Dependencies: nops hand theirs to the next step, as the executor chains them.
      let pending: { from: number; s: number; type: StepType }[] = [];
      for (const s of t.steps) {
        const here = at(g.id, t.id, s.s, s.type);
        if (s.depid >= 0) {
          const dt = g.tbs[s.depid];
          if (!dt) fail(here, `depends on tb ${s.depid} step ${s.deps}, but gpu ${g.id} has no threadblock ${s.depid}`);
          const depTb = dt as (typeof g.tbs)[number];
          if (s.deps >= depTb.steps.length) {
            fail(
              here,
              `depends on tb ${s.depid} step ${s.deps}, but tb ${s.depid} has only ${depTb.steps.length} steps`,
            );
          }
          // The executor waits until that threadblock's flag reaches the step; only steps with hasdep="1" set it.
          const j = depTb.steps.findIndex((x, i) => i >= s.deps && x.hasdep && x.type !== "nop");
          if (j < 0) {
            fail(
              here,
              `depends on tb ${s.depid} step ${s.deps}, but no step of tb ${s.depid} from ${s.deps} on has hasdep="1": the executor waits for that threadblock's flag, which is never set, so it would wait forever`,
            );
          }
          if (s.depid === t.id) {
            if (j >= s.s)
              fail(here, `depends on its own threadblock's step ${j}, which comes after it: it would wait forever`);
          } else pending.push({ from: lastOf[g.id]?.[s.depid]?.[j] as number, s: s.s, type: s.type });
        }
        if (s.type === "nop") continue;
        if (pending.length > 0 && s.depid < 0) {
          fail(
            here,
            "follows nop steps that carry dependencies but has none of its own: the executor rejects such a chain",
          );
        }
        const first = firstOf[g.id]?.[t.id]?.[s.s] as number;
        const y = actions[first] as Action;
        for (const d of pending) {
          const x = actions[d.from] as Action;
          edge(x, y, isTransfer(y) ? 1 : 0, "dep");
          hbPreds[first]?.push(d.from);
        }
        pending = [];
      }
      if (pending.length > 0) {
        notes.push(`${at(g.id, t.id)} ends with nop steps whose dependencies no step uses (the executor ignores them)`);
      }
    }
  }
  for (const [m, s] of msgs.sendOf.entries()) hbPreds[msgs.recvOf[m] as number]?.push(s);
  return { edges, hbPreds, stageAt };
}

/** Each action's round, and all actions in the order the analysis and the schedule take them. */
export interface Rounds {
  readonly roundOf: (a: Action) => number;
  /** Action indices by round, then topological order, sends before receives, then gpu, tb, position. */
  readonly order: readonly number[];
}

/** Strongly connected components, then the longest path; a component that cannot share one round is a deadlock. */
export function assignRounds(ctx: Context, tbs: Threadblocks, msgs: Messages, graph: Constraints): Rounds {
  const { fail } = ctx;
  const { actions } = tbs;
  const { messages, nodes } = msgs;
  const { edges } = graph;

  const adj: number[][] = Array.from({ length: nodes }, () => []);
  for (const [i, x] of edges.from.entries()) adj[x]?.push(i);
  const comp = tarjan(nodes, adj, edges.to);
  let ncomp = 0;
  for (const c of comp) ncomp = Math.max(ncomp, c + 1);
  const members: number[][] = Array.from({ length: ncomp }, () => []);
  for (const [v, c] of comp.entries()) members[c]?.push(v);
  const actionsOf: number[][] = Array.from({ length: nodes }, () => []);
  for (const [i, a] of actions.entries()) actionsOf[a.node]?.push(i);
  for (let i = 0; i < edges.from.length; i++) {
    const x = edges.from[i] as number;
    const y = edges.to[i] as number;
    const c = comp[x] as number;
    if (c !== comp[y]) continue;
    const cyc = members[c] as number[];
    if ((edges.w[i] as number) > 0 || cyc.some((v) => v >= messages) || x === y) {
      const steps = cyclePath(x, y, comp, adj, edges.to)
        .flatMap((v) => actionsOf[v] as number[])
        .map((k) => describe(actions[k] as Action));
      fail(
        at(actions[actionsOf[x]?.[0] as number]?.gpu ?? 0),
        `deadlock: these steps wait for each other in a cycle (a step after a receive waits for it; sends are buffered): ${steps.slice(0, 8).join("; ")}${steps.length > 8 ? "; ..." : ""}`,
      );
    }
  }
  // Tarjan numbers components in reverse topological order.
  const round = new Int32Array(ncomp);
  for (let c = ncomp - 1; c >= 0; c--) {
    for (const v of members[c] as number[]) {
      for (const i of adj[v] as number[]) {
        const d = comp[edges.to[i] as number] as number;
        if (d !== c) round[d] = Math.max(round[d] as number, (round[c] as number) + (edges.w[i] as number));
      }
    }
  }
  const roundOf = (a: Action) => round[comp[a.node] as number] as number;
  const topo = (a: Action) => ncomp - 1 - (comp[a.node] as number);

  const order = actions
    .map((_, i) => i)
    .sort((x, y) => {
      const a = actions[x] as Action;
      const b = actions[y] as Action;
      return (
        roundOf(a) - roundOf(b) ||
        topo(a) - topo(b) ||
        Number(a.kind === "recv") - Number(b.kind === "recv") ||
        a.gpu - b.gpu ||
        a.tb - b.tb ||
        a.pos - b.pos
      );
    });
  return { roundOf, order };
}
