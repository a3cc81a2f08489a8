/**
 * `cclab model --topology` and `cclab bench --backend sim --topology` (issue 22, item 6): what
 * the commands print and write is the library's own result (parseTopology, placeRanks,
 * networkTime, hottestLinks) for the same machine and call, nccl-tests' bytes and bandwidths, and
 * one textbook case by hand. Commands run in-process through the commander program.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shapeOf } from "../src/bench/metrics.js";
import { buildProgram } from "../src/cli/main.js";
import { hottestLinks, networkTime, parseTopology, placeRanks } from "../src/model/network/index.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { type Collective, makeCall, specOf } from "../src/specs/index.js";

/** Runs `cclab ...args` in this process; resolves with what it printed on stdout. */
async function cclab(...args: string[]): Promise<string> {
  const out: string[] = [];
  const write = vi.spyOn(process.stdout, "write").mockImplementation((s) => out.push(String(s)) > 0);
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => {
    out.push(`${a.join(" ")}\n`);
  });
  try {
    await buildProgram().parseAsync(["node", "cclab", ...args]);
  } finally {
    write.mockRestore();
    log.mockRestore();
  }
  return out.join("");
}

const json = async <T>(...args: string[]): Promise<T> => JSON.parse(await cclab(...args, "--json")) as T;

interface ModelJson {
  timeUs: number;
  algbw: number;
  busbw: number;
  size: number;
  count: number;
  criticalRank: number;
  engine: string;
  approximate: boolean;
  symmetry?: { kind: string; p: number };
  messages: number;
  linksUsed: number;
  links: { link: number; bytes: number; utilization: number }[];
  topology: { name: string; hosts: number; description: string[] };
}

/** The same call straight from the library: nccl-tests' shape, the front API's call, networkTime. */
function direct(collective: Collective, algorithm: string, spec: string, n: number, bytes: number, links = {}) {
  const t = parseTopology(spec, n, links);
  const placement = placeRanks(t, n);
  const alg = findAlgorithm(collective, algorithm, { op: "test" });
  const { count, size } = shapeOf(collective, n, bytes, "float32");
  const call = makeCall({ collective, size: n, count, root: 0, dtype: "float32" }, alg);
  const r = networkTime(alg, call, { topology: t, placement });
  const algbw = size / (r.time * 1e-6) / 1e9;
  return { r, t, size, count, algbw, busbw: algbw * specOf(collective).busFactor(n) };
}

afterEach(() => {
  process.exitCode = undefined;
});

