/**
 * The fault catalogue (table.ts), run on sim and mpi: every row ends with the exit code, error
 * class and words its table entry says, within its time bound, with no process of the job left.
 * Rows run a few at a time (each job is several processes on a 2-core machine). At the end it
 * prints each row's time and the longest time-to-error per error class.
 */
import { afterAll, describe, expect, it } from "vitest";
import { mpiSkipReason } from "../support/mpi.js";
import { expectOf, problems, shown } from "./check.js";
import { type Backend, newMarker, Slots } from "./runner.js";
import { ROWS } from "./table.js";

const mpiOk = mpiSkipReason("fault catalogue (mpi rows)") === "";
const slots = new Slots(3);
const times: { row: string; backend: Backend; seconds: number; error: string }[] = [];

describe.concurrent("fault catalogue", () => {
  for (const row of ROWS) {
    for (const backend of row.backends) {
      const name = `${row.item ? `[${row.item}] ` : ""}${row.id} (${backend}): ${row.fault}`;
      const skip = row.skip ?? (backend === "mpi" && !mpiOk ? "MPI is not available here" : undefined);
      if (skip) {
        it.skip(`${name} -- skipped: ${skip}`, () => {});
        continue;
      }
      it(name, { timeout: 600_000 }, async () => {
        const o = await slots.run(() => row.run(backend, newMarker(row.id)));
        const e = expectOf(row, backend);
        times.push({
          row: row.id,
          backend,
          seconds: o.seconds,
          error: e.error ?? (e.exit === 0 ? "(passes)" : "(exit)"),
        });
        expect(problems(row, backend, o), shown(o).slice(-3000)).toEqual([]);
      });
    }
  }
});

afterAll(() => {
  if (times.length === 0) return;
  const longest = new Map<string, { seconds: number; row: string }>();
  for (const t of times) {
    const key = `${t.error} (${t.backend})`;
    if ((longest.get(key)?.seconds ?? -1) < t.seconds) longest.set(key, { seconds: t.seconds, row: t.row });
  }
  const lines = [...longest].sort().map(([k, v]) => `  ${k}: ${v.seconds.toFixed(2)} s (${v.row})`);
  console.log(
    `fault catalogue: ${times.length} runs of ${ROWS.length} rows; longest time to the end per error class:\n${lines.join("\n")}`,
  );
});
