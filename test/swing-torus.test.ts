/**
 * Swing on tori and meshes (algorithms/lib/swing_torus.ts, behind swing_latency and
 * swing_bandwidth when a call carries a torus or mesh shape), and how a shape reaches an
 * algorithm (src/schedule/shape.ts): proved by the symbolic checker on every shape of up to 64
 * ranks in 1 to 4 dimensions, property-tested on the simulator, and held to the paper's
 * multiport form (2D collectives at once, one per port, each starting on its own dimension).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { swingBandwidth } from "../algorithms/allreduce/swing_bandwidth.js";
import { swingLatency } from "../algorithms/allreduce/swing_latency.js";
import { coordsOf, swingGrid } from "../algorithms/lib/swing_torus.js";
import { checkAlgorithm, compileAll } from "../src/schedule/check.js";
import { defineAlgorithm, f, send, step } from "../src/schedule/dsl.js";
import { compile } from "../src/schedule/plan.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { withShape } from "../src/schedule/shape.js";
import { makeCall, rankCall } from "../src/specs/index.js";
import type { Shape } from "../src/specs/types.js";
import { caseArb, describeCase, runCase } from "../src/verify/property.js";

/** Every ordered factorisation of n into at most maxD factors >= 2. */
function factorisations(n: number, maxD: number): number[][] {
  if (n === 1) return [[]];
  if (maxD === 0) return [];
  const out: number[][] = [];
  for (let a = 2; a <= n; a++) {
    if (n % a === 0) for (const rest of factorisations(n / a, maxD - 1)) out.push([a, ...rest]);
  }
  return out;
}

const identity = (n: number) => Array.from({ length: n }, (_, i) => i);

function grid(dims: readonly number[], family: "torus" | "mesh" = "torus", hostOf?: readonly number[]): Shape {
  const n = dims.reduce((a, b) => a * b, 1);
  return { family, dims: [...dims], name: `${family}:${dims.join("x")}`, hosts: n, hostOf: hostOf ?? identity(n) };
}

/** Up to 64 ranks; the mutation run (test/mutation.vitest.config.ts) bounds it through CCLAB_CHECK_MAX_SIZE. */
const MAX_N = Math.min(64, Number(process.env.CCLAB_CHECK_MAX_SIZE ?? 64));
const SHAPES: number[][] = [];
for (let n = 2; n <= MAX_N; n++) SHAPES.push(...factorisations(n, 4));

describe(`proved on every torus of up to ${MAX_N} ranks, 1 to 4 dimensions`, () => {
  it.runIf(MAX_N === 64)("there are 428 such shapes", () => {
    expect(SHAPES.length).toBe(428);
    expect(SHAPES).toContainEqual([2, 2, 2, 2]);
    expect(SHAPES).toContainEqual([64]);
    expect(SHAPES).toContainEqual([3, 7]);
  });
  for (const alg of [swingLatency, swingBandwidth]) {
    it(`${alg.name}: every shape, a count below the ports and an uneven one, in and out of place`, () => {
      for (const dims of SHAPES) {
        const shape = grid(dims);
        const bound = withShape(alg, shape);
        const n = shape.hostOf.length;
        const ports = 2 * dims.filter((a) => a > 1).length;
        for (const [count, inPlace] of [
          [1, false],
          [ports * n + 3, dims.length % 2 === 0],
        ] as const) {
          const r = checkAlgorithm(bound, makeCall({ collective: "allreduce", size: n, count, inPlace }));
          expect(r.errors, `${shape.name} count ${count}`).toEqual([]);
        }
      }
    }, 600_000);
  }
  it("on a mesh, and with ranks placed round-robin (a permutation of hosts), too", () => {
    for (const dims of [[4, 4], [3, 5], [2, 3, 4], [6]]) {
      const n = dims.reduce((a, b) => a * b, 1);
      const shuffled = identity(n).map((r) => (r * 5 + 3) % n);
      for (const shape of [grid(dims, "mesh"), grid(dims, "torus", n % 5 === 0 ? identity(n) : shuffled)]) {
        for (const alg of [swingLatency, swingBandwidth]) {
          const r = checkAlgorithm(
            withShape(alg, shape),
            makeCall({ collective: "allreduce", size: n, count: 4 * n + 1 }),
          );
          expect(r.errors, `${alg.name} ${shape.name}`).toEqual([]);
        }
      }
    }
  });
  it("property-tested on the simulator: random values, ops, counts, semantics agree with the oracle", async () => {
    for (const dims of [
      [4, 4],
      [2, 3, 2],
      [5, 2],
      [2, 2, 2, 2],
    ]) {
      for (const alg of [swingLatency, swingBandwidth]) {
        const bound = withShape(alg, grid(dims));
        await fc.assert(
          fc.asyncProperty(caseArb(bound), async (c) => {
            expect(await runCase(bound, c), `${alg.name} ${dims.join("x")} ${describeCase(bound, c)}`).toBeUndefined();
          }),
          { numRuns: 6, seed: 39 },
        );
      }
    }
  }, 300_000);
});