describe("cclab model --topology: one call", () => {
  const cases: [Collective, string, string, number, string, number][] = [
    ["allreduce", "ring", "torus:4x4", 16, "1M", 1 << 20],
    ["allreduce", "double_binary_tree", "fattree:leaves=2,hosts=4,spines=2,over=2", 8, "256K", 1 << 18],
    ["allgather", "ring", "rail:2x4", 8, "1M", 1 << 20],
  ];
  for (const [collective, algorithm, spec, n, text, bytes] of cases) {
    it(`${collective}/${algorithm} on ${spec}: --json is networkTime's result, with nccl-tests' bytes and busbw`, async () => {
      const got = await json<ModelJson>(
        "model",
        collective,
        "--algorithm",
        algorithm,
        "-n",
        String(n),
        "--bytes",
        text,
        "--topology",
        spec,
      );
      const want = direct(collective, algorithm, spec, n, bytes);
      expect(got.timeUs).toBe(want.r.time);
      expect(got.criticalRank).toBe(want.r.criticalRank);
      expect(got.engine).toBe(want.r.engine);
      expect(got.approximate).toBe(want.r.approximate);
      expect(got.messages).toBe(want.r.messages);
      expect(got.size).toBe(want.size);
      expect(got.count).toBe(want.count);
      expect(got.algbw).toBeCloseTo(want.algbw, 9);
      expect(got.busbw).toBeCloseTo(want.busbw, 9);
      expect(got.topology.hosts).toBe(want.t.hosts);
      // The hottest links, in the library's order, with their bytes and utilization.
      const hot = hottestLinks(want.t, want.r.linkBytes, want.r.time, 100);
      expect(got.links.map((l) => [l.link, l.bytes, l.utilization])).toEqual(
        hot.map((l) => [l.link, l.bytes, l.utilization]),
      );
      expect(got.linksUsed).toBe(want.r.linkBytes.filter((b) => b > 0).length);
      // Per-rank collectives: S is the whole array, S / n per rank (as bench).
      if (collective === "allgather") expect(got.count * n * 4).toBe(bytes);
    });
  }

  it("ring all-reduce on ring:8 is the textbook 2(n-1)·(per-message latency + chunk / link), in --json and in the text", async () => {
    const args = ["model", "allreduce", "--algorithm", "ring", "-n", "8", "--bytes", "1M", "--topology", "ring:8"];
    const links = ["--link", "50GB/s", "--latency", "200ns", "--hop-latency", "50ns"];
    const got = await json<ModelJson>(...args, ...links);
    // Each of the 2(n-1) steps: every rank sends S/n to its + neighbour over its injection link,
    // one x+ link and the neighbour's ejection link: two links with latency (ejection has none),
    // three hops, and the 50 GB/s x+ link is the narrowest (injection defaults to 2·link).
    const n = 8;
    const chunk = (1 << 20) / n;
    const perStep = 2 * 0.2 + 3 * 0.05 + chunk / 50e3;
    expect(got.timeUs).toBeCloseTo(2 * (n - 1) * perStep, 9);
    expect(got.busbw).toBeCloseTo(((1 << 20) / (got.timeUs * 1e3)) * ((2 * (n - 1)) / n), 9);
    // Each x+ link carries 2(n-1) chunks; utilization is bytes / (bandwidth · time).
    const top = got.links[0] as { bytes: number; utilization: number };
    expect(top.bytes).toBeCloseTo(2 * (n - 1) * chunk, 6);
    expect(top.utilization).toBeCloseTo((2 * (n - 1) * chunk) / (50e3 * got.timeUs), 9);
    const text = await cclab(...args, ...links);
    expect(text).toContain(`busbw ${got.busbw.toFixed(2)} GB/s`);
    expect(text).toContain(`last to finish: rank ${got.criticalRank}`);
    expect(text).toContain("engine: exact (every operation walked)");
    // Used: each host's injection and ejection link and each x+ link (8 + 8 + 8); no x- link.
    expect(text).toMatch(/hottest links .*, 24 of 32 used/);
    expect(text).toContain("ring:8: 8 hosts, 8 switches, 32 links");
  });

  it("-o writes the link heat map of one call on the topology; another extension is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-model-"));
    const file = join(dir, "heat.svg");
    const args = ["model", "allreduce", "--algorithm", "ring", "-n", "16", "--bytes", "1M", "--topology", "torus:4x4"];
    expect(await cclab(...args, "-o", file)).toContain(`wrote ${file} (the link heat map)`);
    const svg = readFileSync(file, "utf8");
    expect(svg).toMatch(/^<svg|^<\?xml/);
    expect(svg).toContain("link utilization on torus:4x4");
    await expect(cclab(...args, "-o", join(dir, "heat.png"))).rejects.toThrow(/--output.*heat\.png.*\.svg or \.html/);
  });

  it("without --topology, or plain 'full', it is today's alpha-beta model; full with a network flag is the flow model", async () => {
    const base = ["model", "allreduce", "--algorithm", "ring", "-n", "8", "--bytes", "64K"];
    const ab = await json<{ modelUs: number }>(...base);
    expect(await json<{ modelUs: number }>(...base, "--topology", "full")).toEqual(ab);
    const flow = await json<ModelJson>(...base, "--topology", "full", "--engine", "exact");
    // Ring all-reduce overlaps no two messages on a rank's link: the flow model equals alpha-beta.
    expect(flow.engine).toBe("exact");
    expect(flow.timeUs).toBeCloseTo(ab.modelUs, 9);
  });

  it("goes past the alpha-beta model's 1,024 ranks on a network, saying the engine approximates", async () => {
    const got = await json<ModelJson & { note?: string }>(
      // Sprayed: on the default ECMP-hashed fat-tree auto gives a call this short the exact engine.
      ..."model allreduce --algorithm double_binary_tree -n 2048 --bytes 64K --topology fattree --routing spray".split(
        " ",
      ),
    );
    const want = direct("allreduce", "double_binary_tree", "fattree", 2048, 64 * 1024, { routing: "spray" });
    expect(got.timeUs).toBe(want.r.time);
    expect(got.engine).toBe(want.r.engine);
    expect(got.approximate).toBe(true);
    expect(got.note).toBe(want.r.note);
    // The phases engine's rounds (PAT's 11 at 2,048 ranks: 2·10^5 flows) solved in two threads
    // and in this one alone: the same result, bit for bit.
    const pat = "model allgather --algorithm pat -n 2048 --bytes 1M --topology fattree".split(" ");
    const two = await json<ModelJson>(...pat, "--threads", "2");
    const alone = await json<ModelJson>(...pat, "--threads", "1");
    expect(two.engine).toBe("phases");
    expect(two.symmetry).toEqual({ kind: "rotate", p: 1 });
    expect(alone.timeUs).toBe(two.timeUs);
  });

  it("refuses what it cannot do, naming the flag and why", async () => {
    const one = ["model", "allreduce", "--algorithm", "ring", "--bytes", "64K"];
    await expect(cclab(...one, "-n", "2048")).rejects.toThrow(/-n.*2048 ranks.*at most 1024.*--topology/);
    await expect(cclab(...one, "-n", "8", "--link", "50GB/s")).rejects.toThrow(/--link.*give --topology too/);
    await expect(cclab(...one, "-n", "8", "--topology", "ring:8", "--alpha", "2")).rejects.toThrow(
      /--alpha.*alpha-beta model's.*--latency/,
    );
    await expect(cclab(...one, "-n", "32", "--topology", "torus:4x4")).rejects.toThrow(/16 hosts, fewer than the 32/);
    await expect(cclab(...one, "-n", "8", "--topology", "ring:8", "--link", "fast")).rejects.toThrow(/--link/);
    await expect(cclab(...one, "-n", "8", "--topology", "ring:8", "--threads", "0")).rejects.toThrow(
      /--threads.*integer in \[1, 1024\], got 0/,
    );
    await expect(cclab(...one, "-n", "8", "--threads", "2")).rejects.toThrow(/--threads.*give --topology too/);
    await expect(cclab(...one, "-n", "8", "--topology", "ring:8", "-b", "1K", "--sweep-n", "2,4")).rejects.toThrow(
      /--sweep-n/,
    );
  });
});

