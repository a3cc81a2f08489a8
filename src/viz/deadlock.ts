/**
 * Pictures of a deadlock's wait-for graph, from a DeadlockError: each blocked rank is a node
 * showing the operation it is stuck in, each blocked operation an edge to the rank it waits
 * for, and the cycle (the reason nobody can move) drawn in red. SVG for browsers and docs,
 * DOT for Graphviz users (`dot -Tpng`).
 */
import type { BlockedOp } from "../core/errors.js";
import { maxOf } from "../core/extent.js";
import { esc, px, svgDocument } from "./svg.js";

/** What the renderers read from a DeadlockError (so a plain object serialised from one works too). */
export interface WaitFor {
  readonly blocked: readonly BlockedOp[];
  readonly cycle: readonly number[];
}

/** 'send(to 1, 2 x float32, 'exchange')', as the deadlock message writes it. */
export function blockedText(b: BlockedOp): string {
  const dir = b.kind === "send" ? "to" : "from";
  const label = b.label !== undefined ? `, '${b.label}'` : "";
  return `${b.kind}(${dir} ${b.peer}, ${b.count} x ${b.dtype}${label})`;
}

interface Node {
  readonly rank: number;
  readonly ops: string[];
  readonly blocked: boolean;
}

interface Edge {
  readonly from: number;
  readonly to: number;
  readonly kind: string;
  readonly inCycle: boolean;
}