describe("the paper's multiport form", () => {
  it("torus 4x4: every step talks to 2D = 4 peers, one per port; step 0 to the four neighbours", () => {
    const shape = grid([4, 4]);
    const plans = compileAll(
      withShape(swingLatency, shape),
      makeCall({ collective: "allreduce", size: 16, count: 16, inPlace: true }),
    );
    const plan = plans[5];
    if (!plan) throw new Error("no plan for rank 5");
    const peersAt = (s: number) => plan.steps[s]?.transfers.filter((t) => t.kind === "send").map((t) => t.peer) ?? [];
    // Rank 5 is (1, 1): odd in both, so the plain collectives step -1, the mirrored +1.
    expect(new Set(peersAt(0))).toEqual(new Set([4, 1, 6, 9]));
    for (let s = 0; s < 4; s++) expect(peersAt(s)).toHaveLength(4);
    // Each part (a quarter of the vector) goes to its own port.
    expect(plan.steps[0]?.transfers.filter((t) => t.kind === "send").map((t) => t.region.count)).toEqual([4, 4, 4, 4]);
  });
  it("collective i starts on dimension i mod D and the last D are mirrored; dimensions alternate", () => {
    const g = swingGrid(grid([4, 8, 2]) as Parameters<typeof swingGrid>[0], "test");
    expect(g.ports.map((p) => p.dims[0])).toEqual([0, 1, 2, 0, 1, 2]);
    expect(g.ports.map((p) => p.mirrored)).toEqual([false, false, false, true, true, true]);
    expect(g.ports[2]?.dims).toEqual([2, 0, 1, 0, 1, 1]);
    expect(g.ports[2]?.steps).toEqual([0, 0, 0, 1, 1, 2]);
  });
  it("a rank's peer is always in one dimension at distance |ρ(j)| (1, 1, 3 on 8x8)", () => {
    const shape = grid([8, 8]);
    const plan = compile(
      withShape(swingBandwidth, shape),
      rankCall(makeCall({ collective: "allreduce", size: 64, count: 64 * 4 }), 0),
    );
    for (const st of plan.steps) {
      for (const t of st.transfers) {
        const [x, y] = coordsOf([8, 8], t.peer);
        const dx = Math.min(x as number, 8 - (x as number));
        const dy = Math.min(y as number, 8 - (y as number));
        expect(Math.min(dx, dy), `peer ${t.peer}`).toBe(0);
        expect([1, 3]).toContain(dx + dy);
      }
    }
  });
  it("dimensions not a power of two fold into the core and unfold at the end (torus 6x3)", () => {
    const plans = compileAll(
      withShape(swingLatency, grid([6, 3])),
      makeCall({ collective: "allreduce", size: 18, count: 8, inPlace: true }),
    );
    // Rank 4 is (4, 0): outside the core 4x2 in dimension 0, it hands its vector to (2, 0).
    expect(plans[4]?.steps.map((s) => s.label)).toEqual([
      "fold: send to rank 2 (dimension 0)",
      "unfold: recv from rank 2 (dimension 0)",
    ]);
  });
});

