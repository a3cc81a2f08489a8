/**
 * The process mpirun starts for `cclab verify --backend mpi` (one per rank): for every selected
 * algorithm, fast-check draws cases from the same seed on every rank and each one runs through
 * runMpiCase (differential.ts) against MPI's built-in collective. Rank 0 prints one line per
 * algorithm, "ok np=N collective/name: ..." or "FAIL np=N collective/name: ..." followed by
 * "replay: <command>"; the exit status is 1 if any algorithm failed.
 *
 * argv: --seed S --runs R [--collective C] [--algorithm A] [--algorithm-file F]; with
 * CCLAB_TOPOLOGY (and CCLAB_PLACEMENT: verify's --topology) every algorithm is bound to that shape.
 * A wait that outlives $CCLAB_TIMEOUT seconds (default here 60) prints the case and its replay
 * command, then calls MPI_Abort, so a deadlocking algorithm cannot hang the run.
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { initMpi } from "../backends/mpi/index.js";
import type { Algorithm } from "../schedule/dsl.js";
import { callSeenBy, withShape } from "../schedule/shape.js";
import { makeCall, rankCall, specOf } from "../specs/index.js";
import type { Shape } from "../specs/types.js";
import { shapeFromEnv, TOPOLOGY_ENV } from "../tools/topology-shape.js";
import { selectAlgorithms } from "./load.js";
import { replayCommand } from "./mpi.js";
import { runMpiCase } from "./mpi-cases.js";
import { type Case, caseArb, describeCase } from "./property.js";

const { values: a } = parseArgs({
  options: {
    seed: { type: "string" },
    runs: { type: "string" },
    collective: { type: "string" },
    algorithm: { type: "string" },
    "algorithm-file": { type: "string" },
  },
});
const seed = Number(a.seed ?? 0);
const runs = Number(a.runs ?? 10);
const envTimeout = Number(process.env.CCLAB_TIMEOUT);
const world = await initMpi({ timeoutMs: Number.isFinite(envTimeout) && envTimeout > 0 ? envTimeout * 1000 : 60_000 });
const np = world.size;
const lead = world.rank === 0;

/** The command that replays this algorithm's run at this size (same seed, same cases). */
const topology = process.env[TOPOLOGY_ENV.topology];
const machine = topology ? { topology, placement: process.env[TOPOLOGY_ENV.placement] || undefined } : undefined;
const replay = (alg: Algorithm) => replayCommand(alg, np, seed, runs, a["algorithm-file"], machine);

let current: { alg: Algorithm; c?: Case } | undefined;
const defaultAbort = world.proc.onAbort;
world.proc.onAbort = (e) => {
  if (current) {
    const what = current.c ? describeCase(current.alg, current.c, { backend: "mpi" }) : "";
    const id = `${current.alg.collective}/${current.alg.name}`;
    console.log(`FAIL np=${np} ${id}: rank ${world.rank}: ${what}: ${e.message}`);
    console.log(`replay: ${replay(current.alg)}`);
  }
  defaultAbort(e);
};

/** Why `alg` cannot run on this world's shape (src/schedule/shape.ts's error), or undefined. */
function refusal(alg: Algorithm, shape: Shape | undefined): string | undefined {
  try {
    callSeenBy(alg, rankCall(makeCall({ collective: alg.collective, size: np, count: 1, shape }), world.rank));
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

let algs: Algorithm[];
let failed = 0;
try {
  const shape = shapeFromEnv(process.env, np, { rank: world.rank, op: "verify" });
  algs = [];
  for (const alg of await selectAlgorithms({
    collective: a.collective,
    algorithm: a.algorithm,
    algorithmFile: a["algorithm-file"],
  })) {
    // One that needs a shape this run does not give refuses here, naming itself and --topology.
    const refused = refusal(alg, shape);
    if (refused === undefined) algs.push(shape ? withShape(alg, shape, { op: "verify", arg: "--topology" }) : alg);
    else {
      failed++;
      if (lead) console.log(`FAIL np=${np} ${alg.collective}/${alg.name}: ${refused}\nreplay: ${replay(alg)}`);
    }
  }
} catch (e) {
  if (lead) console.log(`FAIL np=${np} selection: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}

for (const alg of algs) {
  current = { alg };
  const id = `${alg.collective}/${alg.name}`;
  const t0 = performance.now();
  const result = await fc.check(
    fc.asyncProperty(caseArb(alg, { worldSize: np }), async (c) => {
      current = { alg, c };
      const err = await runMpiCase(world, alg, c);
      if (err) throw new Error(`${describeCase(alg, c, { backend: "mpi" })}: ${err}`);
    }),
    { numRuns: runs, seed },
  );
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  if (result.failed) {
    failed++;
    const err = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    if (lead) {
      console.log(
        `FAIL np=${np} ${id}: ${!specOf(alg.collective).data ? "does not synchronise" : "differs from MPI's built-in"}; minimal case after ${result.numShrinks} shrinks: ${err}`,
      );
      console.log(`replay: ${replay(alg)}`);
    }
  } else if (lead) {
    console.log(`ok np=${np} ${id}: ${result.numRuns} cases agree with MPI's built-in (${secs} s)`);
  }
}
current = undefined;
world.builtin.barrier();
process.exit(failed > 0 ? 1 : 0);
