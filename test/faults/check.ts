/**
 * What a row's run must show (shared by the catalogue test and the docs script): its exit code,
 * its error class, every word it must name, right data on every rank for exit-0 rows, its time
 * bound, and no process of the job left. Returns the problems, empty when the row passed.
 */
import { boundUnderLoad } from "../support/load.js";
import type { Backend, Outcome } from "./runner.js";
import type { Expect, Row } from "./table.js";

export function expectOf(row: Row, backend: Backend): Expect {
  return typeof row.expect === "function" ? row.expect(backend) : row.expect;
}

/** The output a user sees, with no trailing noise from npm's config warnings. */
export function shown(o: Outcome): string {
  return `${o.out}\n${o.err}`
    .split("\n")
    .filter((l) => !l.startsWith("npm warn"))
    .join("\n");
}

export function problems(row: Row, backend: Backend, o: Outcome): string[] {
  const e = expectOf(row, backend);
  const text = shown(o);
  const out: string[] = [];
  if (o.hung) out.push("hung: killed by the runner");
  if (o.code !== e.exit) out.push(`exit ${o.code ?? o.signal}, expected ${e.exit}`);
  if (e.error && !text.includes(e.error)) out.push(`no ${e.error} in the output`);
  for (const w of e.names) if (!text.includes(w)) out.push(`does not name ${JSON.stringify(w)}`);
  if (e.okLines !== undefined) {
    const oks = text.split("\n").filter((l) => / ok [a-z-]+$/.test(l) || /^ok [a-z-]+$/.test(l)).length;
    if (oks !== e.okLines) out.push(`${oks} ranks reported right data, expected ${e.okLines}`);
  }
  if (e.exit !== 0 && /wrong data on rank/.test(text) && o.code === 0) out.push("wrong data with exit 0");
  const { bound, why } = boundUnderLoad(row.boundS);
  if (o.seconds > bound) out.push(`took ${o.seconds.toFixed(1)} s, over its bound of ${bound.toFixed(1)} s${why}`);
  if (o.survivors.length) out.push(`processes survived: ${o.survivors.join("; ")}`);
  return out;
}