interface SweepJson {
  over: string;
  algorithms: string[];
  rows: { nranks: number; size: number; results: { algorithm: string; time: number; busbw: number }[] }[];
  crossovers: { a: string; b: string; between: [number, number]; fasterAbove: string }[];
}

describe("cclab model --topology: sweeps", () => {
  it("over N: each point is networkTime on the machine for that N; crossovers where the faster changes", async () => {
    const algs = ["ring", "recursive_doubling"];
    const got = await json<SweepJson>(
      ..."model allreduce --sweep-n 2,4,8,16 --bytes 64K --topology torus:4x4 --no-progress".split(" "),
      "--algorithms",
      algs.join(","),
    );
    expect(got.rows.map((r) => r.nranks)).toEqual([2, 4, 8, 16]);
    for (const row of got.rows) {
      for (const [i, a] of algs.entries()) {
        const want = direct("allreduce", a, "torus:4x4", row.nranks, 64 * 1024);
        expect(row.results[i]?.time).toBe(want.r.time);
        expect(row.results[i]?.busbw).toBeCloseTo(want.busbw, 9);
      }
    }
    // A point that cannot be modelled is kept with its reason: torus:4x4 has 16 hosts, not 32.
    const past = await json<{ rows: { nranks: number; results: { time: number | null; error?: string }[] }[] }>(
      ..."model allreduce --algorithms ring --sweep-n 16,32 --bytes 64K --topology torus:4x4 --no-progress".split(" "),
    );
    expect(past.rows.map((r) => r.nranks)).toEqual([16, 32]);
    expect(past.rows[0]?.results[0]?.error).toBeUndefined();
    expect(past.rows[1]?.results[0]?.error).toMatch(/16 hosts, fewer than the 32/);
    // Every sign change of (ring - recursive doubling) between consecutive N is a crossover, and only those.
    const d = got.rows.map((r) => (r.results[0]?.time as number) - (r.results[1]?.time as number));
    const changes = d.slice(1).filter((x, k) => Math.sign(x) !== Math.sign(d[k] as number) && x !== 0 && d[k] !== 0);
    expect(got.crossovers).toHaveLength(changes.length);
  });

  it("over sizes (-b -e -f): busbw per size as bench would compute it, and -o draws the chart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-model-"));
    const svg = join(dir, "busbw.svg");
    const got = await json<SweepJson>(
      ..."model allgather --algorithms ring,bruck -n 8 -b 1K -e 1M -f 32 --topology rail:2x4 --no-progress -o".split(
        " ",
      ),
      svg,
    );
    expect(got.over).toBe("bytes");
    expect(got.rows.map((r) => r.size)).toEqual([1024, 32768, 1048576]);
    for (const row of got.rows) {
      const want = direct("allgather", "bruck", "rail:2x4", 8, row.size);
      expect(row.results[1]?.time).toBe(want.r.time);
      expect(row.results[1]?.busbw).toBeCloseTo(want.busbw, 9);
    }
    const chart = readFileSync(svg, "utf8");
    expect(chart).toContain("<svg");
    expect(chart).toContain("busbw against size");
    for (const a of ["ring", "bruck"]) expect(chart).toContain(a);
    // The text table: one row per size, each algorithm's time and busbw, the fastest named.
    const text = await cclab(
      ..."model allgather --algorithms ring,bruck -n 8 -b 1K -e 1M -f 32 --topology rail:2x4 --no-progress".split(" "),
    );
    for (const row of got.rows) {
      const best = row.results.reduce((p, q) => (q.time < p.time ? q : p));
      expect(text).toMatch(
        new RegExp(`│ +${row.size === 1024 ? "1 KiB" : row.size === 32768 ? "32 KiB" : "1 MiB"} .*${best.algorithm} │`),
      );
    }
  });
});

