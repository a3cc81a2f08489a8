/**
 * The page's front door for what it did not write: every message from the Worker (which runs
 * the user's program, so anything may come) and the state a share link carries are checked
 * against protocol.ts's shapes here, field by field, before the page reads one. What fails is
 * refused with an InvalidArgumentError naming the field and what it held; the page shows that
 * as text and draws nothing of it. Numbers the pictures place things by (ranks, sizes) are
 * checked against each other, strings and lists against a length.
 */

import { DTYPES } from "../../core/dtype.js";
import { InvalidArgumentError } from "../../core/errors.js";
import type { Semantics } from "../../sim/ops.js";
import type { DeadlockRecord, TraceEvent } from "../../trace.js";
import type { StepTransfer } from "../../viz/step-data.js";
import type { StepThrough } from "../../viz/steps.js";
import {
  type Files,
  type FromWorker,
  KEEP_TAIL,
  MAX_DEADLOCKS,
  MAX_EVENTS,
  MAX_LINE,
  MAX_RANKS,
  MAX_TOPOLOGY_TEXT,
  type Printed,
  type Result,
  type Shared,
  type Traced,
} from "./protocol.js";

type Check<T> = (x: unknown, path: string) => T;

/** Where the value came from, for the error ('the Worker's message', 'the share link'). */
let source = "";

function fail(path: string, want: string, x: unknown): never {
  const got =
    x === null
      ? "null"
      : Array.isArray(x)
        ? `a list of ${x.length}`
        : typeof x === "string"
          ? `a string of ${x.length} characters`
          : typeof x === "number"
            ? String(x)
            : typeof x;
  throw new InvalidArgumentError(path ? { op: source, arg: path } : { op: source }, `expected ${want}, got ${got}`);
}

const str =
  (max: number): Check<string> =>
  (x, p) =>
    typeof x === "string" && x.length <= max ? x : fail(p, `text of at most ${max} characters`, x);
const int =
  (lo: number, hi: number): Check<number> =>
  (x, p) =>
    Number.isInteger(x) && (x as number) >= lo && (x as number) <= hi
      ? (x as number)
      : fail(p, `an integer in ${lo}..${hi}`, x);
const finite: Check<number> = (x, p) =>
  typeof x === "number" && Number.isFinite(x) ? x : fail(p, "a finite number", x);
const bool: Check<boolean> = (x, p) => (typeof x === "boolean" ? x : fail(p, "true or false", x));
const oneOf =
  <T extends string>(...values: readonly T[]): Check<T> =>
  (x, p) =>
    values.includes(x as T) ? (x as T) : fail(p, `one of ${values.join(", ")}`, x);
const list =
  <T>(item: Check<T>, max: number): Check<readonly T[]> =>
  (x, p) => {
    if (!Array.isArray(x) || x.length > max) fail(p, `a list of at most ${max}`, x);
    for (let i = 0; i < x.length; i++) item(x[i], `${p}[${i}]`);
    return x as T[];
  };
const opt =
  <T>(c: Check<T>): Check<T | undefined> =>
  (x, p) =>
    x === undefined ? undefined : c(x, p);

function record(x: unknown, p: string): Record<string, unknown> {
  if (typeof x !== "object" || x === null || Array.isArray(x)) fail(p, "an object", x);
  return x as Record<string, unknown>;
}

/** An object whose listed fields pass their checks (fields not listed are not read). */
const shape =
  <T>(fields: { readonly [K in keyof T]-?: Check<T[K]> }): Check<T> =>
  (x, p) => {
    const o = record(x, p);
    for (const [k, c] of Object.entries(fields) as [string, Check<unknown>][]) c(o[k], p ? `${p}.${k}` : k);
    return o as T;
  };

const TEXT = 100_000;
/** A name, title or command: the worker cuts them well below this. */
const NAME = 2000;
const SEMANTICS: readonly Semantics[] = ["nccl", "mpi-eager", "buffered"];
const rank = int(0, MAX_RANKS - 1);
const count = int(0, Number.MAX_SAFE_INTEGER);
const texts = list(str(TEXT), 10_000);

