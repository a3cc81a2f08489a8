/**
 * The geometry every network picture is drawn from (network.ts): drawn nodes (a router, a switch,
 * or a box standing for several) and shapes (a line for the links between two drawn nodes in one
 * direction, or a drawn node's own fill for the links it swallows), laid out by the topology's
 * layout: a torus or mesh grid, a ring, or levels (a fat-tree, a rail system, a file's graph).
 * Every link belongs to at most one shape. Large machines are aggregated so a picture stays
 * bounded: a grid beyond 1,024 routers becomes one cell per router (or block of routers), a
 * level beyond 128 nodes boxes of consecutive nodes, a ring beyond 128 routers sectors.
 */
import { maxOf } from "../core/extent.js";
import type { Topology } from "../model/network/types.js";
import { esc, px } from "./svg.js";

/** A drawn node: a rectangle (or a circle for r > 0) centred at (x, y). */
interface DrawnNode {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly round?: boolean;
  /** No outline (the cells of an aggregated grid: thousands of them). */
  readonly bare?: boolean;
}

/** A shape the heat colours: a drawn node's fill, or a line's stroke. */
export interface Shape {
  /** The element without its colour: '<rect ...' or '<line ...' (closed by the renderer). */
  readonly el: string;
  readonly attr: "fill" | "stroke";
}

export interface TopologyGeometry {
  readonly width: number;
  readonly height: number;
  readonly shapes: readonly Shape[];
  /** Per link: the shape showing it, -1 where it is not drawn. */
  readonly shapeOf: Int32Array;
  /** Text drawn under the colours (level names, coordinates), above nothing. */
  readonly labels: readonly string[];
  /** What the picture aggregates or leaves out, for the caption. */
  readonly notes: readonly string[];
}

export const WIDTH = 1000;
export const LEFT = 20;
export const TOP = 60;
/** Drawn nodes per level (levels) or per ring before consecutive ones share a box. */
const LEVEL_CAP = 128;
/** Routers a grid draws one by one (with every link); beyond, one cell per router or block. */
const GRID_DETAIL_MAX = 1024;
/** Cells per side of an aggregated grid. */
const GRID_CELLS_MAX = 128;

/** Geometry builder shared by the layouts: drawn nodes, lines between them keyed by direction. */
class Builder {
  readonly nodes: DrawnNode[] = [];
  readonly lines = new Map<number, number>();
  readonly shapes: Shape[] = [];
  readonly shapeOf: Int32Array;
  readonly labels: string[] = [];
  readonly notes: string[] = [];
  /** Shape id of drawn node i (its fill), made when first used. */
  private readonly nodeShape: number[] = [];
  constructor(linkCount: number) {
    this.shapeOf = new Int32Array(linkCount).fill(-1);
  }
  node(n: DrawnNode): number {
    this.nodes.push(n);
    this.nodeShape.push(-1);
    return this.nodes.length - 1;
  }
  /** Link l shown as drawn node a's fill. */
  inNode(l: number, a: number): void {
    let s = this.nodeShape[a] as number;
    if (s < 0) {
      s = this.shapes.length;
      this.shapes.push(nodeShape(this.nodes[a] as DrawnNode));
      this.nodeShape[a] = s;
    }
    this.shapeOf[l] = s;
  }
  /** Link l shown as the line from drawn node a to b (one per direction, offset to the right of travel). */
  between(l: number, a: number, b: number, stub?: { dx: number; dy: number }): void {
    const key = stub
      ? -1 - (a * 4 + (stub.dx > 0 ? 0 : stub.dx < 0 ? 1 : stub.dy > 0 ? 2 : 3))
      : a * this.nodes.length + b;
    let s = this.lines.get(key);
    if (s === undefined) {
      const A = this.nodes[a] as DrawnNode;
      const B = this.nodes[b] as DrawnNode;
      s = this.shapes.length;
      this.shapes.push(stub ? lineShape(A, { x: A.x + stub.dx, y: A.y + stub.dy, w: 0, h: 0 }, true) : lineShape(A, B));
      this.lines.set(key, s);
    }
    this.shapeOf[l] = s;
  }
  /** Link l shown as a bar under drawn node a: side 0 (left) for links into it, 1 (right) for links out of it. */
  bar(l: number, a: number, side: 0 | 1): void {
    const key = -1e9 - (a * 2 + side);
    let s = this.lines.get(key);
    if (s === undefined) {
      const A = this.nodes[a] as DrawnNode;
      const w = Math.max(1.5, A.w / 2 - 0.5);
      s = this.shapes.length;
      this.shapes.push({
        el: `<rect x="${px(A.x - A.w / 2 + side * (A.w / 2 + 0.5))}" y="${px(A.y + A.h / 2 + 3)}" width="${px(w)}" height="34"`,
        attr: "fill",
      });
      this.lines.set(key, s);
    }
    this.shapeOf[l] = s;
  }
  geometry(width: number, height: number): TopologyGeometry {
    // Nodes no link colours (a switch between levels) drawn plain, over the lines.
    const plain = this.nodes.flatMap((n, i) => {
      if ((this.nodeShape[i] as number) >= 0) return [];
      const sh = nodeShape(n);
      return [`${sh.el} fill="#fff"/>`];
    });
    this.labels.unshift(...plain);
    return { width, height, shapes: this.shapes, shapeOf: this.shapeOf, labels: this.labels, notes: this.notes };
  }
}

