/**
 * Every command in README.md and docs/*.md, run and held to what the page prints after it.
 *
 *   npx tsx src/tools/docs-check.ts [--write] [--slow] [--only FILE] [--list]
 *
 * A command is a line "$ npx cclab ..." or "$ node src/cli/bin.js ..." in a ```console block; the
 * lines after it, up to the next command or the block's end, are what it prints. A line "..."
 * stands for any number of lines. Only timing is normalised (a number before s, ms or µs that
 * follows "in", "took", ";" or an opening parenthesis, as in "verified in 2.6 s", and a piped
 * sweep's progress lines on stderr, "..., 12 s so far", are left out); every other
 * figure must be what the command prints now. A block's commands run one after another in a
 * scratch directory that sees the repository's files through links, so a step may use a file the
 * step before wrote, and nothing lands in the tree.
 *
 * Notes in the line before a block (an HTML comment) say how to run it:
 *   <!-- docs-check: slow -->      runs with --slow only (the test skips it; this script runs it);
 *   <!-- docs-check: exit N -->    the commands exit with N (default 0);
 *   <!-- docs-check: skip WHY -->  never run (a GPU, a browser); WHY is printed.
 *
 * --write replaces the printed output of every block without "..." that differs with what the
 * command prints now (blocks with "..." are only reported). test/docs-commands.test.ts runs the
 * check without --slow.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");

export interface DocCommand {
  readonly command: string;
  /** What the page says it prints (may hold "..." lines). */
  readonly expected: readonly string[];
  /** Line numbers (0-based) of the expected output in the file: [from, to). */
  readonly lines: readonly [number, number];
}

export interface DocBlock {
  readonly file: string;
  /** 1-based line of the ``` opening the block. */
  readonly line: number;
  readonly commands: readonly DocCommand[];
  readonly slow: boolean;
  readonly exit: number;
  readonly skip?: string;
}

/** A progress line a piped sweep writes on stderr: timing only. */
export const PROGRESS = /^cclab \w+ [^:]*: .*\b\d+ s so far/;

const COMMAND = /^\$ (npx cclab|node src\/cli\/bin\.js)(\s.*)?$/;
const NOTE = /^<!-- docs-check: (slow|exit (\d+)|skip (.*)) -->$/;

/** The pages checked: README.md and every docs/*.md. */
export function docFiles(root = ROOT): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => join(root, "docs", f));
  return [join(root, "README.md"), ...docs];
}

export function blocksOf(file: string, text = readFileSync(file, "utf8")): DocBlock[] {
  const lines = text.split("\n");
  const out: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if ((lines[i] as string).trim() !== "```console") continue;
    let slow = false;
    let exit = 0;
    let skip: string | undefined;
    for (let j = i - 1; j >= 0 && NOTE.test((lines[j] as string).trim()); j--) {
      const m = NOTE.exec((lines[j] as string).trim()) as RegExpExecArray;
      if (m[1] === "slow") slow = true;
      else if (m[2] !== undefined) exit = Number(m[2]);
      else skip = m[3];
    }
    const commands: DocCommand[] = [];
    let j = i + 1;
    let current: { command: string; from: number } | undefined;
    const close = (to: number) => {
      if (current)
        commands.push({
          command: current.command,
          expected: lines.slice(current.from, to),
          lines: [current.from, to],
        });
    };
    for (; j < lines.length && (lines[j] as string).trim() !== "```"; j++) {
      const m = COMMAND.exec(lines[j] as string);
      if (m) {
        close(j);
        current = { command: `cclab${(m[2] ?? "").replace(/\s+#.*$/, "")}`, from: j + 1 };
      }
    }
    close(j);
    if (commands.length > 0) out.push({ file, line: i + 1, commands, slow, exit, skip });
    i = j;
  }
  return out;
}

