/**
 * Which algorithm a call runs ('auto' picks by size, auto.ts) and its compiled plan, built once
 * per call shape (rank, size, count, root, dtype, op, in place, segment, splits) and reused.
 */
import { type DType, dtypeInfo } from "../core/dtype.js";
import { type ErrorSite, InvalidArgumentError } from "../core/errors.js";
import type { Algorithm } from "../schedule/dsl.js";
import { compile, type Plan } from "../schedule/plan.js";
import { algorithmsOf, registryVersion } from "../schedule/registry.js";
import type { Collective } from "../specs/index.js";
import type { RankCall } from "../specs/types.js";
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