function nodeShape(n: DrawnNode): Shape {
  if (n.round) return { el: `<circle cx="${px(n.x)}" cy="${px(n.y)}" r="${px(n.w / 2)}" stroke="#333"`, attr: "fill" };
  return {
    el: `<rect x="${px(n.x - n.w / 2)}" y="${px(n.y - n.h / 2)}" width="${px(n.w)}" height="${px(n.h)}"${n.bare ? "" : ' stroke="#333" stroke-width="0.5"'}`,
    attr: "fill",
  };
}

/** A line from A's edge to B's edge, shifted to the right of the direction of travel so the two directions part. */
function lineShape(A: DrawnNode, B: DrawnNode, stub = false): Shape {
  const dx = B.x - A.x;
  const dy = B.y - A.y;
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len;
  const uy = dy / len;
  const off = Math.min(3, Math.max(1, Math.min(A.w, A.h) / 5));
  // Right of travel in SVG coordinates (y down): (-uy, ux).
  const ox = -uy * off;
  const oy = ux * off;
  const trimA = Math.min(len / 3, Math.abs(ux) * (A.w / 2) + Math.abs(uy) * (A.h / 2) + 1);
  const trimB = stub ? 0 : Math.min(len / 3, Math.abs(ux) * (B.w / 2) + Math.abs(uy) * (B.h / 2) + 1);
  const width = Math.max(1, Math.min(3, off * 0.9));
  return {
    el: `<line x1="${px(A.x + ux * trimA + ox)}" y1="${px(A.y + uy * trimA + oy)}" x2="${px(B.x - ux * trimB + ox)}" y2="${px(B.y - uy * trimB + oy)}" stroke-width="${px(width)}"${stub ? ' stroke-dasharray="2,1"' : ""}`,
    attr: "stroke",
  };
}

/** The topology's drawing: its layout's, or levels by hops from the hosts where it has none. */
export function topologyGeometry(t: Topology): TopologyGeometry {
  const layout = t.layout;
  if (layout?.kind === "grid") return gridGeometry(t, layout.dims, layout.coords);
  if (layout?.kind === "ring") return ringGeometry(t);
  if (layout?.kind === "levels") return levelsGeometry(t, layout.level, layout.index);
  return levelsGeometry(t, ...hopLevels(t));
}