describe("cclab bench --backend sim --topology", () => {
  it("times each size with the network model, as cclab model does, and names the machine", async () => {
    const args =
      "bench allreduce --backend sim -n 8 --algorithm ring -b 1K -e 64K -f 64 --topology ring:8 --no-progress";
    const got = JSON.parse(await cclab(...args.split(" "), "--json")) as {
      network: { topology: string };
      rows: { size: number; outOfPlace: { timeUs: number; busbw: number; wrong: number } }[];
    };
    expect(got.network.topology).toBe("ring:8");
    expect(got.rows.map((r) => r.size)).toEqual([1024, 65536]);
    for (const row of got.rows) {
      const want = direct("allreduce", "ring", "ring:8", 8, row.size);
      expect(row.outOfPlace.timeUs).toBe(want.r.time);
      expect(row.outOfPlace.busbw).toBeCloseTo(want.busbw, 9);
      expect(row.outOfPlace.wrong).toBe(0);
    }
    const text = await cclab(...args.split(" "));
    expect(text).toContain("# sim: times from the network model on ring:8");
    await expect(cclab(...args.split(" "), "--beta", "25GB/s")).rejects.toThrow(/--beta.*alpha-beta/);
  });
});

describe("cclab model --nccl-tuner", () => {
  it("writes NCCL's example tuner CSV: ranges tiling [0, 4294967295], each swept size in the range of its fastest", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cclab-model-"));
    const file = join(dir, "tuner.csv");
    const got = await json<{
      tuner: { minBytes: number; maxBytes: number; algo: string; algorithm: string }[];
      sweep: { algorithms: string[]; rows: { size: number; results: { time: number }[] }[] };
    }>(..."model allgather -n 8 --topology rail:2x4 -b 1K -e 16M -f 8 --no-progress --nccl-tuner".split(" "), file);
    const { tuner, sweep } = got;
    expect(sweep.algorithms).toEqual(["ring", "pat"]);
    expect(tuner[0]?.minBytes).toBe(0);
    expect(tuner[tuner.length - 1]?.maxBytes).toBe(4294967295);
    for (let i = 1; i < tuner.length; i++) expect(tuner[i]?.minBytes).toBe((tuner[i - 1]?.maxBytes as number) + 1);
    // One range per run of the same fastest algorithm over the swept sizes.
    const fastest = sweep.rows.map((r) => {
      const t = r.results.map((p) => p.time);
      return sweep.algorithms[t.indexOf(Math.min(...t))] as string;
    });
    expect(tuner).toHaveLength(1 + fastest.filter((a, k) => k > 0 && a !== fastest[k - 1]).length);
    sweep.rows.forEach((r, k) => {
      const range = tuner.find((x) => x.minBytes <= r.size && r.size <= x.maxBytes);
      expect(range?.algorithm, `${r.size} B`).toBe(fastest[k]);
    });
    // The CSV: '#' comments, then the plugin's ten fields per line.
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines.filter((l) => l.startsWith("#")).join("\n")).toContain(
      "coll,min_bytes,max_bytes,algo,proto,channels,nNodes,nRanks,numPipeOps,regBuff",
    );
    const data = lines.filter((l) => !l.startsWith("#")).map((l) => l.split(","));
    expect(data).toEqual(
      tuner.map((x) => [
        "allgather",
        String(x.minBytes),
        String(x.maxBytes),
        x.algo,
        "simple",
        "-1",
        "2",
        "8",
        "-1",
        "-1",
      ]),
    );
    for (const x of tuner) expect(["ring", "pat"]).toContain(x.algo);
    await expect(
      cclab(..."model reduce -n 8 --topology rail:2x4 --nccl-tuner".split(" "), join(dir, "r.csv")),
    ).rejects.toThrow(/--nccl-tuner.*not reduce/);
  });
});