describe("the shape reaches the algorithm", () => {
  const needsTorus = defineAlgorithm({
    collective: "allreduce",
    name: "needs_torus",
    summary: "a test algorithm that requires a torus",
    limits: "tests only",
    source: "test",
    cost: { steps: f("1", () => 1), sent: f("count", (_n, c) => c) },
    topology: { families: ["torus"], required: true },
    *schedule({ rank, size, shape }, { output }) {
      expect(shape?.family).toBe("torus");
      yield step("nothing", rank === 0 ? [send(1 % size, output)] : []);
    },
  });
  it("an algorithm that requires a shape and gets none refuses, naming itself and --topology torus:AxB", () => {
    expect(() => compile(needsTorus, rankCall(makeCall({ collective: "allreduce", size: 4, count: 4 }), 0))).toThrow(
      /allreduce\/needs_torus: argument '--topology': needs the machine's shape \(torus\), got none: pass --topology torus:AxB/,
    );
    expect(() =>
      compile(
        withShape(needsTorus, grid([4], "mesh")),
        rankCall(makeCall({ collective: "allreduce", size: 4, count: 4 }), 0),
      ),
    ).toThrow(/got 'mesh:4' \(mesh\), which it cannot use/);
  });
  it("every other algorithm keeps the flat view: the same plan with or without a torus", () => {
    const rd = findAlgorithm("allreduce", "recursive_doubling", { op: "test" });
    const call = makeCall({ collective: "allreduce", size: 16, count: 40 });
    const flat = compileAll(rd, call);
    const onTorus = compileAll(withShape(rd, grid([4, 4])), call);
    expect(onTorus.map((p) => p.steps)).toEqual(flat.map((p) => p.steps));
  });
  it("Swing given a ring (or nothing) runs today's one-dimensional schedule", () => {
    const call = makeCall({ collective: "allreduce", size: 8, count: 16 });
    const ring: Shape = { family: "ring", dims: [8], name: "ring:8", hosts: 8, hostOf: identity(8) };
    expect(compileAll(withShape(swingLatency, ring), call).map((p) => p.steps)).toEqual(
      compileAll(swingLatency, call).map((p) => p.steps),
    );
    expect(compileAll(withShape(swingLatency, grid([8])), call)[0]?.steps).not.toEqual(
      compileAll(swingLatency, call)[0]?.steps,
    );
  });
  it("Swing on a torus with fewer ranks than hosts, or two ranks on a host, says how to fix it", () => {
    const half: Shape = { ...grid([4, 4]), hostOf: identity(8) };
    expect(() =>
      compileAll(withShape(swingLatency, half), makeCall({ collective: "allreduce", size: 8, count: 8 })),
    ).toThrow(/Swing on 'torus:4x4' runs one rank on each of its 16 hosts, got 8 ranks: give -n 16/);
    const shared: Shape = { ...grid([2, 2]), hostOf: [0, 1, 1, 3] };
    expect(() =>
      compileAll(withShape(swingBandwidth, shared), makeCall({ collective: "allreduce", size: 4, count: 8 })),
    ).toThrow(/ranks 1 and 2 share host 1/);
  });
  it("a shape that does not describe the call is refused where it is handed over", () => {
    expect(() => withShape(swingLatency, { ...grid([4, 4]), hosts: 15 })).toThrow(
      /15 hosts, but its dimensions hold 16/,
    );
    expect(() => withShape(swingLatency, { ...grid([4, 4]), hostOf: [...identity(15), 16] })).toThrow(
      /rank 15 is placed on host 16, outside its hosts 0..15/,
    );
    expect(() => withShape(swingLatency, grid([4, 0]))).toThrow(/dimensions must be whole numbers >= 1/);
  });
});

