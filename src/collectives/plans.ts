/**
 * Which algorithm a call runs ('auto' picks by size, auto.ts) and its compiled plan, built once
 * per call shape (rank, size, count, root, dtype, op, in place, segment, splits) and reused.
 */
import { type DType, dtypeInfo } from "../core/dtype.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { Algorithm } from "../schedule/dsl.js";
import { compile, type Plan } from "../schedule/plan.js";
import { algorithmsOf } from "../schedule/registry.js";
import type { Collective } from "../specs/index.js";
import type { RankCall } from "../specs/types.js";
import { type Choice, chooseAlgorithm } from "./auto.js";

const names = new Map<string, readonly string[]>();

/** Which algorithm 'auto' picks for a call of this shape, and why. */
export function chooseFor(collective: Collective, size: number, count: number, dtype: DType): Choice {
  let available = names.get(collective);
  if (!available) names.set(collective, (available = algorithmsOf(collective).map((a) => a.name)));
  const c = chooseAlgorithm(collective, size, count * dtypeInfo(dtype).bytes, available);
  if (!c)
    throw new InvalidArgumentError({ op: collective, arg: "algorithm" }, `no ${collective} algorithm is registered`);
  return c;
}

const PLAN_CACHE_LIMIT = 4096;
const plans = new WeakMap<Algorithm, Map<string, Plan>>();

/** The compiled plan of `alg` for this rank's call, built once per call shape. */
export function planFor(alg: Algorithm, c: RankCall): Plan {
  let byShape = plans.get(alg);
  if (!byShape) plans.set(alg, (byShape = new Map()));
  const key = `${c.rank} ${c.size} ${c.count} ${c.root} ${c.dtype} ${c.op.name} ${c.op.scalar} ${c.inPlace} ${c.segment} ${c.sendCounts} ${c.recvCounts}`;
  let plan = byShape.get(key);
  if (!plan) {
    if (byShape.size >= PLAN_CACHE_LIMIT) byShape.clear();
    byShape.set(key, (plan = compile(alg, c)));
    planStats.compiled++;
  }
  return plan;
}

/** Counts plan compilations (a repeated call shape compiles nothing): for tests and bench. */
export const planStats = { compiled: 0 };