/** Nodes (cycle ranks first, in cycle order) and waits-for edges, one per blocked operation. */
export function waitForGraph(err: WaitFor): { nodes: Node[]; edges: Edge[]; cycleEdges: [number, number][] } {
  const cycleEdges: [number, number][] = err.cycle.map((r, i) => [r, err.cycle[(i + 1) % err.cycle.length] as number]);
  const onCycle = new Set(cycleEdges.map(([a, b]) => `${a}>${b}`));
  const order: number[] = [];
  const add = (r: number) => {
    if (!order.includes(r)) order.push(r);
  };
  for (const r of err.cycle) add(r);
  for (const b of [...err.blocked].sort((p, q) => p.rank - q.rank)) add(b.rank);
  for (const b of err.blocked) add(b.peer);
  const nodes = order.map((rank) => {
    const ops = err.blocked.filter((b) => b.rank === rank).map(blockedText);
    return { rank, ops, blocked: ops.length > 0 };
  });
  const seen = new Set<string>();
  const edges: Edge[] = [];
  for (const b of err.blocked) {
    const key = `${b.rank}>${b.peer}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push({ from: b.rank, to: b.peer, kind: b.kind, inCycle: onCycle.has(key) });
  }
  return { nodes, edges, cycleEdges };
}

function cycleTitle(err: WaitFor): string {
  if (err.cycle.length === 0) return "deadlock: blocked ranks (no wait-for cycle)";
  return `deadlock: wait-for cycle ${[...err.cycle, err.cycle[0]].map((r) => `rank ${r}`).join(" -> ")}`;
}

const RED = "#d62728";

/** The wait-for graph as a standalone SVG document. */
export function deadlockSvg(err: WaitFor): string {
  const { nodes, edges } = waitForGraph(err);
  const title = cycleTitle(err);
  // 13 px monospace runs about 7.9 px a character.
  const boxW = maxOf(
    nodes.flatMap((n) => n.ops.map((o) => `blocked in ${o}`.length * 8 + 32)),
    170,
  );
  const boxH = (n: Node) => 36 + Math.max(1, n.ops.length) * 18;
  const maxH = maxOf(nodes.map(boxH), 45);
  const count = nodes.length;
  // Nodes on a circle big enough that neighbouring boxes do not touch.
  const radius = count <= 1 ? 0 : Math.max(110, ((boxW + 60) * count) / (2 * Math.PI), count === 2 ? boxW * 0.8 : 0);
  // Two ranks sit side by side: no need for the circle's height.
  const ry = count === 2 ? 0 : radius;
  const cx = radius + boxW / 2 + 30;
  const cy = 130 + ry + maxH / 2;
  const width = Math.max(2 * cx, 520);
  const height = cy + ry + maxH / 2 + 110;
  const pos = new Map<number, { x: number; y: number; h: number }>();
  nodes.forEach((n, i) => {
    // Start at the left so a two-rank cycle reads left to right.
    const a = Math.PI + (2 * Math.PI * i) / Math.max(1, count);
    pos.set(n.rank, { x: width / 2 + radius * Math.cos(a), y: cy + ry * Math.sin(a), h: boxH(n) });
  });

  const body: string[] = [`<text x="20" y="30" font-size="18" font-weight="bold">${esc(title)}</text>`];
  body.push('<g class="edges">');
  for (const e of edges) {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    if (!a || !b) continue;
    // Curve every edge to its right, so 0 -> 1 and 1 -> 0 are two visible arcs.
    const mx = (a.x + b.x) / 2;
    const my = (a.y + b.y) / 2;
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const len = Math.hypot(dx, dy) || 1;
    const bend = Math.min(70, len * 0.25);
    const qx = mx - (dy / len) * bend;
    const qy = my + (dx / len) * bend;
    const p1 = clip(a, qx, qy, boxW);
    const p2 = clip(b, qx, qy, boxW);
    const color = e.inCycle ? RED : "#777";
    const wdt = e.inCycle ? 3 : 1.5;
    const cls = e.inCycle ? "edge cycle" : "edge";
    const text = `rank ${e.from} waits for rank ${e.to} (${e.kind})`;
    body.push(
      `<g class="${cls}" data-from="${e.from}" data-to="${e.to}"><title>${esc(text)}</title>`,
      `<path d="M${px(p1.x)},${px(p1.y)} Q${px(qx)},${px(qy)} ${px(p2.x)},${px(p2.y)}" fill="none" stroke="${color}" stroke-width="${wdt}" marker-end="url(#${e.inCycle ? "head-red" : "head-grey"})"/>`,
      `<text x="${px(qx)}" y="${px(qy + 4)}" font-size="13" text-anchor="middle" fill="${color}" stroke="#fff" stroke-width="3" paint-order="stroke">waits for (${e.kind})</text>`,
      "</g>",
    );
  }
  body.push("</g>", '<g class="nodes">');
  const cycleRanks = new Set(err.cycle);
  for (const n of nodes) {
    const p = pos.get(n.rank) as { x: number; y: number; h: number };
    const inCycle = cycleRanks.has(n.rank);
    const stroke = inCycle ? RED : "#555";
    const fill = inCycle ? "#fde8e8" : n.blocked ? "#f3f3f3" : "#ffffff";
    const x0 = p.x - boxW / 2;
    const y0 = p.y - p.h / 2;
    body.push(
      `<g class="${inCycle ? "node cycle" : "node"}" data-rank="${n.rank}">`,
      `<rect x="${px(x0)}" y="${px(y0)}" width="${px(boxW)}" height="${p.h}" rx="8" fill="${fill}" stroke="${stroke}" stroke-width="${inCycle ? 2.5 : 1.2}"/>`,
      `<text x="${px(p.x)}" y="${px(y0 + 22)}" font-size="16" font-weight="bold" text-anchor="middle">rank ${n.rank}</text>`,
    );
    const lines = n.ops.length > 0 ? n.ops.map((o) => `blocked in ${o}`) : ["not blocked (finished or elsewhere)"];
    lines.forEach((l, i) => {
      body.push(
        `<text x="${px(p.x)}" y="${px(y0 + 44 + i * 18)}" font-size="13" font-family="Menlo, Consolas, monospace" text-anchor="middle">${esc(l)}</text>`,
      );
    });
    body.push("</g>");
  }
  body.push("</g>");
  body.push(
    `<text x="20" y="${px(height - 20)}" font-size="13" fill="#555">red: the wait-for cycle; an arrow a -> b means rank a cannot finish its operation until rank b posts the matching one</text>`,
  );
  const head = (id: string, c: string) =>
    `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="${c}"/></marker>`;
  return svgDocument(width, height, title, body, head("head-red", RED) + head("head-grey", "#777"));
}

/** Where the line from a box's centre towards (tx, ty) leaves the box. */
function clip(c: { x: number; y: number; h: number }, tx: number, ty: number, boxW: number): { x: number; y: number } {
  const dx = tx - c.x;
  const dy = ty - c.y;
  const t = Math.min(dx === 0 ? Infinity : boxW / 2 / Math.abs(dx), dy === 0 ? Infinity : c.h / 2 / Math.abs(dy));
  return Number.isFinite(t) ? { x: c.x + dx * t, y: c.y + dy * t } : { x: c.x, y: c.y };
}

function dotString(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/** The wait-for graph in Graphviz DOT. */
export function deadlockDot(err: WaitFor): string {
  const { nodes, edges } = waitForGraph(err);
  const cycleRanks = new Set(err.cycle);
  const lines = [
    "digraph deadlock {",
    `  label=${dotString(cycleTitle(err))};`,
    "  labelloc=t;",
    '  graph [fontname="Courier", fontsize=17, pad=0.3, nodesep=0.7, ranksep=0.9];',
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Courier", fontsize=14, margin="0.25,0.12"];',
    '  edge [fontname="Courier", fontsize=13];',
  ];
  for (const n of nodes) {
    const text = [`rank ${n.rank}`, ...(n.ops.length > 0 ? n.ops.map((o) => `blocked in ${o}`) : ["not blocked"])];
    const style = cycleRanks.has(n.rank) ? ', color="#d62728", fillcolor="#fde8e8", penwidth=2' : "";
    lines.push(`  r${n.rank} [label=${dotString(text.join("\n"))}${style}];`);
  }
  for (const e of edges) {
    const style = e.inCycle ? ', color="#d62728", fontcolor="#d62728", penwidth=2.5' : ', color="#777777"';
    lines.push(`  r${e.from} -> r${e.to} [label=${dotString(`waits for (${e.kind})`)}${style}];`);
  }
  lines.push("}", "");
  return lines.join("\n");
}
