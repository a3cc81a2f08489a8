/**
 * What the step-through page shows, as page.ts builds it in Node; packed for the file by
 * page-codec.ts (PackedPageData), which imports this and not the other way round.
 */
import type { DeadlockRecord, TraceEvent } from "../trace.js";
import type { LabelMode } from "./labels.js";
import type { PageNetwork } from "./network.js";
import type { StepThrough } from "./steps.js";

/** One deadlock, with its wait-for graph already drawn. */
export interface PageDeadlock {
  readonly record: DeadlockRecord;
  readonly svg: string;
}

/** What one entry of the algorithm switch shows. */
export interface PageView {
  readonly name: string;
  readonly title: string;
  readonly size: number;
  /** 'tick' (sim) or 'µs'. */
  readonly unit: string;
  readonly events: readonly TraceEvent[];
  /** Per event, its step in `steps`' numbering (null for events outside any step). */
  readonly eventSteps?: readonly (number | null)[];
  readonly steps?: StepThrough;
  readonly deadlocks: readonly PageDeadlock[];
  /** The machine the ranks sit on (cclab trace --topology): its picture and every sending pair's route. */
  readonly network?: PageNetwork;
}

export interface PageData {
  readonly title: string;
  readonly labels: LabelMode;
  readonly views: readonly PageView[];
  /** The view shown first. */
  readonly selected: number;
}
