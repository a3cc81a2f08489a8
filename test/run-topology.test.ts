/**
 * `cclab run --topology`: the world comm's collectives give an algorithm the machine's shape, on
 * sim and on MPI (process ranks read it from CCLAB_TOPOLOGY). The program
 * (test/fixtures/launch/topology.ts) all-reduces through a tracing wrapper and prints whether the
 * sum is right and the peers each rank sent to: Swing on torus:4x4 talks only to torus neighbours,
 * on the flat rank line it does not. A bad spec, a bad placement and an algorithm that needs a
 * shape and gets none are errors naming the flag.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mpiSkipReason } from "./support/mpi.js";

const mpiOk = mpiSkipReason("cclab run --topology on mpi") === "";
const PROGRAM = "test/fixtures/launch/topology.ts";

interface Run {
  code: number | null;
  out: string;
}

/** `cclab run ...args`, resolved when it exits; stdout and stderr together. */
function cclabRun(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["src/cli/bin.js", "run", ...args], {
      env: { ...process.env, CCLAB_TIMEOUT: "60", ...env },
    });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => resolve({ code, out }));
  });
}

/** Each rank's line: whether its sum was right and the peers it sent to. */
function ranks(out: string): Map<number, { ok: boolean; peers: number[] }> {
  const m = new Map<number, { ok: boolean; peers: number[] }>();
  for (const [, r, ok, peers] of out.matchAll(/rank (\d+): (sum ok|sum wrong[^;]*); sent to ([\d,]*)/g))
    m.set(Number(r), { ok: ok === "sum ok", peers: peers ? peers.split(",").map(Number) : [] });
  return m;
}

/** Whether hosts a and b are neighbours on an A x B torus (dimension 0 varies fastest). */
function torusNeighbours(a: number, b: number, dims: readonly [number, number]): boolean {
  const [x, y] = [a % dims[0], Math.floor(a / dims[0])];
  const [u, v] = [b % dims[0], Math.floor(b / dims[0])];
  const ring = (p: number, q: number, k: number) => (p - q + k) % k === 1 || (q - p + k) % k === 1;
  return (y === v && ring(x, u, dims[0])) || (x === u && ring(y, v, dims[1]));
}

