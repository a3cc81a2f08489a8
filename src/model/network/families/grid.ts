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
 * A host drives every link of its router at once: its injection and ejection links carry, by
 * default, the router's outgoing links together (2D × --link on a torus of D dimensions of size
 * 3 or more, the Swing paper's 2D ports). That one link of 2D × bandwidth times exactly as 2D ports
 * of one link each would: a port carries only messages that cross the network link it feeds, of
 * the same bandwidth, so neither limits a message that link does not. --injection sets it lower.
 *
 * Routing: 'dor' (the default) is dimension order, dimension 0 first, the shorter way round each
 * ring, a tie (exactly half way) going '+'. 'minimal' splits a message evenly over the minimal
 * paths: every order of the dimensions that need moving and, on a tie, both directions (one
 * direction when the ring has size 2): at most D!·2^D paths.
 */
import { checkPair, dimsOf, LinkTable, positiveInt, topologyError } from "../builder.js";
import type { TopologyFamily, TopologyShape } from "../family.js";
import { THRESHOLDS } from "../policy.js";
import type { Topology } from "../types.js";

/** --routing minimal on tori and meshes: the most paths one message may be split over (4-D torus: 384). */
export const MAX_MINIMAL_PATHS = THRESHOLDS.MAX_MINIMAL_PATHS.value;

type GridFamily = "ring" | "torus" | "mesh";

interface GridShape extends TopologyShape {
  readonly dims: readonly number[];
}

/** The family of ring, torus or mesh: their syntax differs only in how the dimensions are given. */
function gridFamily(name: GridFamily, order: number, help: string): TopologyFamily<GridShape> {
  const syntax = name === "ring" ? "ring[:N]" : `${name}:AxB[xC...]`;
  return {
    name,
    order,
    routings: name === "ring" ? ["shortest", "minimal"] : ["dor", "minimal"],
    ...(name === "ring" ? { routingAliases: { dor: "shortest" } } : {}),
    syntax,
    help: [[syntax, help]],
    flags: {
      injection:
        "a host's links to and from its router (default: its router's outgoing links together, a port per direction)",
    },
    parse(rest, { spec, ranks }) {
      let dims: number[];
      if (name === "ring") dims = [rest === "" ? ranks : positiveInt(rest, "the router count", spec)];
      else {
        if (rest === "")
          throw topologyError(`'${spec}': ${name} needs its dimensions, e.g. ${name}:8x8 or ${name}:4x4x4`);
        dims = dimsOf(rest, spec, 2);
      }
      const hosts = dims.reduce((a, b) => a * b, 1);
      const shapeName = name === "ring" ? `ring:${hosts}` : `${name}:${dims.join("x")}`;
      return { family: name, name: shapeName, hosts, links: 2 * hosts * (dims.length + 1), dims };
    },
    checkRouting(shape, routing) {
      if (routing !== "minimal") return;
      let most = 1;
      shape.dims.forEach((A, d) => {
        most *= d + 1;
        if (name !== "mesh" && A > 2 && A % 2 === 0) most *= 2;
      });
      if (most > MAX_MINIMAL_PATHS)
        throw topologyError(
          `minimal on '${shape.name}' splits a message over up to ${most} paths (every order of ${shape.dims.length} dimensions${name === "mesh" ? "" : ", ties both ways"}); at most ${MAX_MINIMAL_PATHS} are allowed: use dor, or fewer dimensions`,
          "--routing",
        );
    },
    build(shape, c) {
      return gridTopology({
        family: name,
        dims: shape.dims,
        wrap: name !== "mesh",
        link: c.link,
        latency: c.latency,
        hopLatency: c.hopLatency,
        ...(c.options.injection !== undefined ? { injection: c.options.injection } : {}),
        routing: c.routing === "minimal" ? "minimal" : "dor",
      });
    },
  };
}

export const ring = gridFamily("ring", 1, "bidirectional ring of routers");
export const torus = gridFamily("torus", 2, "torus, any dimensions");
export const mesh = gridFamily("mesh", 3, "mesh (no wrap-around)");

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

  /** The dimension-order path from host a to host b. */
  const dorPath = (a: number, b: number): number[] => {
    const path = [2 * a];
    let cur = a;
    for (let d = 0; d < D; d++) {
      const m = move(d, coord(cur, d), coord(b, d));
      cur = walk(cur, d, m.dir, m.steps, path);
    }
    path.push(2 * b + 1);
    return path;
  };

  const paths = (a: number, b: number): number[][] => {
    checkPair(a, b, R, "paths");
    if (p.routing === "dor") return [dorPath(a, b)];
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

  let ports = 1;
  for (let r = 0; r < R; r++) ports = Math.max(ports, degree[r]!);
  const injectionWords =
    p.injection === undefined
      ? `each host drives its router's ${ports} outgoing links at once (a port per direction): up to ${ports} × the link bandwidth out, and in`
      : `each host's traffic in and out limited to --injection (its ports together)`;
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
    injectionLimit: injectionWords,
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
