/**
 * GOAL, the schedule format of LogGOPSim (read by its txt2bin, and by htsim and ns-3 through
 * ATLAHS), written from a Program and read back.
 *
 *   num_ranks 4
 *   rank 0 {
 *   l1: send 1024b to 1 tag 0
 *   l2: recv 1024b from 3 tag 0
 *   l3: calc 0
 *   l3 requires l2
 *   }
 *
 * As LogGOPSim's txt2bin.re parses it and Schedgen2's goal.py writes it: labels are identifiers,
 * sizes are bytes followed by `b`, `calc` takes nanoseconds (LogGOPSim's time unit), `A requires
 * B` starts A once B is done (`irequires`, once B has started, is read but never written: cclab's
 * plans wait for completion). Comments are `//` to the end of a line and `/* ... *\/`.
 *
 * May import: core, export/program.
 */
import { AlgorithmFileError } from "../core/errors.js";
import type { Program, ProgramOp } from "./program.js";

/** The GOAL text of a program; a header comment says what it is and how calc was costed. */
export function toGoal(p: Program, header: readonly string[] = []): string {
  const out: string[] = [];
  for (const line of header) out.push(`// ${line}`);
  out.push(`num_ranks ${p.nranks}`);
  for (let r = 0; r < p.nranks; r++) {
    out.push("", `rank ${r} {`);
    const ops = p.ranks[r] as readonly ProgramOp[];
    for (let i = 0; i < ops.length; i++) out.push(`l${i + 1}: ${goalOp(ops[i] as ProgramOp)}`);
    for (let i = 0; i < ops.length; i++) {
      for (const d of new Set((ops[i] as ProgramOp).deps)) out.push(`l${i + 1} requires l${d + 1}`);
    }
    out.push("}");
  }
  return `${out.join("\n")}\n`;
}

function goalOp(o: ProgramOp): string {
  if (o.kind === "send") return `send ${o.bytes}b to ${o.peer} tag ${o.tag}`;
  if (o.kind === "recv") return `recv ${o.bytes}b from ${o.peer} tag ${o.tag}`;
  return `calc ${o.ns}`;
}

const OP =
  /^([A-Za-z][A-Za-z0-9_]*)\s*:\s*(?:(send|recv)\s+(\d+)\s*b\s+(to|from)\s+(-1|\d+)(?:\s+tag\s+(-1|\d+))?(?:\s+cpu\s+\d+)?(?:\s+nic\s+\d+)?|calc\s+(\d+)(?:\s+cpu\s+\d+)?)$/;
const DEP = /^([A-Za-z][A-Za-z0-9_]*)\s+(requires|irequires)\s+([A-Za-z][A-Za-z0-9_]*)$/;

/**
 * A GOAL file read back as a Program (calc operations come back as `source: "reduce"` where they
 * cost time, else "copy": GOAL does not say which). Every error names the file and the line.
 * `irequires` (start dependencies) and wildcard receives (-1) are refused: no cclab schedule has
 * them, so a file with them is not one of cclab's.
 */
export function parseGoal(text: string, file: string): Program {
  const lines = stripComments(text).split("\n");
  let nranks = -1;
  const ranks: ProgramOp[][] = [];
  let rank = -1;
  let labels = new Map<string, number>();
  let ops: { kind: ProgramOp["kind"]; peer: number; tag: number; bytes: number; ns: number; deps: number[] }[] = [];
  const fail = (line: number, what: string): never => {
    throw new AlgorithmFileError(`${file}:${line + 1}: ${what}`);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    if (rank < 0) {
      const nr = /^num_ranks\s+(\d+)$/.exec(line);
      if (nr) {
        if (nranks >= 0) fail(i, "num_ranks given twice");
        nranks = Number(nr[1]);
        if (!Number.isSafeInteger(nranks) || nranks < 1 || nranks > 1 << 20)
          fail(i, `num_ranks must be 1 .. ${1 << 20}, got ${nr[1]}`);
        continue;
      }
      const rk = /^rank\s+(\d+)\s*\{$/.exec(line);
      if (!rk) fail(i, `expected 'num_ranks N' or 'rank R {', got '${clip(line)}'`);
      if (nranks < 0) fail(i, "'rank' before 'num_ranks'");
      rank = Number((rk as RegExpExecArray)[1]);
      if (rank >= nranks) fail(i, `rank ${rank} is outside num_ranks ${nranks}`);
      if (ranks[rank]) fail(i, `rank ${rank} given twice`);
      labels = new Map();
      ops = [];
      continue;
    }
    if (line === "}") {
      ranks[rank] = ops.map((o) => ({
        ...o,
        source: o.kind === "calc" ? (o.ns > 0 ? "reduce" : "copy") : o.kind,
        deps: [...o.deps].sort((a, b) => a - b),
      }));
      rank = -1;
      continue;
    }
    const op = OP.exec(line);
    if (op) {
      const [, label, verb, size, dir, peer, tag, calc] = op;
      if (labels.has(label as string)) fail(i, `label ${label} defined twice in rank ${rank}`);
      labels.set(label as string, ops.length);
      if (verb) {
        if ((verb === "send") !== (dir === "to")) fail(i, `'${verb}' takes '${verb === "send" ? "to" : "from"}'`);
        if (peer === "-1") fail(i, "a receive from any source (-1) is not a cclab schedule's");
        if (tag === "-1") fail(i, "a receive with any tag (-1) is not a cclab schedule's");
        const p = Number(peer);
        if (p >= nranks) fail(i, `peer ${p} is outside num_ranks ${nranks}`);
        ops.push({
          kind: verb as "send" | "recv",
          peer: p,
          tag: Number(tag ?? 0),
          bytes: Number(size),
          ns: 0,
          deps: [],
        });
      } else {
        ops.push({ kind: "calc", peer: -1, tag: -1, bytes: 0, ns: Number(calc), deps: [] });
      }
      continue;
    }
    const dep = DEP.exec(line);
    if (dep) {
      const [, a, how, b] = dep;
      if (how === "irequires") fail(i, "'irequires' (a start dependency) is not a cclab schedule's");
      const x = labels.get(a as string);
      const y = labels.get(b as string);
      if (x === undefined) fail(i, `label ${a} is not defined before this line in rank ${rank}`);
      if (y === undefined) fail(i, `label ${b} is not defined before this line in rank ${rank}`);
      (ops[x as number] as { deps: number[] }).deps.push(y as number);
      continue;
    }
    fail(i, `not a GOAL operation or dependency: '${clip(line)}'`);
  }
  if (rank >= 0) throw new AlgorithmFileError(`${file}: rank ${rank}'s '{' is never closed`);
  if (nranks < 0) throw new AlgorithmFileError(`${file}: no 'num_ranks' line`);
  for (let r = 0; r < nranks; r++) ranks[r] ??= [];
  return { collective: "", algorithm: "", nranks, ranks };
}

/** Comments replaced by spaces (newlines kept, so line numbers stay). */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " ")).replace(/\/\/[^\n]*/g, "");
}

/** A line for a message: at most 60 characters, control characters escaped. */
function clip(s: string): string {
  const t = s.length > 60 ? `${s.slice(0, 57)}...` : s;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
  return t.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
