/**
 * SimGrid as an independent oracle for the network model: every registered algorithm on a random
 * small machine (ring, torus, fat-tree, rail; up to 64 ranks; block or round-robin placement; with
 * and without a reduction cost) timed by cclab's exact engine and by SimGrid's own max-min flow
 * model (src/export/simgrid_replay.py: CM02 without corrections, one actor per rank), which must
 * agree. Skipped, saying so, where SimGrid's Python module is missing (CI installs it).
 *
 * Tolerance: both sides implement one model (a message waits out its route's latency, then its
 * bytes share every link max-min fairly; one connection per pair; reductions one at a time per
 * rank), so they agree to floating-point noise, 1e-6 relative; plus 1 ns per computation, which
 * the exported schedule rounds up to whole nanoseconds (GOAL's unit). What differs by design is
 * refused on both sides rather than tolerated: multipath routes (SimGrid has one route per pair).
 * May run python3 in a temporary directory of its own (simgridTime makes and removes it).
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { Rng } from "../src/core/random.js";
import { exportCall, programOf } from "../src/export/program.js";
import { SIMGRID_MISSING, simgridPython, simgridTime } from "../src/export/simgrid.js";
import { networkTimeExact, parseTopology, placeRanks } from "../src/model/network/index.js";
import { allAlgorithms } from "../src/schedule/registry.js";

const python = simgridPython();
if (!python) {
  // CI installs SimGrid and says so (CCLAB_REQUIRE_SIMGRID=1): there its absence is a failure.
  if (process.env.CCLAB_REQUIRE_SIMGRID === "1") throw new Error(`CCLAB_REQUIRE_SIMGRID=1 but ${SIMGRID_MISSING}`);
  console.warn(`test/simgrid.test.ts skipped: ${SIMGRID_MISSING}`);
}
const SEED = Number(process.env.CCLAB_SIMGRID_SEED ?? 20261207);

interface Case {
  readonly topology: string;
  readonly n: number;
  readonly bytes: number;
  readonly placement: "block" | "round-robin";
  readonly gamma: number;
}

/** A random machine and call for the k-th algorithm, from the seed. */
function caseFor(k: number): Case {
  const rng = new Rng(SEED + k * 7919);
  const rnd = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const family = pick(["ring", "torus", "fattree", "rail"] as const);
  let topology: string;
  let hosts: number;
  if (family === "ring") {
    hosts = 2 + Math.floor(rnd() * 15);
    topology = "ring";
  } else if (family === "torus") {
    const dims = pick([
      [4, 4],
      [3, 5],
      [2, 2, 3],
      [8, 8],
      [2, 3, 2, 2],
    ]);
    hosts = dims.reduce((a, b) => a * b, 1);
    topology = `torus:${dims.join("x")}`;
  } else if (family === "fattree") {
    hosts = 16;
    topology = `fattree:k=4${rnd() < 0.5 ? ",over=2" : ""}`;
  } else {
    const [nodes, gpus] = pick([
      [2, 4],
      [4, 2],
      [2, 8],
    ]);
    hosts = (nodes as number) * (gpus as number);
    topology = `rail:${nodes}x${gpus}`;
  }
  const n = family === "ring" ? hosts : Math.max(2, Math.min(hosts, 2 + Math.floor(rnd() * hosts)));
  return {
    topology,
    n,
    bytes: pick([32, 4096, 65536, 1 << 20]) + 4 * Math.floor(rnd() * 64),
    placement: rnd() < 0.7 ? "block" : "round-robin",
    gamma: rnd() < 0.5 ? 0 : pick([0.0002, 0.001]),
  };
}

const replay = (id: string, c: Case) =>
  `cclab model ${id.split("/")[0]} --algorithm ${id.split("/")[1]} -n ${c.n} --bytes ${c.bytes} --topology ${c.topology} --placement ${c.placement} --gamma ${c.gamma} --engine exact (CCLAB_SIMGRID_SEED=${SEED})`;

describe.skipIf(!python)("cclab's exact engine against SimGrid", () => {
  it.each(allAlgorithms().map((a, k) => [`${a.collective}/${a.name}`, a, k] as const))("%s", (id, alg, k) => {
    const c = caseFor(k);
    const topology = parseTopology(c.topology, c.n);
    const placement = placeRanks(topology, c.n, c.placement);
    const { call } = exportCall(alg, c.n, c.bytes);
    const program = programOf(alg, call, { gamma: c.gamma });
    const ours = networkTimeExact(alg, call, { topology, placement, gamma: c.gamma }).time;
    const theirs = simgridTime(program, topology, placement).timeUs;
    let calcs = 0;
    for (const ops of program.ranks) for (const o of ops) if (o.kind === "calc" && o.ns > 0) calcs++;
    const tolerance = 1e-6 * Math.max(ours, theirs) + 1e-3 * calcs + 1e-9;
    expect(
      Math.abs(ours - theirs),
      `${id}: cclab ${ours.toFixed(4)} us, SimGrid ${theirs.toFixed(4)} us; replay: ${replay(id, c)}`,
    ).toBeLessThanOrEqual(tolerance);
  });

  it("cclab model --engine simgrid gives the exact engine's time, and times one call only", () => {
    const cli = (args: string[]) =>
      spawnSync(process.execPath, ["src/cli/bin.js", "model", "allreduce", ...args], { encoding: "utf8" });
    const args = [
      "--algorithm",
      "double_binary_tree",
      "-n",
      "12",
      "--bytes",
      "256K",
      "--topology",
      "torus:3x4",
      "--json",
    ];
    const theirs = JSON.parse(cli([...args, "--engine", "simgrid"]).stdout);
    const ours = JSON.parse(cli([...args, "--engine", "exact"]).stdout);
    expect(theirs.engine).toBe("simgrid");
    expect(Math.abs(theirs.timeUs - ours.timeUs)).toBeLessThanOrEqual(1e-6 * ours.timeUs);
    expect(theirs.messages).toBe(ours.messages);
    const sweep = cli([
      "--algorithm",
      "ring",
      "-n",
      "4",
      "--topology",
      "ring",
      "--engine",
      "simgrid",
      "-b",
      "1K",
      "-e",
      "4K",
    ]);
    expect(sweep.status).not.toBe(0);
    expect(sweep.stderr).toMatch(/model: argument '--engine': simgrid times one call/);
  });

  it("refuses a multipath routing, naming it", () => {
    const alg = allAlgorithms().find((a) => a.collective === "allreduce" && a.name === "ring");
    if (!alg) throw new Error("no ring");
    const topology = parseTopology("torus:4x4", 16, { routing: "minimal" });
    const { call } = exportCall(alg, 16, 1 << 16);
    expect(() => simgridTime(programOf(alg, call), topology, placeRanks(topology, 16))).toThrow(
      /simgrid replays single-path routes only; torus:4x4.* over 2 paths/,
    );
  });
});
