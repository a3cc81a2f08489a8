/**
 * Which algorithm a call runs ('auto' picks by size, auto.ts), bound to the comm's machine where
 * it has one (useTopology), and its compiled plan, built once per call shape (rank, size, count,
 * root, dtype, op, in place, segment, splits) and reused; and the front API's probes (probeFor),
 * which keep a comm's last few call shapes with their algorithm and plans, so a repeated call
 * looks nothing up. Every cache of a call shape is here.
 */
import type { Comm } from "../comm.js";
import { type DType, dtypeInfo } from "../core/dtype.js";
import { type ErrorSite, InvalidArgumentError } from "../core/errors.js";
import type { ReduceOp } from "../core/op.js";
import { CommLayer } from "../layer.js";
import type { Algorithm } from "../schedule/dsl.js";
import { compile, type Plan } from "../schedule/plan.js";
import { algorithmsOf, findAlgorithm, registryVersion } from "../schedule/registry.js";
import { withShape } from "../schedule/shape.js";
import { type Collective, makeCall, rankCall } from "../specs/index.js";
import { checkShape, shapeHosts } from "../specs/shape.js";
import type { Layout, RankCall, Shape } from "../specs/types.js";
import { type Choice, chooseAlgorithm } from "./auto.js";

const CHOICE_CACHE_LIMIT = 4096;
/** 'auto''s choice per (collective, size, bytes), and the names it chose among; kept while the registry is unchanged. */
const choices = new Map<string, Choice>();
const names = new Map<string, readonly string[]>();
let choicesOf = -1;

/** Which algorithm 'auto' picks for a call of this shape, and why (worked out once per shape). */
export function chooseFor(collective: Collective, size: number, count: number, dtype: DType): Choice {
  if (choicesOf !== registryVersion()) {
    choices.clear();
    names.clear();
    choicesOf = registryVersion();
  }
  const bytes = count * dtypeInfo(dtype).bytes;
  const key = `${collective} ${size} ${bytes}`;
  let c = choices.get(key);
  if (c) return c;
  let available = names.get(collective);
  if (!available) names.set(collective, (available = algorithmsOf(collective).map((a) => a.name)));
  c = chooseAlgorithm(collective, size, bytes, available);
  if (!c)
    throw new InvalidArgumentError({ op: collective, arg: "algorithm" }, `no ${collective} algorithm is registered`);
  if (choices.size >= CHOICE_CACHE_LIMIT) choices.clear();
  choices.set(key, c);
  planStats.chosen++;
  return c;
}

const PLAN_CACHE_LIMIT = 4096;
const plans = new WeakMap<Algorithm, Map<string, Plan>>();

/** The compiled plan of `alg` for this rank's call, built once per call shape. */
export function planFor(alg: Algorithm, c: RankCall): Plan {
  // A loop calls one shape over and over: compare with the last call's fields before building a key.
  const last = lastPlans.get(alg);
  if (last && sameShape(last.call, c)) return last.plan;
  let byShape = plans.get(alg);
  if (!byShape) plans.set(alg, (byShape = new Map()));
  const key = SHAPE.map((f) => String(c[f])).join(" ") + ` ${c.op.name} ${c.op.scalar}`;
  let plan = byShape.get(key);
  if (!plan) {
    if (byShape.size >= PLAN_CACHE_LIMIT) byShape.clear();
    byShape.set(key, (plan = compile(alg, c)));
    planStats.compiled++;
  }
  lastPlans.set(alg, { call: c, plan });
  return plan;
}

/** What a plan depends on besides the op: the plan cache's key, and what sameShape compares. */
const SHAPE = ["rank", "size", "count", "root", "dtype", "inPlace", "segment", "sendCounts", "recvCounts"] as const;
const lastPlans = new WeakMap<Algorithm, { readonly call: RankCall; readonly plan: Plan }>();

function sameShape(a: RankCall, b: RankCall): boolean {
  if (a.op.name !== b.op.name || a.op.scalar !== b.op.scalar) return false;
  for (const f of SHAPE) {
    const x = a[f];
    const y = b[f];
    if (x === y) continue;
    // Per-peer counts (alltoallv) compare element by element, as the key's text does.
    if (!Array.isArray(x) || !Array.isArray(y) || String(x) !== String(y)) return false;
  }
  return true;
}

/**
 * Counts plan compilations, auto's choices and the front API's probes (a call made anew: api.ts):
 * a repeated call shape makes none of them. For tests and bench.
 */