// The mutation run (test/mutation.vitest.config.ts) leaves out the commands: they run in child
// processes, which a mutant does not reach.
describe.skipIf(process.env.CCLAB_MUTATION === "1")("--topology on the commands that build a schedule", () => {
  const cclab = (...args: string[]) => {
    const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], { encoding: "utf8", timeout: 120_000 });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  };
  it("explain: Swing's step table on the torus; -n defaults to its hosts", () => {
    const { status, out } = cclab("explain", "allreduce", "--algorithm", "swing_latency", "--topology", "torus:2x2");
    expect(status, out).toBe(0);
    expect(out).toContain("allreduce/swing_latency: n = 4");
    expect(out).toContain("swing step 0: exchange with ranks 1,2");
  }, 120_000);
  it("verify: proves and property-tests the bound algorithm at the topology's rank count", () => {
    const { status, out } = cclab(
      "verify",
      "--collective",
      "allreduce",
      "--algorithm",
      "swing_bandwidth",
      "--topology",
      "torus:3x2",
      "--placement",
      "round-robin",
      "--runs",
      "5",
    );
    expect(status, out).toBe(0);
    expect(out).toMatch(/allreduce\s+│\s+swing_bandwidth\s+│.*│\s+ok\s+│/);
    expect(out).toContain("1 of 1 algorithm verified");
  }, 120_000);
  it("export: writes the torus form; --placement without --topology is refused", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cclab-topo-")), "swing.xml");
    const ok = cclab(
      "export",
      "msccl",
      "--collective",
      "allreduce",
      "--algorithm",
      "swing_latency",
      "-n",
      "4",
      "--topology",
      "torus:2x2",
      "--count",
      "8",
      "-o",
      file,
    );
    expect(ok.status, ok.out).toBe(0);
    // The torus form, not the one-dimensional schedule the same command writes without --topology.
    const flatFile = `${file}.flat.xml`;
    const flat = cclab(
      "export",
      "msccl",
      "--collective",
      "allreduce",
      "--algorithm",
      "swing_latency",
      "-n",
      "4",
      "--count",
      "8",
      "-o",
      flatFile,
    );
    expect(flat.status, flat.out).toBe(0);
    expect(readFileSync(file, "utf8")).not.toEqual(readFileSync(flatFile, "utf8"));
    const bad = cclab("explain", "allreduce", "--algorithm", "swing_latency", "--placement", "block");
    expect(bad.status).not.toBe(0);
    expect(bad.out).toContain(
      "explain: argument '--placement': places ranks on a topology's hosts: give --topology too",
    );
  }, 120_000);
  it("bench on sim: the torus form runs, checks and is timed on the torus", () => {
    const { status, out } = cclab(
      "bench",
      "allreduce",
      "--backend",
      "sim",
      "--algorithm",
      "swing_latency,recursive_doubling",
      "-n",
      "16",
      "--topology",
      "torus:4x4",
      "-b",
      "32",
      "-e",
      "32",
    );
    expect(status, out).toBe(0);
    const us = (name: string) => {
      const row = out.split("\n").find((l) => l.trim().endsWith(name)) ?? "";
      const f = row.trim().split(/\s+/);
      expect(f[8], row).toBe("0");
      return Number(f[5]);
    };
    expect(us("swing_latency")).toBeLessThan(us("recursive_doubling"));
  }, 120_000);
});

