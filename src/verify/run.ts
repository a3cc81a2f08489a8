/**
 * What `cclab verify` (and `npm start`) does: for every algorithm (or those selected), the static
 * proof over n = 1..--max-n and every -n, and the property tests against the oracle on the sim backend, one row
 * per algorithm; on mpi and nccl the differential tests (mpi.ts, nccl.ts). Returns the
 * exit code: non-zero on any failure, with the command that replays it printed.
 */
import { SingleBar } from "cli-progress";
import Table from "cli-table3";
import fc from "fast-check";
import type { Algorithm } from "../schedule/dsl.js";
import { allAlgorithms } from "../schedule/registry.js";
import { ROTATION_FROM } from "../schedule/rotation.js";
import { boundFrom, withShape } from "../schedule/shape.js";
import { makeCall } from "../specs/index.js";
import { selectAlgorithms } from "./load.js";
import { PROOF_HEAP_MIB, proveCases } from "./proofs.js";
import { caseArb, describeCase, runCase } from "./property.js";
import { printReport, type VerifyOptions } from "./report.js";

export type { VerifyOptions, VerifyReport } from "./report.js";

export interface VerifyRow {
  readonly algorithm: Algorithm;
  readonly staticCases: number;
  readonly propertyCases: number;
  readonly failure?: string;
  readonly replay?: string;
}

/**
 * One algorithm's row: the static proof over checkCases, then the property tests. Given
 * `registered`, the registry's own object that `alg` is (or is bound from, under --topology), the
 * calls of 128 ranks or more are proved in worker threads, which find it again by name
 * (proofs.ts); otherwise, or when it is not the registry's, all in this thread.
 */
export async function verifyOne(
  alg: Algorithm,
  o: VerifyOptions,
  seed: number,
  registered?: Algorithm,
): Promise<VerifyRow> {
  const file = o.algorithmFile ? ` --algorithm-file ${o.algorithmFile}` : "";
  // The proof covers 1..--max-n and every n the property tests run at (-n).
  const source = {
    collective: alg.collective,
    algorithm: alg.name,
    ...(o.algorithmFile !== undefined ? { algorithmFile: o.algorithmFile } : {}),
    ...(o.shape ? { shape: o.shape } : {}),
    maxN: o.size,
    sizes: o.sizes ?? [],
    heapMiB: o.proofMemory ?? PROOF_HEAP_MIB,
  };
  // Workers find the algorithm again by name: only for the registry's own (or it bound to the shape).
  const theRegistrys =
    registered !== undefined &&
    (alg === registered || (o.shape !== undefined && boundFrom(alg) === registered)) &&
    allAlgorithms().includes(registered);
  const { cases, failure: failed } = await proveCases(alg, source, theRegistrys ? undefined : 0);
  if (failed) {
    const args = failed.call;
    // The static proof is deterministic: explain shows the failing call's steps and the checker's verdict.
    const call = `-n ${args.size} --count ${args.count} --segment ${args.segment ?? 1}${args.root ? ` --root ${args.root}` : ""}${args.inPlace ? " --in-place" : ""}`;
    // Past 1,024 ranks explain would show every rank: the proof at that n is the replay.
    const replay =
      args.size >= ROTATION_FROM
        ? `cclab verify --collective ${alg.collective} --algorithm ${alg.name}${file} -n ${args.size} --max-n 1 --runs 0`
        : args.splits
          ? undefined
          : `cclab explain ${alg.collective} --algorithm ${alg.name}${file} ${call}`;
    return {
      algorithm: alg,
      staticCases: cases,
      propertyCases: 0,
      failure: failed.errors.join("\n"),
      ...(replay ? { replay } : {}),
    };
  }
  // The property tests run the sim, which holds every rank's plan: up to 1,024 ranks.
  const sizes = o.sizes?.filter((n) => n < ROTATION_FROM);
  if (o.sizes?.length && !sizes?.length) return { algorithm: alg, staticCases: cases, propertyCases: 0 };
  const p = await propertyCheck(alg, { ...o, ...(sizes ? { sizes } : {}) }, seed);
  if (p.failure) {
    return {
      algorithm: alg,
      staticCases: cases,
      propertyCases: p.cases,
      failure: p.failure,
      replay: `cclab verify --collective ${alg.collective} --algorithm ${alg.name}${file} --max-n ${o.size}${o.sizes?.length ? ` -n ${o.sizes.join(",")}` : ""} --seed ${seed} --runs ${o.runs}`,
    };
  }
  return { algorithm: alg, staticCases: cases, propertyCases: p.cases };
}