const event = shape<TraceEvent>({
  rank,
  kind: oneOf("send", "recv", "copy", "reduce", "scale"),
  peer: opt(rank),
  count,
  dtype: oneOf(...DTYPES),
  bytes: count,
  label: opt(str(NAME)),
  start: finite,
  end: finite,
});

const deadlock = shape<DeadlockRecord>({
  at: finite,
  blocked: list(
    shape<DeadlockRecord["blocked"][number]>({
      rank,
      kind: oneOf("send", "recv"),
      peer: rank,
      count,
      dtype: oneOf(...DTYPES),
      label: opt(str(NAME)),
    }),
    MAX_RANKS * 64,
  ),
  cycle: list(rank, MAX_RANKS + 1),
  message: str(TEXT),
});

const steps = shape<StepThrough>({
  ranks: int(1, MAX_RANKS),
  call: (x, p) => record(x, p) as unknown as StepThrough["call"],
  steps: list(
    shape<StepThrough["steps"][number]>({
      label: str(NAME),
      ops: list(str(NAME), MAX_RANKS),
      indices: list(list(int(0, Number.MAX_SAFE_INTEGER), 100_000), MAX_RANKS),
      transfers: list(
        list(
          shape<StepTransfer>({
            index: int(0, Number.MAX_SAFE_INTEGER),
            kind: oneOf("send", "recv"),
            peer: rank,
            region: str(NAME),
          }),
          100_000,
        ),
        MAX_RANKS,
      ),
      rows: list(shape({ name: str(NAME), cells: list(str(NAME), MAX_RANKS) }), 100_000),
    }),
    100_000,
  ),
  errors: texts,
});

const traced: Check<Traced> = (x, p) => {
  const t = shape<Traced>({
    title: str(NAME),
    size: int(1, MAX_RANKS),
    events: list(event, MAX_EVENTS),
    deadlocks: list(deadlock, MAX_DEADLOCKS),
    steps: opt(steps),
    explainText: opt(str(10_000_000)),
    checkErrors: opt(texts),
  })(x, p);
  // The pictures place each rank on a lane of `size`: every rank named must have one.
  const inWorld = (r: number | undefined, at: string) => {
    if (r !== undefined && r >= t.size) fail(at, `a rank below the run's size ${t.size}`, r);
  };
  t.events.forEach((e, i) => {
    inWorld(e.rank, `${p}.events[${i}].rank`);
    inWorld(e.peer, `${p}.events[${i}].peer`);
  });
  t.deadlocks.forEach((d, i) => {
    for (const b of d.blocked) {
      inWorld(b.rank, `${p}.deadlocks[${i}].blocked.rank`);
      inWorld(b.peer, `${p}.deadlocks[${i}].blocked.peer`);
    }
    for (const r of d.cycle) inWorld(r, `${p}.deadlocks[${i}].cycle`);
  });
  if (t.steps) {
    if (t.steps.ranks !== t.size) fail(`${p}.steps.ranks`, `the run's size ${t.size}`, t.steps.ranks);
    t.steps.steps.forEach((s, i) => {
      if (s.ops.length > t.size) fail(`${p}.steps.steps[${i}].ops`, `at most ${t.size} entries`, s.ops);
    });
  }
  return t;
};

const notes = list(str(TEXT), 100);