function gridGeometry(
  t: Topology,
  dims: readonly number[],
  coords: (node: number) => readonly number[],
): TopologyGeometry {
  const A = dims[0] ?? 1;
  const B = dims[1] ?? 1;
  let Z = 1;
  for (let d = 2; d < dims.length; d++) Z *= dims[d] as number;
  const L = t.links;
  const b = new Builder(L.count);
  const slices = Z <= 8 && A * B * Z <= GRID_DETAIL_MAX;
  if (slices) {
    // Every router, every x and y link; z (and higher) links and host links as the router's fill.
    const s = Math.max(14, Math.min(64, Math.floor(Math.min(900 / (Math.min(Z, 4) * (A + 1)), 560 / (B + 1)))));
    const perRow = Math.min(Z, 4);
    const sliceW = (A + 1) * s;
    const sliceH = (B + 1) * s + 18;
    const q = s * 0.38;
    const at = new Map<string, number>();
    for (let z = 0; z < Z; z++) {
      const ox = LEFT + (z % perRow) * sliceW;
      const oy = TOP + Math.floor(z / perRow) * sliceH + 18;
      if (Z > 1)
        b.labels.push(
          `<text x="${px(ox + s / 2)}" y="${px(oy - 6)}" font-size="12">slice ${z} of dimensions 3+</text>`,
        );
      for (let y = 0; y < B; y++)
        for (let x = 0; x < A; x++)
          at.set(`${x},${y},${z}`, b.node({ x: ox + (x + 1) * s, y: oy + (y + 0.5) * s, w: q, h: q }));
    }
    const key = (c: readonly number[]) => {
      let z = 0;
      for (let d = dims.length - 1; d >= 2; d--) z = z * (dims[d] as number) + (c[d] as number);
      return `${c[0] ?? 0},${c[1] ?? 0},${z}`;
    };
    for (let l = 0; l < L.count; l++) {
      const cf = coords(L.from[l] as number);
      const ct = coords(L.to[l] as number);
      const a = at.get(key(cf)) as number;
      let d = -1;
      for (let k = 0; k < cf.length; k++) if (cf[k] !== ct[k]) d = k;
      if (d < 0 || d >= 2) {
        b.inNode(l, a);
        continue;
      }
      const delta = (ct[d] as number) - (cf[d] as number);
      if (Math.abs(delta) === 1) b.between(l, a, at.get(key(ct)) as number);
      else {
        // A wrap-around link: a dashed stub leaving the grid the way it travels.
        const dir = delta > 0 ? -1 : 1;
        b.between(l, a, a, d === 0 ? { dx: dir * s * 0.5, dy: 0 } : { dx: 0, dy: dir * s * 0.5 });
      }
    }
    b.notes.push(
      `every router drawn (squares), one line per link direction (traffic keeps right), wrap-around links as dashed stubs; a router's colour is its host links${dims.length > 2 ? " and its links in dimensions 3+" : ""}`,
    );
    const rows = Math.ceil(Z / perRow);
    return b.geometry(LEFT * 2 + perRow * sliceW, TOP + rows * sliceH + 10);
  }
  // Aggregated: one cell per router (or block of routers) of the first two dimensions, coloured
  // by the hottest link leaving any router in it (host links included).
  const bx = Math.ceil(A / GRID_CELLS_MAX);
  const by = Math.ceil(B / GRID_CELLS_MAX);
  const cols = Math.ceil(A / bx);
  const rows = Math.ceil(B / by);
  const cell = Math.max(2, Math.min(24, Math.floor(Math.min(900 / cols, 640 / rows))));
  const ids = new Int32Array(cols * rows).fill(-1);
  for (let l = 0; l < L.count; l++) {
    const c = coords(L.from[l] as number);
    const i = Math.floor((c[0] ?? 0) / bx) + cols * Math.floor((c[1] ?? 0) / by);
    let id = ids[i] as number;
    if (id < 0) {
      const cx = i % cols;
      const cy = Math.floor(i / cols);
      id = b.node({ x: LEFT + (cx + 0.5) * cell, y: TOP + (cy + 0.5) * cell, w: cell, h: cell, bare: true });
      ids[i] = id;
    }
    b.inNode(l, id);
  }
  const block = bx * by > 1 ? `block of ${bx}x${by} routers` : "router";
  b.notes.push(
    `${A * B * Z} routers, too many to draw each link: one cell per ${block}${dims.length > 2 ? ` of the first two dimensions (dimensions 3+ aggregated: the hottest over them)` : ""}, coloured by the hottest link leaving it (host links included)`,
  );
  return b.geometry(LEFT * 2 + cols * cell, TOP + rows * cell + 10);
}