export const planStats = { compiled: 0, chosen: 0, probed: 0 };

// ---- The probes: a comm's last few call shapes, each with its algorithm and plans ----

/** What the front API's call gives probeFor (api.ts's Call). */
export interface ProbeCall {
  /** The front API's name for messages: 'allReduce'. */
  readonly name: string;
  readonly collective: Collective;
  readonly count: number;
  readonly dtype: DType;
  readonly root?: number;
  readonly op?: ReduceOp;
  readonly sendCounts?: readonly number[];
  readonly recvCounts?: readonly number[];
  readonly options: { readonly algorithm?: string | Algorithm; readonly segment?: number };
}

/**
 * How many probes a comm keeps: those of the 8 call shapes it made most recently (the oldest
 * made is replaced, however recently it was used). A loop that alternates shapes (DDP's buckets
 * of different sizes, bench's rounds interleaving algorithms) missed a one-entry cache at every
 * call: in bench the first call of each round cost 2.8 - 4.0 µs more than the rest at n = 2, 1 -
 * 64 KiB (MPI_Allreduce's 0.2 - 1.0), and every miss makes the call anew (garbage).
 */
const PROBES = 8;
/** Per comm: at most PROBES, the newest replacing the oldest (`nextProbe` says which goes next). */
const probeSets = new WeakMap<Comm, { readonly probes: Probe[]; nextProbe: number }>();

/** The algorithm the call asked for, bound to the comm's machine where it has one (onMachine). */
function pick(comm: Comm, call: ProbeCall, requested: unknown): Algorithm {
  const where = { rank: comm.rank, op: call.name, arg: "options.algorithm" };
  const given = givenAlgorithm(requested, call.collective, () => where);
  if (given) return onMachine(given, comm);
  if (typeof requested !== "string") {
    throw new InvalidArgumentError(where, "must be a string");
  }
  const name =
    requested === "auto" ? chooseFor(call.collective, comm.size, call.count, call.dtype).algorithm : requested;
  return onMachine(findAlgorithm(call.collective, name, { rank: comm.rank, op: call.name }), comm);
}

/**
 * This rank's call as makeCall builds it, the algorithm it asked for and the plans of both its
 * forms, reused while a comm repeats one of the PROBES call shapes it made most recently (a loop
 * calls a few shapes over and over: building the call anew cost ~1.3 µs and garbage per call,
 * looking the algorithm and the plan up again ~0.3 µs). A change to the registry
 * (registryVersion) is a new probe: 'auto' may then choose another algorithm.
 */
export interface Probe {
  readonly requested: string | Algorithm;
  readonly version: number;
  readonly alg: Algorithm;
  readonly size: number;
  readonly collective: Collective;
  readonly count: number;
  readonly root: number | undefined;
  readonly dtype: DType;
  readonly op: ReduceOp | undefined;
  readonly segment: number | undefined;
  readonly sendCounts: readonly number[] | undefined;
  readonly recvCounts: readonly number[] | undefined;
  readonly call: RankCall;
  /** The plan out of place and in place, once looked up; the in-place alias (null: none), once worked out. */
  plan?: Plan;
  inPlacePlan?: Plan;
  alias?: Layout["alias"] | null;
}

/** Whether probe p was made for this call (same shape, algorithm asked for and registry). */
function fits(p: Probe, comm: Comm, call: ProbeCall, requested: unknown, segment: number | undefined): boolean {
  return (
    p.requested === requested &&
    p.version === registryVersion() &&
    p.size === comm.size &&
    p.collective === call.collective &&
    p.count === call.count &&
    p.root === call.root &&
    p.dtype === call.dtype &&
    p.op?.name === call.op?.name &&
    p.op?.scalar === call.op?.scalar &&
    p.segment === segment &&
    sameCounts(p.sendCounts, call.sendCounts) &&
    sameCounts(p.recvCounts, call.recvCounts)
  );
}

/**
 * Per-peer counts (all-to-all-v) by value: allToAllv copies the caller's splits every call (so
 * the arrays a probe keeps are its own), and the same splits again are the same shape.
 */
export function sameCounts(kept: readonly number[] | undefined, now: readonly number[] | undefined): boolean {
  if (kept === now) return true;
  if (!kept || !now || kept.length !== now.length) return false;
  for (let i = 0; i < kept.length; i++) if (kept[i] !== now[i]) return false;
  return true;
}

