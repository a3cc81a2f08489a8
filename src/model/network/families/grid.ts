/**
 * Direct networks on a grid: `ring:N`, `torus:AxB[xC...]` and `mesh:AxB[xC...]`. One router per
 * grid point, each with one host attached by an injection and an ejection link; routers joined to
 * their neighbours in every dimension by one link each way (a torus wraps round, a mesh does
 * not). A ring is the one-dimensional torus.
 *
 * Numbering: grid point (x0, x1, ..., x{D-1}) is index x0 + A0·(x1 + A1·(x2 + ...)), dimension 0
 * fastest (row-major with x0 as the column). Host h sits at grid point h and is node h; its router
 * is node R + h (R grid points). Links: host h's injection link is 2h and its ejection link 2h+1;
 * then the network links, router by router, dimension by dimension, '+' before '-'.
 *
 * A torus dimension of size 2 has one neighbour each way: router 0's '+' link goes to 1 and
 * router 1's '+' link wraps to 0, and there is no '-' link (it would duplicate the '+' one); a
 * route in that dimension uses the '+' link. Size 1 (a ring of one) has no network link.
 *
 * Routing: 'dor' (the default) is dimension order, dimension 0 first, the shorter way round each
 * ring, a tie (exactly half way) going '+'. 'minimal' splits a message evenly over the minimal
 * paths: every order of the dimensions that need moving and, on a tie, both directions (one
 * direction when the ring has size 2): at most D!·2^D paths.
 */
import { checkPair, LinkTable } from "../builder.js";
import type { Topology } from "../types.js";

export interface GridParams {
  readonly family: "ring" | "torus" | "mesh";
  readonly dims: readonly number[];
  readonly wrap: boolean;
  /** Network link bandwidth (B/µs) and latency (µs). */
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
  /** Host link bandwidth; default the sum of the router's outgoing network links. */
  readonly injection?: number;
  readonly routing: "dor" | "minimal";
}

const PLUS = 0;
const MINUS = 1;

