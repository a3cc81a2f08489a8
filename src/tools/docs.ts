/**
 * Writes docs/algorithms.md from the registry: one section per algorithm with what it does,
 * its limits and its cost, so the document cannot drift from the code; then the hand-written
 * comparisons of docs/algorithms-notes.md (charts, crossovers), appended as they are.
 * Run: npx tsx src/tools/docs.ts [--check]; test/docs.test.ts fails when the file is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { allAlgorithms } from "../schedule/registry.js";
import { COLLECTIVES } from "../specs/index.js";

export const ALGORITHMS_MD = new URL("../../docs/algorithms.md", import.meta.url).pathname;
/** The hand-written part, appended after the generated sections. */
export const ALGORITHMS_NOTES_MD = new URL("../../docs/algorithms-notes.md", import.meta.url).pathname;

/** docs/algorithms.md's purpose line (every page under docs/ opens with one; test/docs-guide.test.ts). */
const ALGORITHMS_PURPOSE =
  "Reference, for people studying and changing algorithms and for teachers: every algorithm with what it does, its limits, its cost and its source, generated from the registry; then the newer algorithms against the classics.";

/** The notes' own purpose line, "> ..." before their first heading: it says what that file is, not this page. */
export function notesBody(text: string): string {
  return text.replace(/^> [^\n]*\n\n/, "");
}

export function algorithmsMarkdown(): string {
  const algs = allAlgorithms().filter((a) => !a.file);
  const out: string[] = [
    "# Algorithms",
    "",
    `> ${ALGORITHMS_PURPOSE}`,
    "",
    "Generated from the registry by `npx tsx src/tools/docs.ts`; do not edit by hand (the last section,",
    "comparisons and charts, comes from docs/algorithms-notes.md).",
    "Every algorithm below is proved by the static checker for n = 1..64 (test/algorithms.check.test.ts;",
    "`cclab verify` proves n = 1..16 by default, `--max-n 64` the same range) and property-tested against",
    "the sequential oracle (`cclab verify`). `cclab explain <collective> --algorithm <name> -n 4` prints",
    "its step table; the same table opens its source file.",
    "",
    "Notation: n = ranks, s = bytes per element, count = NCCL's count for the collective (per rank for",
    "all-gather, reduce-scatter, gather and scatter; per peer for all-to-all; the whole message otherwise).",
    "Costs are the maximum over ranks: steps with at least one transfer, and bytes sent.",
    "",
  ];
  for (const c of COLLECTIVES) {
    const list = algs.filter((a) => a.collective === c);
    if (list.length === 0) continue;
    out.push(`## ${c}`, "");
    out.push("| algorithm | steps | bytes sent per rank | steps, n = 8 |", "|---|---|---|---|");
    for (const a of list) {
      out.push(
        `| [${a.name}](#${c}${a.name.replaceAll("_", "")}) | ${a.cost.steps.text} | ${a.cost.sent.text} · s | ${a.cost.steps.value(8, 8192, 1024)} |`,
      );
    }
    out.push("");
    for (const a of list) {
      out.push(`### ${c}/${a.name}`, "");
      out.push(a.summary, "");
      out.push(`- Limits: ${a.limits}`);
      out.push(`- Cost: ${a.cost.steps.text} steps; ${a.cost.sent.text} elements sent per rank.`);
      out.push(`- From: ${a.source}.`);
      out.push(`- Source: [algorithms/${c}/${a.name}.ts](../algorithms/${c}/${a.name}.ts)`);
      out.push(`- Step table: \`cclab explain ${c} --algorithm ${a.name} -n 4\``, "");
    }
  }
  out.push(notesBody(readFileSync(ALGORITHMS_NOTES_MD, "utf8")));
  return out.join("\n");
}

if (process.argv[1]?.endsWith("tools/docs.ts")) {
  const text = algorithmsMarkdown();
  if (process.argv.includes("--check")) {
    const cur = readFileSync(ALGORITHMS_MD, "utf8");
    if (cur !== text) {
      console.error("docs/algorithms.md is stale: run npx tsx src/tools/docs.ts");
      process.exitCode = 1;
    }
  } else {
    writeFileSync(ALGORITHMS_MD, text);
    console.log(`wrote ${ALGORITHMS_MD}`);
  }
}