function ringGeometry(t: Topology): TopologyGeometry {
  const R = t.hosts;
  const L = t.links;
  const b = new Builder(L.count);
  const bin = Math.ceil(R / LEVEL_CAP);
  const P = Math.ceil(R / bin);
  const radius = Math.min(300, Math.max(110, P * 6));
  const cx = LEFT + 40 + radius;
  const cy = TOP + 20 + radius;
  const dot = Math.max(6, Math.min(22, ((2 * Math.PI * radius) / P) * 0.4));
  const ids: number[] = [];
  for (let p = 0; p < P; p++) {
    const a = (2 * Math.PI * p) / P - Math.PI / 2;
    ids.push(b.node({ x: cx + radius * Math.cos(a), y: cy + radius * Math.sin(a), w: dot, h: dot, round: true }));
  }
  const pos = (n: number) => Math.floor((n >= R ? n - R : n) / bin);
  for (let l = 0; l < L.count; l++) {
    const a = pos(L.from[l] as number);
    const c = pos(L.to[l] as number);
    if (a === c) b.inNode(l, ids[a] as number);
    else b.between(l, ids[a] as number, ids[c] as number);
  }
  b.notes.push(
    bin > 1
      ? `${R} routers in ${P} sectors of ${bin}: a line per sector pair and direction (traffic keeps right), a dot's colour is its routers' host links and the links inside it`
      : "every router (dots), one line per link direction (traffic keeps right); a dot's colour is its host links",
  );
  return b.geometry(cx + radius + 40, cy + radius + 40);
}

/** Levels by hops from the hosts (breadth-first over links either way), for topologies without a layout. */
function hopLevels(t: Topology): [(n: number) => number, (n: number) => number] {
  const N = t.nodeCount;
  const adj: number[][] = Array.from({ length: N }, () => []);
  for (let l = 0; l < t.links.count; l++) {
    const f = t.links.from[l] as number;
    const g = t.links.to[l] as number;
    adj[f]?.push(g);
    adj[g]?.push(f);
  }
  const level = new Int32Array(N).fill(-1);
  const queue: number[] = [];
  for (let h = 0; h < t.hosts; h++) {
    const n = t.hostNode(h);
    level[n] = 0;
    queue.push(n);
  }
  for (let i = 0; i < queue.length; i++) {
    const n = queue[i] as number;
    for (const m of adj[n] ?? [])
      if (level[m] === -1) {
        level[m] = (level[n] as number) + 1;
        queue.push(m);
      }
  }
  let top = 0;
  for (const v of level) top = Math.max(top, v);
  for (let n = 0; n < N; n++) if (level[n] === -1) level[n] = top + 1;
  const index = new Int32Array(N);
  const count = new Map<number, number>();
  for (let n = 0; n < N; n++) {
    const v = level[n] as number;
    index[n] = count.get(v) ?? 0;
    count.set(v, (index[n] as number) + 1);
  }
  return [(n) => level[n] as number, (n) => index[n] as number];
}