const result: Check<Result> = (x, p) => {
  const kind = oneOf("run", "verify", "explain")(record(x, p).kind, `${p}.kind`);
  if (kind === "run")
    return shape<Result & { kind: "run" }>({
      kind: oneOf("run"),
      traced,
      printed: list(count, MAX_RANKS),
      error: opt(str(TEXT)),
      notes,
    })(x, p);
  if (kind === "explain") return shape<Result & { kind: "explain" }>({ kind: oneOf("explain"), traced, notes })(x, p);
  return shape<Result & { kind: "verify" }>({
    kind: oneOf("verify"),
    algorithm: str(NAME),
    staticCases: count,
    propertyCases: count,
    failure: opt(
      shape({
        phase: oneOf("proof", "property"),
        message: str(TEXT),
        replay: shape({
          n: int(1, MAX_RANKS),
          count: opt(count),
          root: opt(rank),
          segment: opt(int(1, Number.MAX_SAFE_INTEGER)),
          inPlace: opt(bool),
          semantics: opt(oneOf(...SEMANTICS)),
          seed: opt(int(-(2 ** 31), 2 ** 31)),
        }),
        command: str(NAME),
      }),
    ),
    notes,
  })(x, p);
};

const printed = shape<Printed>({
  rank: int(-1, MAX_RANKS - 1),
  skipped: count,
  lines: list(str(MAX_LINE + 100), KEEP_TAIL * 4),
});

/** A message from the Worker, checked; an InvalidArgumentError naming the field for any other. */
export function checkFromWorker(x: unknown): FromWorker {
  source = "the Worker's message";
  const kind = oneOf("print", "progress", "done", "failed")(record(x, "").kind, "kind");
  const id = int(0, Number.MAX_SAFE_INTEGER);
  if (kind === "print")
    return shape<FromWorker & { kind: "print" }>({
      kind: oneOf("print"),
      id,
      streams: list(printed, MAX_RANKS + 1),
    })(x, "");
  if (kind === "progress")
    return shape<FromWorker & { kind: "progress" }>({
      kind: oneOf("progress"),
      id,
      done: count,
      total: count,
      what: str(NAME),
    })(x, "");
  if (kind === "done") return shape<FromWorker & { kind: "done" }>({ kind: oneOf("done"), id, result })(x, "");
  return shape<FromWorker & { kind: "failed" }>({ kind: oneOf("failed"), id, message: str(TEXT) })(x, "");
}

/** The most files, and characters in one, a link may carry. */
const MAX_FILES = 64;
const MAX_FILE = 1_000_000;

const files: Check<Files> = (x, p) => {
  const o = record(x, p);
  const keys = Object.keys(o);
  if (keys.length === 0 || keys.length > MAX_FILES) fail(p, `1 to ${MAX_FILES} files`, keys);
  for (const k of keys) {
    if (!/^[\w.-]+(\/[\w.-]+)*\.(ts|js)$/.test(k) || k.length > 200 || k.split("/").includes(".."))
      fail(`${p} (a file's name)`, "a relative path such as examples/mine.ts", k);
    str(MAX_FILE)(o[k], `${p}['${k}']`);
  }
  return o as Files;
};

/** The state a share link carries, checked (the file names against the files it has). */
export function checkShared(x: unknown): Partial<Shared> {
  source = "the share link";
  const s = shape<Partial<Shared>>({
    files: opt(files),
    main: opt(str(200)),
    current: opt(str(200)),
    n: opt(int(1, MAX_RANKS)),
    semantics: opt(oneOf(...SEMANTICS)),
    seed: opt(int(-(2 ** 31), 2 ** 31)),
    lo: opt(int(1, MAX_RANKS)),
    hi: opt(int(1, MAX_RANKS)),
    runs: opt(int(0, 1000)),
    limit: opt(int(1, 600)),
    topology: opt(str(MAX_TOPOLOGY_TEXT)),
    action: opt(oneOf("run", "explain")),
    step: opt(int(0, 100_000)),
  })(x, "");
  if (s.files) {
    if (s.main === undefined || s.files[s.main] === undefined)
      fail("main", `the name of one of the link's files (${Object.keys(s.files).join(", ")})`, s.main);
    if (s.current !== undefined && s.files[s.current] === undefined)
      fail("current", "the name of one of the link's files", s.current);
  }
  return s;
}
