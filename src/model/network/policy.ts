/**
 * Every threshold of the network model in one table, and the one function that chooses the
 * engine for a call. Each row says what it bounds and where it acts; docs/network.md prints the
 * table from here (a test keeps them equal) and gives the measurements that set the values.
 */
import { getHeapStatistics } from "node:v8";
import { InvalidArgumentError } from "../../core/errors.js";
import type { Algorithm } from "../../schedule/dsl.js";
import { compile } from "../../schedule/plan.js";
import { rankCall } from "../../specs/index.js";
import type { CollectiveCall } from "../../specs/types.js";
import type { Topology } from "./types.js";

export interface Threshold {
  readonly value: number;
  readonly unit: string;
  readonly rule: string;
}

/** The thresholds, by name. */
export const THRESHOLDS = {
  AUTO_EXACT_MAX_RANKS: { value: 64, unit: "ranks", rule: "'auto' takes the exact engine up to this many ranks" },
  AUTO_EXACT_LARGE_MAX_RANKS: {
    value: 1024,
    unit: "ranks",
    rule: "'auto' still takes the exact engine up to this many ranks where the call is short (next row)",
  },
  AUTO_EXACT_MAX_OPERATIONS: {
    value: 100_000,
    unit: "operations",
    rule: "a short call, for the row above: its operations over every rank, estimated from the plans of rank 0, the root and ranks 1, n/2 and n-1",
  },
  AUTO_EXACT_HASHED_MAX_OPERATIONS: {
    value: 1_200_000,
    unit: "operations",
    rule: "on an ECMP-hashed network 'auto' takes the exact engine at any n up to this many",
  },
  EXACT_BYTES_PER_OPERATION: {
    value: 768,
    unit: "bytes",
    rule: "the exact engine's peak heap per operation walked, for its memory estimate",
  },
  HEAP_SHARE: {
    value: 0.7,
    unit: "of the free heap",
    rule: "the share of the heap left free (V8's limit less what is in use) either engine may plan to use",
  },
  PHASES_BYTES_PER_OPERATION: {
    value: 384,
    unit: "bytes",
    rule: "the phases engine's peak heap per operation walked (copied flat, the plan being copied), for its memory estimate",
  },
  PHASES_BYTES_PER_COPY: {
    value: 256,
    unit: "bytes",
    rule: "the phases engine's heap per message copy it solves on its own (each distinct round's messages, every copy: their flows and durations, held through the solves), for its memory estimate",
  },
  PHASES_BYTES_PER_SOLVED_COPY: {
    value: 768,
    unit: "bytes",
    rule: "and per message copy of a round while it is solved (the largest rounds, one per thread solving), for the same estimate",
  },
  SOLVE_WORK: {
    value: 600_000_000,
    unit: "link crossings scanned",
    rule: "the rate solves of one call (either engine) may scan this many link crossings before the call is refused (--solve-budget): about 15 s on 2 cores",
  },
  MAX_PERIOD: { value: 256, unit: "ranks", rule: "the largest symmetry period the phases engine looks for" },
  MOVED_OPERATIONS: {
    value: 3_000_000,
    unit: "operations",
    rule: "under a symmetry the phases engine still walks every rank (plans moved) up to this many",
  },
  EVERY_RANK_OPERATIONS: {
    value: 300_000,
    unit: "operations",
    rule: "the phases engine walks every rank, symmetry or not, up to this many",
  },
  FOLD_OPERATIONS: {
    value: 400_000,
    unit: "operations",
    rule: "above this many a pipelined call with no symmetry is folded (walked at fewer segments)",
  },
  PARALLEL_MIN_FLOWS: {
    value: 100_000,
    unit: "flows",
    rule: "the phases engine solves its rounds in threads only above this many flows in all",
  },
  MAX_TOPOLOGY_HOSTS: { value: 2 ** 21, unit: "hosts", rule: "the most hosts a topology may have" },
  MAX_TOPOLOGY_LINKS: { value: 2 ** 23, unit: "links", rule: "the most links a topology may have" },
  MAX_MINIMAL_PATHS: {
    value: 4096,
    unit: "paths",
    rule: "--routing minimal on tori and meshes: the most paths one message may be split over",
  },
} as const satisfies Record<string, Threshold>;

/** The table as docs/network.md prints it (markdown). */
export function thresholdsMarkdown(): string {
  return [
    "| threshold | value | what it bounds |",
    "|---|---|---|",
    ...Object.entries(THRESHOLDS).map(
      ([name, t]) => `| \`${name}\` | ${t.value.toLocaleString("en")} ${t.unit} | ${t.rule} |`,
    ),
  ].join("\n");
}

export const ENGINES = ["auto", "exact", "phases"] as const;
export type Engine = (typeof ENGINES)[number];

/** A call's size, estimated from a few ranks' plans: its operations, and its sends (messages). */
export interface Work {
  readonly operations: number;
  readonly sends: number;
}

/**
 * The ranks a call's size is estimated from: rank 0 and the root, which may differ from every
 * other rank (a linear root talks to all n - 1), and ranks 1, n/2 and n-1, which stand for the rest.
 */