function levelsGeometry(t: Topology, level: (n: number) => number, index: (n: number) => number): TopologyGeometry {
  const N = t.nodeCount;
  const counts: number[] = [];
  const first: number[] = [];
  for (let n = 0; n < N; n++) {
    const v = level(n);
    if ((counts[v] ?? 0) <= index(n)) counts[v] = index(n) + 1;
    if (first[v] === undefined) first[v] = n;
  }
  const levels = counts.length;
  const bins = counts.map((c) => Math.ceil((c ?? 1) / LEVEL_CAP));
  const positions = counts.map((c, v) => Math.ceil((c ?? 1) / (bins[v] as number)));
  const gap = levels > 3 ? 130 : 170;
  // Thousands of hosts under tens of switches or more: hosts are not drawn; their links are bars
  // under the switch at the other end (into the switch left, out of it right).
  const hostBars = levels > 1 && (bins[0] as number) > 1 && (positions[1] as number) >= 8;
  const lowest = hostBars ? 1 : 0;
  const labelW = 130;
  // About 36 px per node on the widest level, so a small machine is not drawn thin across the page.
  const plotW = Math.max(320, Math.min(WIDTH - labelW - LEFT, maxOf(positions, 0) * 36));
  const b = new Builder(t.links.count);
  const ids: number[][] = [];
  if (hostBars) {
    ids.push([]);
    b.labels.push(
      `<text x="${LEFT}" y="${px(TOP + 20 + (levels - 1 - lowest) * gap + 32)}" font-size="11" fill="#555">${esc(t.nodeName(first[0] as number).replace(/[\d(),\s-]+$/, "") || "host")} ×${counts[0] ?? 0} (bars)</text>`,
    );
  }
  for (let v = lowest; v < levels; v++) {
    const P = positions[v] as number;
    const y = TOP + 20 + (levels - 1 - v) * gap;
    const w = Math.max(2, Math.min(26, (plotW / P) * 0.7));
    const row: number[] = [];
    for (let p = 0; p < P; p++) row.push(b.node({ x: labelW + ((p + 0.5) * plotW) / P, y, w, h: 12 }));
    ids.push(row);
    const name = t.nodeName(first[v] as number).replace(/[\d(),\s-]+$/, "") || `level ${v}`;
    const per = (bins[v] as number) > 1 ? `, ${bins[v]} per box` : "";
    b.labels.push(`<text x="${LEFT}" y="${px(y + 4)}" font-size="13">${esc(name)} ×${counts[v] ?? 0}</text>`);
    if (per)
      b.labels.push(`<text x="${LEFT}" y="${px(y + 19)}" font-size="11" fill="#555">${esc(per.slice(2))}</text>`);
  }
  const at = (n: number) => {
    const v = level(n);
    return (ids[v] as number[])[Math.floor(index(n) / (bins[v] as number))] as number;
  };
  for (let l = 0; l < t.links.count; l++) {
    const f = t.links.from[l] as number;
    const g = t.links.to[l] as number;
    if (hostBars && (level(f) === 0 || level(g) === 0)) {
      // A host-to-host link (a file topology's forwarding hosts) has no switch to hang from: not drawn.
      if (level(f) !== 0) b.bar(l, at(f), 1);
      else if (level(g) !== 0) b.bar(l, at(g), 0);
      continue;
    }
    const a = at(f);
    const c = at(g);
    if (a === c) b.inNode(l, a);
    else b.between(l, a, c);
  }
  const boxed = bins.some((x) => x > 1);
  if (hostBars)
    b.notes.push(
      `${counts[0]} hosts not drawn: each switch box has two bars under it, the hottest of its links from hosts (left) and to hosts (right)`,
    );
  b.notes.push(
    boxed
      ? `levels bottom up; levels of more than ${LEVEL_CAP} nodes drawn as boxes of consecutive nodes, a line per box pair and direction showing the hottest link between them (up on the right of travel); a box's colour is the links inside it`
      : "levels bottom up; one line per link direction (traffic keeps right: up and down links part)",
  );
  return b.geometry(labelW + plotW + LEFT, TOP + 20 + (levels - 1 - lowest) * gap + (hostBars ? 60 : 40));
}
