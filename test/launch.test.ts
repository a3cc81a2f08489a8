/**
 * Launching the way people launch, each run an all-reduce checked element-wise (and a send of a
 * Float32Array around the ring) in under 20 s: plain `mpirun -np 2` and `-np 4` with no cclab
 * launcher; four processes started by this test with torchrun's variables (RANK, WORLD_SIZE,
 * LOCAL_RANK, MASTER_ADDR, MASTER_PORT) that join one MPI job; two "nodes" on this machine, one
 * `cclab run --nnodes 2 --node-rank k` per node as with torchrun; and `cclab run --hostfile`.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mpirunCommand } from "../src/backends/mpi/index.js";
import { nodeArgv } from "../src/runtime/user-module.js";
import { underLoad } from "./support/load.js";
import { mpiSkipReason } from "./support/mpi.js";

const PROGRAM = "test/fixtures/launch/allreduce.ts";
const CLI = "src/cli/bin.js";
const LIMIT_MS = 20_000;
const dir = mkdtempSync(join(tmpdir(), "cclab-launch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Exit {
  code: number | null;
  out: string;
  ms: number;
}

let runs = 0;
/** A fresh directory for one run's result files (the program writes them to $RESULT_DIR). */
function resultDir(): string {
  const d = join(dir, `run-${runs++}`);
  mkdirSync(d);
  return d;
}

function start(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Exit> {
  const t0 = Date.now();
  return new Promise((done, fail) => {
    const [cmd, ...args] = argv;
    const child = spawn(cmd!, args, { env: { ...process.env, CCLAB_TIMEOUT: "30", ...env } });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", fail);
    child.on("close", (code) => done({ code, out, ms: Date.now() - t0 }));
  });
}

function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}

/** Every rank's result file, checked element by element against the sums and the ring's neighbour. */
function expectResults(results: string, size: number): void {
  const files = readdirSync(results);
  const parsed = files.map(
    (f) =>
      JSON.parse(readFileSync(join(results, f), "utf8")) as {
        rank: number;
        size: number;
        sum: number[];
        got: number[];
      },
  );
  expect(parsed.map((r) => r.rank).sort((a, b) => a - b)).toEqual([...Array(size).keys()]);
  const ranksTotal = (size * (size - 1)) / 2;
  for (const r of parsed) {
    expect(r.size).toBe(size);
    expect(r.sum.length).toBe(1003);
    r.sum.forEach((x, i) => {
      expect(x, `rank ${r.rank} element ${i}`).toBe(ranksTotal * 1000 + size * i);
    });
    const prev = (r.rank + size - 1) % size;
    expect(r.got).toEqual([prev, prev, prev]);
  }
}

const noMpi = mpiSkipReason("launch tests");

describe.skipIf(noMpi !== "")("launching without cclab's launcher", () => {
  for (const np of [2, 4]) {
    it(`plain mpirun -np ${np} node prog`, async () => {
      const results = resultDir();
      const { cmd, args } = mpirunCommand(np, nodeArgv(PROGRAM, []));
      const r = await start([cmd, ...args], { RESULT_DIR: results });
      expect(r.code, r.out).toBe(0);
      expectResults(results, np);
      expect(r.ms).toBeLessThan(underLoad(LIMIT_MS));
    });
  }

  it("torchrun's variables: 4 processes started one by one join one MPI job", async () => {
    const port = await freePort();
    const results = resultDir();
    const t0 = Date.now();
    const ranks = [0, 1, 2, 3].map((rank) =>
      start(nodeArgv(PROGRAM, []), {
        RESULT_DIR: results,
        RANK: String(rank),
        WORLD_SIZE: "4",
        LOCAL_RANK: String(rank),
        LOCAL_WORLD_SIZE: "4",
        MASTER_ADDR: "127.0.0.1",
        MASTER_PORT: String(port),
      }),
    );
    const exits = await Promise.all(ranks);
    const all = exits.map((e) => e.out).join("");
    for (const e of exits) expect(e.code, all).toBe(0);
    expectResults(results, 4);
    expect(Date.now() - t0).toBeLessThan(underLoad(LIMIT_MS));
  });
});

describe.skipIf(noMpi !== "")("multi-node MPI on one machine", () => {
  it("two nodes: one cclab run --nnodes 2 --node-rank k per node, one MPI job of 4 ranks", async () => {
    const port = await freePort();
    const results = resultDir();
    const t0 = Date.now();
    const node = (k: number) =>
      start(
        [
          process.execPath,
          CLI,
          "run",
          "--backend",
          "mpi",
          "--nnodes",
          "2",
          "--node-rank",
          String(k),
          "--nproc-per-node",
          "2",
          "--master-addr",
          "127.0.0.1",
          "--master-port",
          String(port),
          PROGRAM,
        ],
        { CCLAB_STORE_TOKEN: "launch-test-token-0123456789", RESULT_DIR: results },
      );
    const exits = await Promise.all([node(0), node(1)]);
    const all = exits.map((e) => e.out).join("");
    for (const e of exits) expect(e.code, all).toBe(0);
    expectResults(results, 4);
    // Each node's launcher starts its own ranks: 0 and 1 on node 0, 2 and 3 on node 1.
    expect(exits[0]!.out).toMatch(/rank 1 of 4: done/);
    expect(exits[0]!.out).not.toMatch(/rank [23] of 4/);
    expect(exits[1]!.out).toMatch(/rank 3 of 4: done/);
    expect(exits[1]!.out).not.toMatch(/rank [01] of 4/);
    expect(Date.now() - t0).toBeLessThan(underLoad(LIMIT_MS));
  });

  it("cclab run --hostfile: mpirun starts the ranks from the hostfile with the job's variables exported", async () => {
    const hostfile = join(dir, "hosts");
    const results = resultDir();
    writeFileSync(hostfile, "localhost slots=4\n");
    const r = await start(
      [process.execPath, CLI, "run", "--backend", "mpi", "--hostfile", hostfile, "-n", "4", PROGRAM],
      { RESULT_DIR: results },
    );
    expect(r.code, r.out).toBe(0);
    expectResults(results, 4);
    expect(r.ms).toBeLessThan(underLoad(LIMIT_MS));
  });
});