describe("the torus form's details (what the mutation run holds)", () => {
  const rankError = (alg: typeof swingLatency, shape: Shape, size: number) => {
    try {
      compile(withShape(alg, shape), rankCall(makeCall({ collective: "allreduce", size, count: 8 }), 3));
    } catch (e) {
      return (e as Error).message;
    }
    return "no error";
  };
  it("a refusal names the algorithm, --topology, and the rank where there is one", () => {
    const half: Shape = { ...grid([4, 4]), hostOf: identity(8) };
    expect(rankError(swingLatency, half, 8)).toMatch(/^allreduce\/swing_latency: argument '--topology': Swing on/);
    expect(rankError(swingBandwidth, half, 8)).toMatch(/^allreduce\/swing_bandwidth: argument '--topology': Swing on/);
    const asGrid = (s: Shape) => s as Parameters<typeof swingGrid>[0];
    expect(() => swingGrid(asGrid(half), "allreduce/swing_latency", 3)).toThrow(
      /^rank 3: allreduce\/swing_latency: argument '--topology': Swing on 'torus:4x4' runs one rank on each/,
    );
    expect(() => swingGrid(asGrid({ ...grid([2, 2]), hostOf: [0, 1, 1, 3] }), "x", 0)).toThrow(
      /^rank 0: x: argument '--topology': .*ranks 1 and 2 share host 1: use --placement block/,
    );
  });
  it("the grid is built once per shape, its fields as the paper's: core, steps, ports, folds", () => {
    const shape = grid([6, 4, 1]) as Parameters<typeof swingGrid>[0];
    const g = swingGrid(shape, "test");
    expect(swingGrid(shape, "test")).toBe(g);
    expect(g.core).toEqual([4, 4, 1]);
    expect(g.coreSize).toBe(16);
    expect(g.steps).toBe(4);
    expect(g.folded).toBe(1);
    // A dimension of size 1 has no port: 2D ports for the D = 2 dimensions that move.
    expect(g.ports.map((p) => [p.dims, p.steps, p.mirrored])).toEqual([
      [[0, 1, 0, 1], [0, 0, 1, 1], false],
      [[1, 0, 1, 0], [0, 0, 1, 1], false],
      [[0, 1, 0, 1], [0, 0, 1, 1], true],
      [[1, 0, 1, 0], [0, 0, 1, 1], true],
    ]);
    const uneven = swingGrid(grid([8, 2]) as Parameters<typeof swingGrid>[0], "test");
    // Dimension 1 finishes after one step; the round-robin goes on in dimension 0 alone.
    expect(uneven.ports[1]).toEqual({ dims: [1, 0, 0, 0], steps: [0, 0, 1, 2], mirrored: false });
  });
  it("a dimension of size 1 changes nothing: torus:4x1 runs torus:4's schedule", () => {
    const call = makeCall({ collective: "allreduce", size: 4, count: 16 });
    for (const alg of [swingLatency, swingBandwidth]) {
      const one = compileAll(withShape(alg, grid([4, 1])), call);
      expect(one.map((p) => p.ops.map((o) => [o.kind, o.peer, o.region.count]))).toEqual(
        compileAll(withShape(alg, grid([4])), call).map((p) => p.ops.map((o) => [o.kind, o.peer, o.region.count])),
      );
    }
  });
  it("even ranks go +ρ, odd -ρ, the mirrored collectives the other way: peers on torus:8", () => {
    const plans = compileAll(
      withShape(swingLatency, grid([8])),
      makeCall({ collective: "allreduce", size: 8, count: 2 }),
    );
    // 2 collectives (plain, mirrored); step s of rank r: plain r ± ρ(s), mirrored r ∓ ρ(s); ρ = 1, -1, 3.
    const peersAt = (r: number) =>
      (plans[r] as (typeof plans)[number]).ops.filter((o) => o.kind === "send").map((o) => o.peer);
    expect(peersAt(0)).toEqual([1, 7, 7, 1, 3, 5]);
    expect(peersAt(3)).toEqual([2, 4, 4, 2, 0, 6]);
  });
  it("the schedule writes no empty transfer and no empty step, even with fewer elements than ports", () => {
    for (const alg of [swingLatency, swingBandwidth]) {
      for (const [dims, count] of [
        [[4, 4], 1],
        [[4, 4], 3],
        [[6, 3], 5],
        [[2, 2, 2], 70],
      ] as const) {
        const n = dims.reduce((a, b) => a * b, 1);
        for (const p of compileAll(withShape(alg, grid(dims)), makeCall({ collective: "allreduce", size: n, count }))) {
          for (const s of p.steps) {
            expect(s.transfers.length + s.local.length, `${alg.name} ${dims.join("x")} '${s.label}'`).toBeGreaterThan(
              0,
            );
            for (const t of s.transfers)
              expect(t.region.count, `${alg.name} ${dims.join("x")} '${s.label}'`).toBeGreaterThan(0);
          }
        }
      }
    }
  });
});