function sampleRanks(call: CollectiveCall): { own: number[]; rest: number[] } {
  const n = call.size;
  const own = [...new Set([0, call.root])].filter((r) => r < n);
  const rest = [...new Set([1, Math.floor(n / 2), n - 1])].filter((r) => r < n && !own.includes(r));
  return { own, rest };
}

/**
 * A call's operations and sends over every rank, estimated from its sample ranks' plans (`plan`:
 * rank r's plan, or just its size): rank 0 and the root counted as they are, every other rank as
 * the largest of ranks 1, n/2 and n-1. An estimate, not a bound: the engines count again what they
 * compile.
 */
export function estimateWork(
  call: CollectiveCall,
  plan: (r: number) => { readonly ops: readonly { readonly kind: string }[] },
): Work {
  const { own, rest } = sampleRanks(call);
  const sizeOf = (r: number) => {
    const ops = plan(r).ops;
    let sends = 0;
    for (const op of ops) if (op.kind === "send") sends++;
    return { operations: ops.length, sends };
  };
  let operations = 0;
  let sends = 0;
  for (const r of own) {
    const w = sizeOf(r);
    operations += w.operations;
    sends += w.sends;
  }
  let most = { operations: 0, sends: 0 };
  for (const r of rest) {
    const w = sizeOf(r);
    most = { operations: Math.max(most.operations, w.operations), sends: Math.max(most.sends, w.sends) };
  }
  const others = call.size - own.length;
  return { operations: operations + most.operations * others, sends: sends + most.sends * others };
}

/** A call's operations over every rank, estimated (estimateWork) from the plans of rank 0, the root, and ranks 1, n/2 and n-1. */
export function estimateOperations(alg: Algorithm, call: CollectiveCall): number {
  return estimateWork(call, (r) => compile(alg, rankCall(call, r))).operations;
}

/** The heap the exact engine may plan to use now, bytes. */
export function exactHeapBudget(): number {
  const h = getHeapStatistics();
  return Math.max(0, h.heap_size_limit - h.used_heap_size) * THRESHOLDS.HEAP_SHARE.value;
}

/** The exact engine's peak heap for `operations` operations, bytes. */
export function exactMemory(operations: number): number {
  return operations * THRESHOLDS.EXACT_BYTES_PER_OPERATION.value;
}

const MiB = 2 ** 20;

/**
 * The refusal of a call the exact engine would not hold in memory: the estimate, the budget, and
 * what would fit (the phases engine, fewer ranks, a larger heap).
 */
export function exactMemoryError(alg: Algorithm, call: CollectiveCall, operations: number, budget: number): Error {
  const need = exactMemory(operations);
  const perRank = operations / call.size;
  const ranks = Math.floor(budget / (perRank * THRESHOLDS.EXACT_BYTES_PER_OPERATION.value));
  return new InvalidArgumentError(
    { op: "model", arg: "--engine" },
    `exact: ${alg.collective}/${alg.name} at n = ${call.size} walks about ${operations.toLocaleString("en")} operations, about ${Math.ceil(need / MiB).toLocaleString("en")} MiB at its peak, more than the ${Math.floor(budget / MiB).toLocaleString("en")} MiB of heap it may use; use --engine phases (or auto), or fewer ranks (about ${Math.max(1, ranks).toLocaleString("en")} fit at this size), or give node more heap (NODE_OPTIONS=--max-old-space-size=MiB)`,
  );
}

/**
 * The engine for a call: `asked` itself, or for 'auto' the exact engine for small groups, up to
 * AUTO_EXACT_LARGE_MAX_RANKS ranks where the call is short, and on a hashed network wherever the
 * call is short enough, and the phases engine elsewhere. The exact engine is taken only where its
 * memory estimate fits the heap: 'auto' then takes phases; 'exact' asked for is refused, saying
 * what would fit.
 */
export function chooseEngine(
  alg: Algorithm,
  call: CollectiveCall,
  topology: Topology | undefined,
  asked: Engine = "auto",
): "exact" | "phases" {
  if (asked === "phases") return "phases";
  const T = THRESHOLDS;
  const n = call.size;
  const hashed = topology?.hashed === true;
  let ops: number | undefined;
  const operations = () => (ops ??= estimateOperations(alg, call));
  const fits = () => exactMemory(operations()) <= exactHeapBudget();
  if (asked === "exact") {
    if (!fits()) throw exactMemoryError(alg, call, operations(), exactHeapBudget());
    return "exact";
  }
  if (n > T.AUTO_EXACT_LARGE_MAX_RANKS.value && !hashed) return "phases";
  const short =
    n <= T.AUTO_EXACT_MAX_RANKS.value ||
    (hashed && operations() <= T.AUTO_EXACT_HASHED_MAX_OPERATIONS.value) ||
    (n <= T.AUTO_EXACT_LARGE_MAX_RANKS.value && operations() <= T.AUTO_EXACT_MAX_OPERATIONS.value);
  return short && fits() ? "exact" : "phases";
}
