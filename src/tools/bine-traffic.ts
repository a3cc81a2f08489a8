/**
 * Bine's claim measured: how many bytes cross the upper links of a two-level fat-tree (leaf to
 * spine) for the bine algorithms against binomial trees and recursive doubling/halving, with the
 * ranks placed in blocks of `group` per leaf (the model's default placement). Counted from the
 * schedules themselves (every send whose two ends sit under different leaves), as the authors'
 * simulation/out_bytes.py counts a group's outgoing bytes; the model's own per-link bytes
 * (upLinkBytes) agree, and test/bine.test.ts holds both.
 * The same count on a dragonfly (every message between groups crosses one global link) measures
 * Bine's headline claim on the paper's own machines (globalLinkBytes agrees).
 * Run: npx tsx src/tools/bine-traffic.ts (prints the tables of docs/network-validation.md, "Bine trees").
 */
import { pathToFileURL } from "node:url";
import { shapeOf } from "../bench/metrics.js";
import { dtypeInfo } from "../core/dtype.js";
import { networkTime, parseTopology, placeRanks } from "../model/network/index.js";
import { compile } from "../schedule/plan.js";
import { findAlgorithm } from "../schedule/registry.js";
import { type Collective, makeCall, rankCall, specOf } from "../specs/index.js";

const site = { op: "bine-traffic" };

/** A bine algorithm and the classic one it is measured against. */
export interface Pair {
  readonly collective: Collective;
  readonly bine: string;
  readonly baseline: string;
}

export const PAIRS: readonly Pair[] = [
  { collective: "broadcast", bine: "bine", baseline: "binomial" },
  { collective: "reduce", bine: "bine", baseline: "binomial" },
  { collective: "gather", bine: "bine", baseline: "binomial" },
  { collective: "scatter", bine: "bine", baseline: "binomial" },
  { collective: "allreduce", bine: "bine_latency", baseline: "recursive_doubling" },
  { collective: "allreduce", bine: "bine_bandwidth", baseline: "rabenseifner" },
  { collective: "allgather", bine: "bine", baseline: "recursive_doubling" },
  { collective: "reducescatter", bine: "bine", baseline: "recursive_halving" },
];

function callOf(collective: Collective, algorithm: string, n: number, bytes: number) {
  const alg = findAlgorithm(collective, algorithm, site);
  const { count } = shapeOf(collective, n, bytes, specOf(collective).defaultDtype);
  return { alg, call: makeCall({ collective, size: n, count }, alg) };
}

/**
 * Bytes sent in one call of `bytes` (nccl-tests' size) on n ranks between ranks under different
 * leaves of `group` hosts, the job's rank 0 sitting at host `offset` of its first leaf (rank r
 * under leaf ⌊(r + offset) / group⌋): cross[offset] for every offset 0..group-1, and all bytes sent.
 */
export function crossGroupBytes(
  collective: Collective,
  algorithm: string,
  n: number,
  bytes: number,
  group: number,
): { readonly cross: Float64Array; readonly total: number } {
  const { alg, call } = callOf(collective, algorithm, n, bytes);
  const size = dtypeInfo(call.dtype).bytes;
  const cross = new Float64Array(group);
  let total = 0;
  for (let r = 0; r < n; r++) {
    for (const op of compile(alg, rankCall(call, r)).ops) {
      if (op.kind !== "send") continue;
      const b = op.region.count * size;
      total += b;
      for (let o = 0; o < group; o++) {
        if (Math.floor((r + o) / group) !== Math.floor((op.peer + o) / group)) cross[o] = (cross[o] as number) + b;
      }
    }
  }
  return { cross, total };
}

/** The network model's bytes over every link of one kind of `topology` for the same call (exact engine, block placement). */
export function linkKindBytes(
  collective: Collective,
  algorithm: string,
  n: number,
  bytes: number,
  topology: string,
  kind: string,
): number {
  const { alg, call } = callOf(collective, algorithm, n, bytes);
  const t = parseTopology(topology, n, {});
  const r = networkTime(alg, call, { topology: t, placement: placeRanks(t, n), engine: "exact" });
  let sum = 0;
  for (let l = 0; l < r.linkBytes.length; l++) if (t.links.kind[l] === kind) sum += r.linkBytes[l] as number;
  return sum;
}

/** The network model's bytes over every leaf-to-spine link of a fat-tree for the same call. */
export const upLinkBytes = (collective: Collective, algorithm: string, n: number, bytes: number, topology: string) =>
  linkKindBytes(collective, algorithm, n, bytes, topology, "up");

/** The network model's bytes over every global link of a dragonfly (each message between groups crosses one). */
export const globalLinkBytes = (
  collective: Collective,
  algorithm: string,
  n: number,
  bytes: number,
  topology: string,
) => linkKindBytes(collective, algorithm, n, bytes, topology, "global");

/** Bine's saving on the upper links against its baseline: 1 - bine / baseline, with the job at offset 0 of a leaf (aligned) and averaged over every offset. */
export function saving(p: Pair, n: number, bytes: number, group: number): { aligned: number; anyOffset: number } {
  const b = crossGroupBytes(p.collective, p.bine, n, bytes, group).cross;
  const c = crossGroupBytes(p.collective, p.baseline, n, bytes, group).cross;
  const sum = (x: Float64Array) => x.reduce((a, v) => a + v, 0);
  return { aligned: 1 - (b[0] as number) / (c[0] as number), anyOffset: 1 - sum(b) / sum(c) };
}

/** The table of docs/network-validation.md: n = 256, 1 MiB, leaves of 8 and 32 hosts. */
export const TABLE = { n: 256, bytes: 2 ** 20, groups: [8, 32] } as const;

/**
 * The Bine paper's dragonfly (LUMI's electrical group: 16 routers of 16 hosts, `dragonfly:groups=4`
 * in the model): 1,024 ranks over 4 groups of 256, 1 MiB; global-link bytes are the bytes between groups.
 */
export const DRAGONFLY = { n: 1024, bytes: 2 ** 20, group: 256, topology: "dragonfly:groups=4" } as const;

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function main(): void {
  const { n, bytes, groups } = TABLE;
  console.log(
    `upper-link bytes Bine saves, 1 - bine/baseline: ${n} ranks, 1 MiB, g hosts per leaf, the job aligned to a leaf / at any offset`,
  );
  console.log(`| algorithm | against | ${groups.map((g) => `g = ${g} aligned | g = ${g} any offset`).join(" | ")} |`);
  console.log(`|---|---|${groups.map(() => "---|---").join("|")}|`);
  for (const p of PAIRS) {
    const cells = groups.flatMap((g) => {
      const s = saving(p, n, bytes, g);
      return [pct(s.aligned), pct(s.anyOffset)];
    });
    console.log(`| ${p.collective}/${p.bine} | ${p.baseline} | ${cells.join(" | ")} |`);
  }
  const d = DRAGONFLY;
  console.log(`\nglobal-link bytes Bine saves on ${d.topology} (${d.group} hosts per group), ${d.n} ranks, 1 MiB`);
  console.log("| algorithm | against | aligned | any offset |\n|---|---|---|---|");
  for (const p of PAIRS) {
    const s = saving(p, d.n, d.bytes, d.group);
    console.log(`| ${p.collective}/${p.bine} | ${p.baseline} | ${pct(s.aligned)} | ${pct(s.anyOffset)} |`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main();
