/**
 * What the playground's page and its Worker say to each other. The page sends one job at a time
 * (the workspace's files, which file is the main one, the settings); the worker answers with
 * printed lines and progress as they come, then one result. A job that outlives its time bound
 * is ended by the page terminating the worker, so nothing here has to cooperate with a stop.
 */
import type { Semantics } from "../../sim/ops.js";
import type { DeadlockRecord, TraceEvent } from "../../trace.js";
import type { StepThrough } from "../../viz/steps.js";

/** A file of the workspace: its path as in the repository ('examples/deadlock.ts'), its text. */
export type Files = Readonly<Record<string, string>>;

interface JobBase {
  readonly id: number;
  readonly files: Files;
  /** The file that runs (a program) or holds the algorithm. */
  readonly main: string;
  /** Every file is the site's own text, unedited (a built-in algorithm then runs under its own name). */
  readonly pristine?: boolean;
  /** The machine Run and Explain give the algorithm (topology.ts: torus:4x4, ...); absent, the flat rank line. */
  readonly topology?: string;
}

export interface RunJob extends JobBase {
  readonly kind: "run";
  readonly n: number;
  readonly semantics: Semantics;
  readonly seed: number;
}

export interface VerifyJob extends JobBase {
  readonly kind: "verify";
  /** The static proof's sizes, lo..hi. */
  readonly lo: number;
  readonly hi: number;
  readonly runs: number;
  readonly seed: number;
}

/** The call an algorithm is explained (and traced) at; absent fields take explain's defaults. */
export interface CallShape {
  readonly n: number;
  readonly count?: number;
  readonly root?: number;
  readonly segment?: number;
  readonly inPlace?: boolean;
}

export interface ExplainJob extends JobBase {
  readonly kind: "explain";
  readonly call: CallShape;
  readonly semantics: Semantics;
  readonly seed: number;
}

export type Job = RunJob | VerifyJob | ExplainJob;

/** A run's picture: the trace, any deadlock, and for an algorithm explain's steps. */
export interface Traced {
  readonly title: string;
  readonly size: number;
  readonly events: readonly TraceEvent[];
  readonly deadlocks: readonly DeadlockRecord[];
  readonly steps?: StepThrough;
  /** explain's text for the call (an algorithm only). */
  readonly explainText?: string;
  /** The static checker's verdict on this very call (an algorithm only): empty when it holds. */
  readonly checkErrors?: readonly string[];
}

export interface RunResult {
  readonly kind: "run";
  readonly traced: Traced;
  /** How many lines each rank printed (print() of examples/_run.ts); the lines came as print messages. */
  readonly printed: readonly number[];
  /** The run's failure (a RankError's text), if it failed. */
  readonly error?: string;
  readonly notes: readonly string[];
}

export interface VerifyFailure {
  readonly phase: "proof" | "property";
  readonly message: string;
  /** The call that fails, to replay in the page (explain at that call, under the case's semantics and seed). */
  readonly replay: CallShape & { readonly semantics?: Semantics; readonly seed?: number };
  /** The command that replays it from a checkout. */
  readonly command: string;
}

export interface VerifyResult {
  readonly kind: "verify";
  readonly algorithm: string;
  readonly staticCases: number;
  readonly propertyCases: number;
  readonly failure?: VerifyFailure;
  readonly notes: readonly string[];
}

export interface ExplainResult {
  readonly kind: "explain";
  readonly traced: Traced;
  readonly notes: readonly string[];
}

export type Result = RunResult | VerifyResult | ExplainResult;

/**
 * Printed lines of one stream (a rank, or -1 for console.log outside one), in order. The worker
 * sends each stream's first KEEP_HEAD lines, then, at each flush, only the last KEEP_TAIL lines
 * printed since the one before: `skipped` counts those it left out before `lines`.
 */
export interface Printed {
  readonly rank: number;
  readonly skipped: number;
  readonly lines: readonly string[];
}

/** The longest topology text the field (and a share link) carries (topology.ts). */
export const MAX_TOPOLOGY_TEXT = 100;
/** Lines kept of each stream: the first KEEP_HEAD, the last KEEP_TAIL, and a count of the rest. */
export const KEEP_HEAD = 500;
export const KEEP_TAIL = 500;
/** Characters kept of one printed line (the rest is counted). */
export const MAX_LINE = 1000;
/** Trace events a run keeps (the diagram of more would not be read, and would cost the page). */
export const MAX_EVENTS = 100_000;
/** Deadlocks a run keeps. */
export const MAX_DEADLOCKS = 16;
/** Simulated ranks the page offers. */
export const MAX_RANKS = 64;

export type FromWorker =
  | { readonly kind: "print"; readonly id: number; readonly streams: readonly Printed[] }
  | {
      readonly kind: "progress";
      readonly id: number;
      readonly done: number;
      readonly total: number;
      readonly what: string;
    }
  | { readonly kind: "done"; readonly id: number; readonly result: Result }
  | { readonly kind: "failed"; readonly id: number; readonly message: string };

/** What a share link carries: the workspace and the settings (share.ts writes it into the URL). */
export interface Shared {
  readonly files: Files;
  readonly main: string;
  readonly current: string;
  readonly n: number;
  readonly semantics: Semantics;
  readonly seed: number;
  readonly lo: number;
  readonly hi: number;
  readonly runs: number;
  readonly limit: number;
  readonly topology?: string;
  /** What was last done (reopening the link does it again), and the step it showed. */
  readonly action?: "run" | "explain";
  readonly step?: number;
}

/** The BroadcastChannel a runner window and its page share (host.ts, runner.ts): `token` is 32 random hex digits. */
export const channelName = (token: string) => `cclab-runner-${token}`;

/**
 * What the page says to its runner (runner.ts, the document in an iframe or a window of its own
 * that starts each job's Worker): start a job, stop it (the Worker is terminated), a ping it
 * answers at once, or (a window) close, the page is leaving.
 */
export type ToRunner =
  | { readonly kind: "start"; readonly job: Job }
  | { readonly kind: "stop" }
  | { readonly kind: "ping"; readonly seq: number }
  | { readonly kind: "close" };

/**
 * What the runner says to the page: it is ready, a pong, a message of job `id`'s Worker as the
 * Worker sent it (`data`, checked by the page like any Worker message), the Worker's failure, or
 * (a window) that it closes.
 */
export type FromRunner =
  | { readonly kind: "ready" }
  | { readonly kind: "bye" }
  | { readonly kind: "pong"; readonly seq: number }
  | { readonly kind: "worker"; readonly id: number; readonly data: unknown }
  | { readonly kind: "worker-error"; readonly id: number; readonly message: string };
