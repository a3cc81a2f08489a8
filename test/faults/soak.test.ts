/**
 * Soak: 1,000 collectives back to back, across sim (8 jobs of 100) and mpi (2 jobs of 100), each
 * checked element for element against the oracle (programs/soak.ts), with a fault injected at a
 * random operation of a random rank in most jobs (kill, a count off by one, a delay past the
 * timeout). Every job must end with right data on every rank or a clear error naming the fault's
 * rank and kind, within its bound, with no process left. Prints the counts: collectives planned
 * and completed, faults injected and fired, and the longest time to the end per fault kind.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/random.js";
import { underLoad } from "../support/load.js";
import { mpiSkipReason } from "../support/mpi.js";
import { shown } from "./check.js";
import { type Backend, CLI, newMarker, type Outcome, ROOT, Slots, start } from "./runner.js";

const mpiOk = mpiSkipReason("soak (mpi jobs)") === "";
const PER_JOB = 100;
const slots = new Slots(3);

type Kind = "none" | "kill" | "count" | "delay";
interface Plan {
  readonly backend: Backend;
  readonly n: number;
  readonly seed: number;
  readonly kind: Kind;
  readonly rank: number;
  readonly at: number;
}

function plans(): Plan[] {
  const rng = new Rng(2024);
  const kinds: Kind[] = ["none", "kill", "count", "delay"];
  const make = (backend: Backend, i: number, kind: Kind): Plan => {
    const n = 2 + rng.int(3);
    return { backend, n, seed: 100 + i, kind, rank: rng.int(n), at: 1 + rng.int(90) };
  };
  // sim: each kind twice; mpi: a kill and a count fault (its timeouts are the catalogue's).
  return [
    ...Array.from({ length: 8 }, (_, i) => make("sim", i, kinds[i % 4]!)),
    ...(mpiOk ? (["kill", "count"] as const).map((k, i) => make("mpi", 8 + i, k)) : []),
  ];
}

const SPEC: Record<Exclude<Kind, "none">, (p: Plan) => string> = {
  kill: (p) => `kill:rank=${p.rank},at=${p.at}`,
  count: (p) => `count:rank=${p.rank},delta=1,at=${p.at}`,
  delay: (p) => `delay:rank=${p.rank},ms=20000,at=${p.at}`,
};

/** What a job that ended must show for its fault kind (when the fault fired). */
function cleanError(p: Plan, text: string): string | null {
  const summary = text.split("\n").find((l) => l.startsWith("cclab run: ")) ?? "";
  if (/never fired/.test(summary)) return null; // its rank made fewer operations: said so, exit 1
  switch (p.kind) {
    case "kill":
      return summary.includes(`rank ${p.rank} failed first`) && /killed at its operation|died/.test(summary)
        ? null
        : `kill: the summary does not name rank ${p.rank}'s death: ${summary}`;
    case "count":
      return /MismatchError|mismatch/.test(summary) ? null : `count: no mismatch in the summary: ${summary}`;
    case "delay":
      return /timed out after 1 s/.test(summary) ? null : `delay: no timeout in the summary: ${summary}`;
    default:
      return `no fault, yet the job failed: ${summary}`;
  }
}

const stats = {
  planned: 0,
  completed: 0,
  injected: 0,
  fired: 0,
  longest: new Map<string, number>(),
};

describe.concurrent("soak: 1,000 collectives with faults at random points", () => {
  for (const p of plans()) {
    const fault = p.kind === "none" ? [] : ["--fault", SPEC[p.kind](p)];
    const name = `${p.backend} n=${p.n} seed ${p.seed}: ${p.kind === "none" ? "no fault" : SPEC[p.kind](p)}`;
    it(name, { timeout: 600_000 }, async () => {
      const marker = newMarker("soak");
      const args = [CLI, "run", "-n", String(p.n), "--backend", p.backend, "--timeout", "1", ...fault];
      const bound = underLoad(p.backend === "sim" ? 15 : 30);
      const o: Outcome = await slots.run(() =>
        start(
          process.execPath,
          [...args, "test/faults/programs/soak.ts", String(p.seed), String(PER_JOB)],
          {},
          marker,
        ).done(120_000),
      );
      void ROOT;
      const text = shown(o);
      const done = [...text.matchAll(/soak (?:ok|completed) (\d+)/g)].map((m) => Number(m[1]));
      stats.planned += PER_JOB;
      stats.completed += done.length ? Math.min(...done) : 0;
      if (p.kind !== "none") {
        stats.injected++;
        if (!/never fired/.test(text)) stats.fired++;
      }
      const key = `${p.kind} (${p.backend})`;
      stats.longest.set(key, Math.max(stats.longest.get(key) ?? 0, o.seconds));
      expect(text, "wrong data").not.toMatch(/wrong data on rank/);
      expect(o.survivors, "processes left").toEqual([]);
      expect(o.hung, "hung").toBe(false);
      expect(o.seconds, `over its bound of ${bound} s`).toBeLessThan(bound);
      if (o.code === 0) {
        expect(p.kind, "a fault that fired must fail the job").toBe("none");
        expect(done, "every rank checked every collective").toEqual(Array(p.n).fill(PER_JOB));
      } else {
        expect(o.code).toBe(1);
        expect(cleanError(p, text), text.slice(-2000)).toBeNull();
      }
    });
  }
});

afterAll(() => {
  const longest = [...stats.longest].map(([k, s]) => `${k} ${s.toFixed(2)} s`).join(", ");
  console.log(
    `soak: ${stats.planned} collectives planned, ${stats.completed} completed and checked on every rank; ` +
      `${stats.injected} faults injected, ${stats.fired} fired; longest job per fault kind: ${longest}`,
  );
});
