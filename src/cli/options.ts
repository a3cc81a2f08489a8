/**
 * The one vocabulary of every cclab subcommand: how values are parsed (decimal digits only, the
 * same limits everywhere, errors naming the subcommand and the flag), and the options every
 * subcommand spells the same way: -n/--nranks (ranks; --np where MPI users expect it), -o/--output
 * (the file written), --json (the result on stdout, schema in docs/cli.md). Progress lines go to
 * stderr on a terminal only.
 */
import { Option } from "commander";
import { parseBytes } from "../bench/metrics.js";
import { InvalidArgumentError } from "../core/errors.js";
import { MAX_RANKS } from "../runtime/launch.js";
import { MODEL_MAX_RANKS } from "../schedule/model.js";

/** Ranks the schedule tools (verify's proof, explain, trace, model, export) take. */
export const TOOL_MAX_RANKS = MODEL_MAX_RANKS;
/** Ranks a launch takes (run, bench): simulated ranks share this process, process ranks a node's cores. */
export const LAUNCH_MAX_RANKS = MAX_RANKS;

/** A count as typed: decimal digits only ('', '0x3', '3e0', ' 3 ' are refused, not read as numbers). */
export function decimal(cmd: string, flag: string, v: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^-?\d{1,15}$/.test(v) ? Number(v) : Number.NaN;
  if (Number.isNaN(n)) {
    throw new InvalidArgumentError({ op: cmd, arg: flag }, `must be a decimal integer, got ${JSON.stringify(v)}`);
  }
  if (n < min || n > max) {
    throw new InvalidArgumentError({ op: cmd, arg: flag }, `must be an integer in [${min}, ${max}], got ${n}`);
  }
  return n;
}

/** Value parsers for one subcommand's options; every error names the subcommand and the flag. */
export function parsers(cmd: string) {
  const bad = (flag: string, detail: string) => new InvalidArgumentError({ op: cmd, arg: flag }, detail);
  return {
    int:
      (flag: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
      (v: string): number =>
        decimal(cmd, flag, v, min, max),
    /** A non-negative decimal number (fractions allowed; 'Infinity', '1e9', '0x10' refused). */
    number:
      (flag: string) =>
      (v: string): number => {
        const n = /^\d{1,12}(\.\d{1,12})?$/.test(v) ? Number(v) : Number.NaN;
        if (!Number.isFinite(n)) throw bad(flag, `must be a non-negative decimal number, got ${JSON.stringify(v)}`);
        return n;
      },
    /** 1K, 64M, 1G, 8 (bytes): nccl-tests' size syntax. */
    size:
      (flag: string) =>
      (v: string): number => {
        try {
          return parseBytes(v);
        } catch (e) {
          throw bad(flag, (e as Error).message);
        }
      },
    /** '4', '2,3' or '2..5': sorted, distinct, each in [min, max]. */
    list:
      (flag: string, min: number, max: number) =>
      (v: string): number[] => {
        const out = new Set<number>();
        for (const part of v.split(",")) {
          const range = /^(\d{1,9})\.\.(\d{1,9})$/.exec(part.trim());
          if (range) {
            const [a, b] = [decimal(cmd, flag, range[1]!, min, max), decimal(cmd, flag, range[2]!, min, max)];
            if (a > b) throw bad(flag, `range ${part} runs backwards`);
            for (let n = a; n <= b; n++) out.add(n);
          } else out.add(decimal(cmd, flag, part.trim(), min, max));
        }
        return [...out].sort((a, b) => a - b);
      },
  };
}

/** -n, --nranks: the ranks (every subcommand's name for them). */
export function nranksOption(description: string, parse: (v: string) => unknown, fallback?: unknown): Option {
  const o = new Option("-n, --nranks <n>", description).argParser(parse);
  return fallback === undefined ? o : o.default(fallback);
}

/** --np: mpirun's name for the ranks, an alias of -n where MPI users reach for it. */
export function npOption(parse: (v: string) => unknown): Option {
  return new Option("--np <n>", "the same as -n (mpirun's spelling)").argParser(parse);
}

/** -o, --output: the file a subcommand writes. */
export function outputOption(description: string): Option {
  return new Option("-o, --output <file>", description);
}

/** --json: the result as one JSON document on stdout (schemas in docs/cli.md). */
export function jsonOption(): Option {
  return new Option("--json", "print the result as JSON on stdout (schema: docs/cli.md)");
}

/** -n, or its alias --np; an error when both are given and disagree. */
export function ranksOf<T>(cmd: string, o: { nranks?: T; np?: T }): T | undefined {
  if (o.np !== undefined && o.nranks !== undefined && JSON.stringify(o.np) !== JSON.stringify(o.nranks)) {
    throw new InvalidArgumentError({ op: cmd, arg: "--np" }, "is -n's alias; give one of them");
  }
  return o.nranks ?? o.np;
}

/**
 * Options a subcommand cannot do without, checked in its action: after commander has named any
 * unknown option as unknown (its own mandatory-option check comes first and would hide that).
 */
export function required(cmd: string, given: Record<string, unknown>): void {
  const missing = Object.entries(given).filter(([, v]) => v === undefined);
  if (missing.length > 0) {
    const names = missing.map(([k]) => k);
    throw new InvalidArgumentError(
      { op: cmd, arg: names[0]! },
      `is required${names.length > 1 ? ` (and ${names.slice(1).join(", ")})` : ""}`,
    );
  }
}

/** Prints `value` as JSON on stdout (the --json output). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A one-line status on stderr, redrawn in place, for commands that may run past 2 s: only on a
 * terminal (and never with --json's output on a terminal mixed in: it goes to stderr). Synchronous
 * writes, so it shows even while the work blocks the event loop between updates.
 */
export class StatusLine {
  private readonly on: boolean;
  private readonly t0 = Date.now();
  private shown = false;

  constructor(
    private readonly what: string,
    stream: { isTTY?: boolean } = process.stderr,
  ) {
    this.on = stream.isTTY === true && !/^(1|true)$/i.test(process.env.CI ?? "");
  }

  /** Shows `detail` once the command has run for 2 s (short commands print nothing). */
  update(detail: string): void {
    if (!this.on) return;
    const s = (Date.now() - this.t0) / 1000;
    if (s < 2) return;
    const cols = process.stderr.columns || 100;
    const line = `${this.what}: ${detail} (${s.toFixed(0)} s)`.slice(0, cols - 1);
    process.stderr.write(`\r\x1b[2K${line}`);
    this.shown = true;
  }

  done(): void {
    if (this.shown) process.stderr.write("\r\x1b[2K");
    this.shown = false;
  }
}