/** The header's words on the property tests: how many cases, at which n (none past 1,024 ranks). */
function propertyLine(o: VerifyOptions): string {
  if (!o.sizes?.length) return `${o.runs} property cases each`;
  const small = o.sizes.filter((n) => n < ROTATION_FROM);
  const big = o.sizes.filter((n) => n >= ROTATION_FROM);
  const skipped = big.length ? `; none at n = ${big.join(", ")}, past the ${ROTATION_FROM - 1} ranks the sim runs` : "";
  return small.length
    ? `${o.runs} property cases each at n = ${small.join(", ")}${skipped}`
    : `no property cases${skipped}`;
}

/** How long shrinking a counterexample may take by default: past it, the smallest case found so far is reported. */
export const SHRINK_SECONDS = 30;

/**
 * The property tests of one algorithm: o.runs cases (at the -n sizes, or drawn from 1..17).
 * The first failing case is kept; shrinking it then replays from there with a time limit, so a
 * failure at thousands of ranks ends with a counterexample (the smallest found in the time)
 * instead of running on. Returns the cases run and, on failure, the message.
 */
export async function propertyCheck(
  alg: Algorithm,
  o: Pick<VerifyOptions, "runs" | "sizes" | "shrinkSeconds">,
  seed: number,
): Promise<{ cases: number; failure?: string }> {
  const arb = o.sizes?.length ? fc.constantFrom(...o.sizes).chain((n) => caseArb(alg, { worldSize: n })) : caseArb(alg);
  const property = fc.asyncProperty(arb, async (c) => {
    const err = await runCase(alg, c);
    if (err) throw new Error(`${describeCase(alg, c)}: ${err}`);
  });
  const first = await fc.check(property, { numRuns: o.runs, seed, endOnFailure: true });
  if (!first.failed) return { cases: first.numRuns };
  const message = (r: { errorInstance: unknown }) =>
    r.errorInstance instanceof Error ? r.errorInstance.message : String(r.errorInstance);
  const budget = (o.shrinkSeconds ?? SHRINK_SECONDS) * 1000;
  const shrunk =
    budget > 0 && first.counterexamplePath
      ? await fc.check(property, {
          numRuns: o.runs,
          seed,
          path: first.counterexamplePath,
          interruptAfterTimeLimit: budget,
          markInterruptAsFailure: false,
        })
      : undefined;
  // An interrupted replay that failed still holds the smallest failing case it reached.
  if (shrunk?.failed && shrunk.errorInstance !== null && shrunk.errorInstance !== undefined) {
    const cut = shrunk.interrupted ? ` (shrinking stopped after ${budget / 1000} s)` : "";
    return {
      cases: first.numRuns,
      failure: `minimal counterexample after ${shrunk.numShrinks} shrinks${cut}: ${message(shrunk)}`,
    };
  }
  return {
    cases: first.numRuns,
    failure: `counterexample (not shrunk${budget > 0 ? `: shrinking found nothing in ${budget / 1000} s` : ""}): ${message(first)}`,
  };
}

/** Steps and bytes per rank at n = 8 for a 1 MiB float32 message (the call's default segment), from the (checked) cost formulas. */
function costAt8(alg: Algorithm): { steps: number; bytes: number } {
  const c = makeCall({ collective: alg.collective, size: 8, count: (1 << 20) / 4, dtype: "float32" }, alg);
  return {
    steps: alg.cost.steps.value(c.size, c.count, c.segment),
    bytes: alg.cost.sent.value(c.size, c.count, c.segment) * 4,
  };
}

