/**
 * Writes each algorithm file's header step table from `explain` (n = 4), so headers never drift
 * from the schedules. Run: npx tsx src/tools/headers.ts [--check] [collective/name ...]
 * test/headers.test.ts fails when a header differs from what this would write.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { algorithmFile, allAlgorithms } from "../registry.js";
import { explain } from "../schedule/explain.js";
import type { Algorithm } from "../schedule/types.js";

const MARK = /^ \* Step table\b.*$/m;

/** The header text with its step table replaced by explain's; undefined when the file has no "Step table" line. */
export function withTable(source: string, alg: Algorithm): string | undefined {
  const m = MARK.exec(source);
  if (!m) return undefined;
  const start = m.index + m[0].length;
  const end = source.indexOf(" */", start);
  if (end < 0) return undefined;
  const table = explain(alg)
    .split("\n")
    .map((l) => (l ? ` * ${l}` : " *"))
    .join("\n");
  return `${source.slice(0, start)}\n${table}\n${source.slice(end)}`;
}

export function headerStatus(alg: Algorithm): { file: string; ok: boolean; reason?: string; updated?: string } {
  const file = algorithmFile(alg);
  const src = readFileSync(file, "utf8");
  const next = withTable(src, alg);
  if (next === undefined) return { file, ok: false, reason: `${file} has no ' * Step table' line in its header` };
  return { file, ok: next === src, updated: next };
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes("--check");
  const only = argv.filter((a) => !a.startsWith("--"));
  let bad = 0;
  for (const alg of allAlgorithms()) {
    const id = `${alg.collective}/${alg.name}`;
    if (only.length > 0 && !only.includes(id)) continue;
    const st = headerStatus(alg);
    if (st.reason) {
      console.error(st.reason);
      bad++;
    } else if (!st.ok) {
      if (check) {
        console.error(
          `${st.file}: step table differs from 'cclab explain ${alg.collective} --algorithm ${alg.name} -n 4'`,
        );
        bad++;
      } else {
        writeFileSync(st.file, st.updated as string);
        console.log(`updated ${st.file}`);
      }
    }
  }
  return bad > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/.*\/src\//, "/src/"))) {
  process.exitCode = await main(process.argv.slice(2));
}