/** Timing, and nothing else, made the same on both sides. */
export function normalise(line: string): string {
  return line.replace(/((?:\bin|\btook|\(|;)\s*)\d+(?:\.\d+)?(\s*(?:s|ms|µs|us)\b)/g, "$1<t>$2").replace(/\s+$/, "");
}

/** Whether `actual` is what `expected` says, "..." lines standing for any lines. */
export function matches(expected: readonly string[], actual: readonly string[]): boolean {
  const e = trimEnd(expected.map(normalise));
  const a = trimEnd(actual.map(normalise));
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = `${i} ${j}`;
    const got = memo.get(key);
    if (got !== undefined) return got;
    let r: boolean;
    if (i === e.length) r = j === a.length;
    else if ((e[i] as string).trim() === "...") r = go(i + 1, j) || (j < a.length && go(i, j + 1));
    else r = j < a.length && e[i] === a[j] && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

function trimEnd(xs: string[]): string[] {
  let n = xs.length;
  while (n > 0 && xs[n - 1] === "") n--;
  return xs.slice(0, n);
}

/** A scratch directory that sees the repository's top-level entries through symbolic links. */
export function scratch(root = ROOT): string {
  const dir = mkdtempSync(join(tmpdir(), "cclab-docs-"));
  for (const e of readdirSync(root)) {
    if (e === ".git") continue;
    symlinkSync(join(root, e), join(dir, e));
  }
  return dir;
}

export interface Outcome {
  readonly block: DocBlock;
  readonly command: DocCommand;
  readonly actual: readonly string[];
  readonly status: number | null;
  readonly ok: boolean;
  readonly why?: string;
}

/**
 * How long one command may run: ten minutes, an hour for a block marked slow (the README's sweep
 * to 1,024 ranks takes nine minutes at a load average near 20 on 2 cores, more above it, and the
 * script must still run it to the end rather than report a timeout as a difference).
 */
export function commandTimeoutMs(block: DocBlock): number {
  return block.slow ? 3_600_000 : 600_000;
}

/** Runs a block's commands in one scratch directory; one outcome per command. */
export function runBlock(block: DocBlock, root = ROOT, timeoutMs = commandTimeoutMs(block)): Outcome[] {
  const dir = scratch(root);
  const out: Outcome[] = [];
  try {
    for (const c of block.commands) {
      const args = splitArgs(c.command).slice(1);
      const r = spawnSync(process.execPath, [join(dir, "src", "cli", "bin.js"), ...args], {
        cwd: dir,
        encoding: "utf8",
        timeout: timeoutMs,
        env: {
          ...process.env,
          NO_COLOR: "1",
          FORCE_COLOR: "0",
          COLUMNS: "100",
        },
        maxBuffer: 64 * 1024 * 1024,
      });
      // Progress lines on stderr (a piped sweep's "..., 12 s so far") are timing: left out.
      const stderr = (r.stderr ?? "")
        .split("\n")
        .filter((l) => !PROGRESS.test(l))
        .join("\n");
      const actual = `${r.stdout ?? ""}${stderr}`.replace(/\n+$/, "").split("\n");
      const last = c === block.commands[block.commands.length - 1];
      const wantStatus = last ? block.exit : 0;
      const sameOutput = c.expected.length === 0 || matches(c.expected, actual);
      const why =
        r.status !== wantStatus && (r.status !== 0 || !last)
          ? `exit ${r.status ?? r.signal}, the page expects ${wantStatus}`
          : sameOutput
            ? undefined
            : "prints something else";
      out.push({ block, command: c, actual, status: r.status, ok: why === undefined, why });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Splits a command line as a shell would for the simple words docs use (quotes, no expansions). */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? m[2] ?? (m[3] as string));
  return out;
}

/** Rewrites each differing block without "..." to what its command printed. Returns how many. */
export function rewrite(file: string, outcomes: readonly Outcome[]): number {
  const lines = readFileSync(file, "utf8").split("\n");
  const todo = outcomes
    .filter((o) => !o.ok && o.block.file === file && !o.command.expected.some((l) => l.trim() === "..."))
    .filter((o) => o.command.expected.length > 0)
    .sort((a, b) => b.command.lines[0] - a.command.lines[0]);
  for (const o of todo) {
    const [from, to] = o.command.lines;
    lines.splice(from, to - from, ...trimEnd([...o.actual]));
  }
  if (todo.length > 0) writeFileSync(file, lines.join("\n"));
  return todo.length;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const write = argv.includes("--write");
  const slow = argv.includes("--slow");
  const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
  let bad = 0;
  for (const file of docFiles()) {
    if (only && !file.endsWith(only)) continue;
    const outcomes: Outcome[] = [];
    for (const b of blocksOf(file)) {
      const where = `${relative(ROOT, file)}:${b.line}`;
      if (argv.includes("--list")) {
        console.log(
          `${where} ${b.skip ? `skip (${b.skip})` : b.slow ? "slow" : ""} ${b.commands.map((c) => c.command).join(" && ")}`,
        );
        continue;
      }
      if (b.skip || (b.slow && !slow)) continue;
      const t0 = performance.now();
      const got = runBlock(b);
      outcomes.push(...got);
      for (const o of got) {
        if (!o.ok) bad++;
        console.log(
          `${o.ok ? "ok  " : "DIFF"} ${where} ${o.command.command} (${((performance.now() - t0) / 1000).toFixed(1)} s)${o.why ? `: ${o.why}` : ""}`,
        );
        if (!o.ok && !write) console.log(o.actual.map((l) => `       | ${l}`).join("\n"));
      }
    }
    if (write) {
      const n = rewrite(file, outcomes);
      if (n > 0) console.log(`${relative(ROOT, file)}: ${n} output blocks rewritten`);
    }
  }
  process.exitCode = bad > 0 && !write ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