export function gridTopology(p: GridParams): Topology {
  const D = p.dims.length;
  const dims = Int32Array.from(p.dims);
  const stride = new Int32Array(D);
  let R = 1;
  for (let d = 0; d < D; d++) {
    stride[d] = R;
    R *= dims[d]!;
  }
  const table = new LinkTable();
  // out[(r*D + d)*2 + dir]: the link leaving router r in dimension d, direction dir; -1 if none.
  const out = new Int32Array(R * D * 2).fill(-1);
  const degree = new Int32Array(R);
  for (let r = 0; r < R; r++) {
    for (let d = 0; d < D; d++) {
      const A = dims[d]!;
      const x = Math.floor(r / stride[d]!) % A;
      const hasPlus = p.wrap ? A >= 2 : x < A - 1;
      const hasMinus = p.wrap ? A >= 3 : x > 0;
      if (hasPlus) degree[r]!++;
      if (hasMinus) degree[r]!++;
    }
  }
  for (let h = 0; h < R; h++) {
    const bw = p.injection ?? Math.max(1, degree[h]!) * p.link;
    table.add(h, R + h, bw, p.latency, "inject");
    table.add(R + h, h, bw, 0, "eject");
  }
  const axis = (d: number) => (D <= 3 ? "xyz"[d]! : `d${d}`);
  for (let r = 0; r < R; r++) {
    for (let d = 0; d < D; d++) {
      const A = dims[d]!;
      const s = stride[d]!;
      const x = Math.floor(r / s) % A;
      const base = (r * D + d) * 2;
      const hasPlus = p.wrap ? A >= 2 : x < A - 1;
      const hasMinus = p.wrap ? A >= 3 : x > 0;
      if (hasPlus) {
        const next = r + ((x + 1) % A) * s - x * s;
        out[base + PLUS] = table.add(R + r, R + next, p.link, p.latency, `${axis(d)}+`);
      }
      if (hasMinus) {
        const prev = r + ((x - 1 + A) % A) * s - x * s;
        out[base + MINUS] = table.add(R + r, R + prev, p.link, p.latency, `${axis(d)}-`);
      } else if (p.wrap && A === 2) out[base + MINUS] = out[base + PLUS]!;
    }
  }
  const links = table.finish();

  /** Steps and direction in dimension d from coordinate xa to xb (dir -1 when it is a tie). */
  const move = (d: number, xa: number, xb: number): { steps: number; dir: number; tie: boolean } => {
    const A = dims[d]!;
    if (!p.wrap)
      return xb >= xa ? { steps: xb - xa, dir: PLUS, tie: false } : { steps: xa - xb, dir: MINUS, tie: false };
    const delta = (xb - xa + A) % A;
    if (2 * delta < A) return { steps: delta, dir: PLUS, tie: false };
    if (2 * delta > A) return { steps: A - delta, dir: MINUS, tie: false };
    return { steps: delta, dir: PLUS, tie: A > 2 };
  };
  /** Appends the links of `steps` moves from router cur in dimension d, direction dir; returns the router reached. */
  const walk = (cur: number, d: number, dir: number, steps: number, path: number[]): number => {
    const A = dims[d]!;
    const s = stride[d]!;
    let x = Math.floor(cur / s) % A;
    for (let k = 0; k < steps; k++) {
      path.push(out[(cur * D + d) * 2 + dir]!);
      const nx = dir === PLUS ? (x + 1) % A : (x - 1 + A) % A;
      cur += (nx - x) * s;
      x = nx;
    }
    return cur;
  };
  const coord = (r: number, d: number) => Math.floor(r / stride[d]!) % dims[d]!;

  const route = (a: number, b: number, _flow: number, path: number[]): void => {
    checkPair(a, b, R, "route");
    path.length = 0;
    path.push(2 * a);
    let cur = a;
    for (let d = 0; d < D; d++) {
      const m = move(d, coord(cur, d), coord(b, d));
      cur = walk(cur, d, m.dir, m.steps, path);
    }
    path.push(2 * b + 1);
  };

  const paths = (a: number, b: number, flow: number): number[][] => {
    if (p.routing === "dor") {
      const one: number[] = [];
      route(a, b, flow, one);
      return [one];
    }
    checkPair(a, b, R, "paths");
    const moving: { d: number; steps: number; dirs: number[] }[] = [];
    for (let d = 0; d < D; d++) {
      const m = move(d, coord(a, d), coord(b, d));
      if (m.steps > 0) moving.push({ d, steps: m.steps, dirs: m.tie ? [PLUS, MINUS] : [m.dir] });
    }
    const result: number[][] = [];
    const order: number[] = [];
    const used = new Array<boolean>(moving.length).fill(false);
    const dirOf = new Int32Array(moving.length);
    const emit = () => {
      const path = [2 * a];
      let cur = a;
      for (const i of order) {
        const m = moving[i]!;
        cur = walk(cur, m.d, dirOf[i]!, m.steps, path);
      }
      path.push(2 * b + 1);
      result.push(path);
    };
    const chooseDirs = (i: number) => {
      if (i === moving.length) return emit();
      for (const dir of moving[i]!.dirs) {
        dirOf[i] = dir;
        chooseDirs(i + 1);
      }
    };
    const permute = () => {
      if (order.length === moving.length) return chooseDirs(0);
      for (let i = 0; i < moving.length; i++) {
        if (used[i]) continue;
        used[i] = true;
        order.push(i);
        permute();
        order.pop();
        used[i] = false;
      }
    };
    permute();
    return result;
  };

  const name = p.family === "ring" ? `ring:${R}` : `${p.family}:${p.dims.join("x")}`;
  const rowLength = dims[0]!;
  const routingWords =
    p.routing === "dor"
      ? D === 1
        ? "the shorter way round the ring; a tie (exactly half way) goes +"
        : `dimension order (dimension 0 first), ${p.wrap ? "the shorter way round each ring, a tie going +" : "straight along each dimension"}`
      : `minimal multipath: split evenly over every order of the dimensions to move${p.wrap ? " and, on a tie, both ways round" : ""}`;
  return {
    name,
    family: p.family,
    nodeCount: 2 * R,
    nodeKind: (node) => (node < R ? "host" : "switch"),
    nodeName: (node) => {
      const r = node < R ? node : node - R;
      const c = Array.from({ length: D }, (_, d) => coord(r, d));
      const where = D === 1 ? String(c[0]) : `(${c.join(",")})`;
      return node < R ? `h${r}` : `r${where}`;
    },
    hosts: R,
    hostNode: (h) => h,
    links,
    hopLatency: p.hopLatency,
    routing: routingWords,
    route,
    paths,
    groups: D === 1 ? R : R / rowLength,
    group: (h) => (D === 1 ? h : Math.floor(h / rowLength)),
    groupName: D === 1 ? "host" : "row",
    layout:
      p.family === "ring"
        ? { kind: "ring" }
        : {
            kind: "grid",
            dims: p.dims,
            coords: (node) => {
              const r = node < R ? node : node - R;
              return Array.from({ length: D }, (_, d) => coord(r, d));
            },
          },
  };
}
