/**
 * Writes each algorithm file's header from its own fields (summary, limits, cost, source), so the
 * header says what the code says and is written once; ring all-reduce's header also carries its
 * n = 4 step table, and every other algorithm's table is a golden file under test/golden/explain/.
 * Run: npx tsx src/tools/headers.ts [--check] [collective/name ...]; test/headers.test.ts fails
 * when a header or a golden table differs from what this would write.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Algorithm } from "../schedule/dsl.js";
import { explain, explainCall } from "../schedule/explain.js";
import { algorithmFile, allAlgorithms } from "../schedule/registry.js";
import { withShape } from "../schedule/shape.js";
import type { Shape } from "../specs/types.js";

/** Algorithms whose header keeps the step table inline (the one a reader meets first). */
export const INLINE_TABLES: ReadonlySet<string> = new Set(["allreduce/ring"]);

const WIDTH = 100;
const id = (alg: Algorithm) => `${alg.collective}/${alg.name}`;

/** `text` after `label`, wrapped at WIDTH with continuation lines indented under the text. */
function field(label: string, text: string, hang = true): string[] {
  const indent = hang ? " ".repeat(label.length) : "";
  const out: string[] = [];
  let line = label;
  for (const word of text.split(/\s+/)) {
    if (line.length + word.length + 1 > WIDTH - 3 && line.trim().length > 0 && line.trim() !== label.trim()) {
      out.push(line.trimEnd());
      line = indent;
    }
    line += (line.endsWith(" ") || line === "" ? "" : " ") + word;
  }
  out.push(line.trimEnd());
  return out;
}

/** The header comment of an algorithm file, from its fields. */
export function headerOf(alg: Algorithm): string {
  const lines = [
    ...field(`${id(alg)}: `, alg.summary, false),
    "",
    ...field("Limits: ", `${alg.limits}.`),
    ...field("Cost:   ", `${alg.cost.steps.text} steps; ${alg.cost.sent.text} elements sent per rank.`),
    ...field("Source: ", `${alg.source}.`),
    "",
  ];
  if (INLINE_TABLES.has(id(alg))) {
    lines.push(`Step table (n = 4), from \`cclab explain ${alg.collective} --algorithm ${alg.name} -n 4\`:`);
    lines.push(...explain(alg).split("\n"));
  } else {
    lines.push(`Step table: \`cclab explain ${alg.collective} --algorithm ${alg.name} -n 4\``);
    lines.push(`(kept current in test/golden/explain/${id(alg)}.txt).`);
  }
  if (readsTorus(alg)) {
    lines.push(
      `On a torus: \`cclab explain ${alg.collective} --algorithm ${alg.name} --topology ${SHAPED.name}\``,
      `(kept current in test/golden/explain/${id(alg)}.${SHAPED_SUFFIX}.txt).`,
    );
  }
  lines.push("(This header is written from the fields below by src/tools/headers.ts.)");
  return `/**\n${lines.map((l) => (l ? ` * ${l}` : " *")).join("\n")}\n */`;
}

/** The source with its first comment (the header) replaced. */
export function withHeader(source: string, alg: Algorithm): string {
  const end = source.startsWith("/**") ? source.indexOf("*/") + 2 : 0;
  return `${headerOf(alg)}${end > 0 ? source.slice(end) : `\n${source}`}`;
}

/** The machine the shaped step table is drawn on, for the algorithms that read a torus. */
const SHAPED: Shape = { family: "torus", dims: [2, 2], name: "torus:2x2", hosts: 4, hostOf: [0, 1, 2, 3] };
const SHAPED_SUFFIX = "torus-2x2";
const readsTorus = (alg: Algorithm) => alg.topology?.families.includes("torus") ?? false;

/** explain's n = 4 table of `alg` on SHAPED (the call as the algorithm's own, as `cclab explain --topology` runs it). */
const shapedTable = (alg: Algorithm) => `${explain(withShape(alg, SHAPED), explainCall(alg, 4))}\n`;

export const GOLDEN_DIR = new URL("../../test/golden/explain/", import.meta.url).pathname;
export const goldenFile = (alg: Algorithm): string => `${GOLDEN_DIR}${id(alg)}.txt`;

export interface HeaderStatus {
  readonly file: string;
  readonly ok: boolean;
  readonly updated: string;
  readonly golden?: { readonly file: string; readonly ok: boolean; readonly text: string };
  /** The table on a torus, for an algorithm that reads one. */
  readonly shaped?: { readonly file: string; readonly ok: boolean; readonly text: string };
}

function golden(file: string, text: string): { file: string; ok: boolean; text: string } {
  let have = "";
  try {
    have = readFileSync(file, "utf8");
  } catch {}
  return { file, ok: have === text, text };
}

export function headerStatus(alg: Algorithm): HeaderStatus {
  const file = algorithmFile(alg);
  const src = readFileSync(file, "utf8");
  const updated = withHeader(src, alg);
  if (INLINE_TABLES.has(id(alg))) return { file, ok: updated === src, updated };
  const shaped = readsTorus(alg)
    ? { shaped: golden(`${GOLDEN_DIR}${id(alg)}.${SHAPED_SUFFIX}.txt`, shapedTable(alg)) }
    : {};
  return { file, ok: updated === src, updated, golden: golden(goldenFile(alg), `${explain(alg)}\n`), ...shaped };
}

function main(argv: string[]): number {
  const check = argv.includes("--check");
  const only = argv.filter((a) => !a.startsWith("--"));
  let bad = 0;
  for (const alg of allAlgorithms()) {
    if (alg.file || (only.length > 0 && !only.includes(id(alg)))) continue;
    const st = headerStatus(alg);
    for (const [ok, file, text] of [
      [st.ok, st.file, st.updated],
      ...(st.golden ? [[st.golden.ok, st.golden.file, st.golden.text] as const] : []),
      ...(st.shaped ? [[st.shaped.ok, st.shaped.file, st.shaped.text] as const] : []),
    ] as const) {
      if (ok) continue;
      if (check) {
        console.error(`${file} is stale: run npx tsx src/tools/headers.ts ${id(alg)}`);
        bad++;
      } else {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
        console.log(`updated ${file}`);
      }
    }
  }
  return bad > 0 ? 1 : 0;
}

if (process.argv[1]?.endsWith("tools/headers.ts")) process.exitCode = main(process.argv.slice(2));