/** The probe for this call on `comm`: one of its last PROBES call shapes, or made now. */
export function probeFor(comm: Comm, call: ProbeCall): Probe {
  const requested = call.options.algorithm ?? "auto";
  const segment = call.options.segment;
  let q = probeSets.get(comm);
  if (!q) probeSets.set(comm, (q = { probes: [], nextProbe: 0 }));
  const { probes } = q;
  for (let k = 0; k < probes.length; k++) {
    const p = probes[k] as Probe;
    if (fits(p, comm, call, requested, segment)) return p;
  }
  const version = registryVersion();
  const alg = pick(comm, call, requested);
  if (segment !== undefined && (!Number.isInteger(segment) || segment < 1)) {
    throw new InvalidArgumentError(
      { rank: comm.rank, op: call.name, arg: "options.segment" },
      `must be a positive integer, got ${segment}`,
    );
  }
  const made = rankCall(
    makeCall(
      {
        collective: call.collective,
        size: comm.size,
        count: call.count,
        root: call.root,
        dtype: call.dtype,
        op: call.op,
        segment,
      },
      alg,
    ),
    comm.rank,
    call.sendCounts ? { sendCounts: call.sendCounts, recvCounts: call.recvCounts } : undefined,
  );
  const { collective, count, root, dtype, op, sendCounts, recvCounts } = call;
  const probe: Probe = {
    requested: requested as string | Algorithm,
    version,
    alg,
    size: comm.size,
    collective,
    count,
    root,
    dtype,
    op,
    segment,
    sendCounts,
    recvCounts,
    call: made,
  };
  planStats.probed++;
  probes[q.nextProbe] = probe;
  q.nextProbe = (q.nextProbe + 1) % PROBES;
  return probe;
}

/**
 * The algorithm a caller passed itself as options.algorithm (one bound to a machine by
 * withShape), checked to be of this collective; undefined for a name.
 */
export function givenAlgorithm(x: unknown, collective: string, where: () => ErrorSite): Algorithm | undefined {
  if (typeof x !== "object" || x === null || typeof (x as Algorithm).schedule !== "function") return undefined;
  const alg = x as Algorithm;
  if (alg.collective !== collective)
    throw new InvalidArgumentError(where(), `${alg.collective}/${alg.name} is not a ${collective} algorithm`);
  return alg;
}

// ---- The machine a communicator's ranks run on ----
//
// A comm given a shape (useTopology; `cclab run --topology` gives the world comm its shape,
// src/runtime) runs every collective with its algorithm bound to that shape
// (src/schedule/shape.ts): one that reads the shape (Swing on a torus) gets it, every other one
// the flat rank line, and one that requires a shape refuses a comm without one, naming itself and
// --topology. A comm split from it has no shape: its ranks are not the machine's. Wrappers (the
// runtime's guard, tracing) see their inner comm's shape.

const shapes = new WeakMap<Comm, Shape>();
/** Per shape, each algorithm bound once: its plans are then cached as any algorithm's are. */
const bound = new WeakMap<Shape, WeakMap<Algorithm, Algorithm>>();

/**
 * Gives `comm` the machine's shape (src/specs/types.ts Shape: one host per rank in `hostOf`), so
 * its collectives' algorithms see it. Checked here: a shape for another rank count, or with
 * hosts outside the machine, is an error naming the rank.
 */
export function useTopology(comm: Comm, shape: Shape): void {
  const site = { rank: comm.rank, op: "useTopology", arg: "shape" };
  checkShape(shape, comm.size, site);
  if (shapeHosts(shape) < comm.size)
    throw new InvalidArgumentError(site, `'${shape.name}' has ${shape.hosts} hosts, fewer than the ${comm.size} ranks`);
  shapes.set(comm, shape);
}

/** The shape `comm` (or the comm it wraps) was given, if any. */
export function topologyOf(comm: Comm): Shape | undefined {
  for (let c: Comm | undefined = comm; c !== undefined; c = c instanceof CommLayer ? c.inner : undefined) {
    const s = shapes.get(c);
    if (s) return s;
  }
  return undefined;
}

/** `alg` as it runs on `comm`: bound to the comm's shape where it has one, else itself. */
export function onMachine(alg: Algorithm, comm: Comm): Algorithm {
  const shape = topologyOf(comm);
  if (!shape) return alg;
  let mine = bound.get(shape);
  if (!mine) bound.set(shape, (mine = new WeakMap()));
  let b = mine.get(alg);
  if (!b) mine.set(alg, (b = withShape(alg, shape, { op: `${alg.collective}/${alg.name}`, arg: "--topology" })));
  return b;
}