export async function verify(o: VerifyOptions): Promise<number> {
  // The engines' drivers load only when asked: they start processes and need their engine.
  switch (o.backend) {
    case "sim":
      break;
    case "mpi":
      return (await import("./mpi.js")).verifyMpi(o);
    case "nccl":
      return (await import("./nccl.js")).verifyNccl(o);
    default:
      console.error(`cclab verify: unknown backend '${o.backend}'; expected sim, mpi or nccl`);
      return 2;
  }
  const shape = o.shape;
  const chosen = await selectAlgorithms(o);
  const algs = chosen.map((a) => (shape ? withShape(a, shape, { op: "verify", arg: "--topology" }) : a));
  const seed = o.seed ?? Math.floor(Math.random() * 2 ** 31);
  const t0 = performance.now();
  const log = o.json ? () => {} : (line: string) => console.log(line);
  log(
    `cclab verify: ${algs.length} ${algs.length === 1 ? "algorithm" : "algorithms"} on sim; static proof for n = 1..${o.size}${o.sizes?.some((n) => n > o.size) ? ` and ${o.sizes.filter((n) => n > o.size).join(", ")}` : ""}${o.sizes?.some((n) => n >= ROTATION_FROM) ? ` (past ${ROTATION_FROM - 1} ranks by rotation, counts that split into n equal chunks: docs/verify-scale.md)` : ""}, ${propertyLine(o)} (seed ${seed})`,
  );
  const bar = process.stderr.isTTY ? new SingleBar({ format: " {bar} {value}/{total} {name}" }) : undefined;
  bar?.start(algs.length, 0, { name: "" });
  const rows: VerifyRow[] = [];
  for (const [k, alg] of algs.entries()) {
    bar?.update(rows.length, { name: `${alg.collective}/${alg.name}` });
    rows.push(await verifyOne(alg, o, seed, chosen[k]));
  }
  bar?.update(rows.length, { name: "" });
  bar?.stop();
  if (o.json) {
    printReport({
      tool: "cclab verify",
      backend: "sim",
      seed,
      runs: o.runs,
      ok: rows.every((r) => !r.failure),
      seconds: (performance.now() - t0) / 1000,
      results: rows.map((r) => ({
        collective: r.algorithm.collective,
        algorithm: r.algorithm.name,
        nranks: [...new Set([...Array.from({ length: o.size }, (_, i) => i + 1), ...(o.sizes ?? [])])].sort(
          (a, b) => a - b,
        ),
        cases: r.staticCases + r.propertyCases,
        ok: !r.failure,
        ...(r.failure ? { failure: r.failure } : {}),
        ...(r.replay ? { replay: r.replay } : {}),
      })),
    });
    return rows.some((r) => r.failure) ? 1 : 0;
  }
  const table = new Table({
    head: [
      "collective",
      "algorithm",
      "static cases",
      "property cases",
      "result",
      "steps (n=8)",
      "bytes/rank (n=8, 1 MiB)",
    ],
    style: { head: [], border: [] },
  });
  for (const r of rows) {
    const c = costAt8(r.algorithm);
    table.push([
      r.algorithm.collective,
      r.algorithm.name,
      r.staticCases,
      r.propertyCases,
      r.failure ? "FAILED" : "ok",
      c.steps,
      Number.isNaN(c.bytes) ? "varies" : c.bytes,
    ]);
  }
  console.log(table.toString());
  const failed = rows.filter((r) => r.failure);
  for (const r of failed) {
    console.log(`\n${r.algorithm.collective}/${r.algorithm.name} FAILED:\n${r.failure}`);
    if (r.replay) console.log(`replay: ${r.replay}`);
  }
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(
    `\n${rows.length - failed.length} of ${rows.length} ${rows.length === 1 ? "algorithm" : "algorithms"} verified in ${secs} s`,
  );
  return failed.length > 0 ? 1 : 0;
}