describe("cclab run --topology on sim", () => {
  it("swing_latency on torus:4x4 sends only to torus neighbours and sums right; flat it does not", async () => {
    const [shaped, flat] = await Promise.all([
      cclabRun(["-n", "16", "--topology", "torus:4x4", PROGRAM]),
      cclabRun(["-n", "16", PROGRAM]),
    ]);
    expect(shaped.code, shaped.out).toBe(0);
    expect(flat.code, flat.out).toBe(0);
    const s = ranks(shaped.out);
    const f = ranks(flat.out);
    expect(s.size).toBe(16);
    expect(f.size).toBe(16);
    for (const [r, { ok, peers }] of s) {
      expect(ok, `rank ${r}`).toBe(true);
      // The multiport form: the 2D = 4 collectives reach all four neighbours of every rank.
      expect(peers.length, `rank ${r}: ${peers}`).toBe(4);
      for (const p of peers) expect(torusNeighbours(r, p, [4, 4]), `rank ${r} sent to ${p}`).toBe(true);
    }
    expect(s.get(0)?.peers).toEqual([1, 3, 4, 12]);
    // The one-dimensional schedule: rank 0's peers 0 ± ρ(s) on the rank line, 15 and 11 among them.
    expect(f.get(0)?.peers).toEqual([1, 3, 11, 15]);
    expect([...f.values()].every((x) => x.ok)).toBe(true);
  }, 120_000);

  it("--placement reaches the shape: ranks 0 and 5 swapped, rank 0 talks to host 5's neighbours; a ring runs as before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-run-topology-"));
    const file = join(dir, "hosts.json");
    writeFileSync(file, JSON.stringify([5, 1, 2, 3, 4, 0, 6, 7]));
    try {
      const [placed, ring] = await Promise.all([
        cclabRun(["-n", "8", "--topology", "torus:4x2", "--placement", `file:${file}`, PROGRAM]),
        cclabRun(["-n", "8", "--topology", "torus:4x2", PROGRAM, "ring"]),
      ]);
      expect(placed.code, placed.out).toBe(0);
      const p = ranks(placed.out);
      expect([...p.values()].every((x) => x.ok)).toBe(true);
      // Rank 0 sits on host 5 = (1, 1): its neighbours are hosts 4, 6 and 1, which hold ranks 4, 6 and 1.
      expect(p.get(0)?.peers).toEqual([1, 4, 6]);
      expect(ring.code, ring.out).toBe(0);
      // The ring reads no shape: it sends to the next rank only, torus or not.
      for (const [k, { ok, peers }] of ranks(ring.out)) {
        expect(ok).toBe(true);
        expect(peers).toEqual([(k + 1) % 8]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("an algorithm that needs a torus and gets none refuses, naming itself and --topology", async () => {
    const none = await cclabRun(["-n", "4", PROGRAM, "torus-only"]);
    expect(none.code).toBe(1);
    expect(none.out).toMatch(
      /allreduce\/swing_torus_only: argument '--topology': needs the machine's shape \(torus\), got none: pass --topology torus:/,
    );
    const mesh = await cclabRun(["-n", "4", "--topology", "mesh:2x2", PROGRAM, "torus-only"]);
    expect(mesh.code).toBe(1);
    expect(mesh.out).toContain("got 'mesh:2x2' (mesh), which it cannot use");
    const torus = await cclabRun(["-n", "4", "--topology", "torus:2x2", PROGRAM, "torus-only"]);
    expect(torus.code, torus.out).toBe(0);
    expect(ranks(torus.out).get(0)).toEqual({ ok: true, peers: [1, 2] });
  }, 120_000);

  it("a bad --topology, a bad --placement, or --placement alone is refused before any rank starts", async () => {
    const bad = await cclabRun(["-n", "4", "--topology", "torus:2xz", PROGRAM]);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain("run: argument '--topology'");
    expect(bad.out).toContain("'torus:2xz'");
    expect(ranks(bad.out).size).toBe(0);
    const small = await cclabRun(["-n", "5", "--topology", "torus:2x2", PROGRAM]);
    expect(small.code).not.toBe(0);
    expect(small.out).toMatch(/run: argument '--topology'.*4 hosts, fewer than the 5 ranks/);
    const file = await cclabRun(["-n", "4", "--topology", "torus:2x2", "--placement", "file:/nonexistent", PROGRAM]);
    expect(file.code).not.toBe(0);
    expect(file.out).toContain("run: argument '--placement'");
    const alone = await cclabRun(["-n", "4", "--placement", "round-robin", PROGRAM]);
    expect(alone.code).not.toBe(0);
    expect(alone.out).toContain("run: argument '--placement': places ranks on a topology's hosts: give --topology too");
  }, 120_000);
});

describe.skipIf(!mpiOk)("cclab run --topology on mpi", () => {
  it("process ranks get the shape (CCLAB_TOPOLOGY): swing_latency on torus:2x2 sends to 1 and 2 from rank 0, sums right", async () => {
    const r = await cclabRun(["--backend", "mpi", "-n", "4", "--topology", "torus:2x2", PROGRAM]);
    expect(r.code, r.out).toBe(0);
    const s = ranks(r.out);
    expect(s.size).toBe(4);
    for (const [k, { ok, peers }] of s) {
      expect(ok, `rank ${k}`).toBe(true);
      for (const p of peers) expect(torusNeighbours(k, p, [2, 2]), `rank ${k} sent to ${p}`).toBe(true);
    }
    // Flat, rank 0 of 4 sends to 1 and 3 (0 - 1 mod 4).
    expect(s.get(0)?.peers).toEqual([1, 2]);
  }, 180_000);
});
