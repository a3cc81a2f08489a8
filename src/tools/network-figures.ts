/**
 * The network model's example pictures in docs/img (docs/network.md shows them):
 *   network-torus8x8-recursive_doubling.svg, network-torus8x8-swing.svg
 *       all-reduce of 64 MiB on 64 ranks of a torus 8x8: recursive doubling's far exchanges pile
 *       onto a few rings, Swing's swinging peers spread over every link;
 *   network-fattree-over2.svg: ring all-reduce on a two-level fat-tree oversubscribed 2:1;
 *   network-rail.svg: ring all-reduce on 4 nodes of 8 GPUs on rails (NVLink inside a node, a NIC per GPU to its rail);
 *   network-busbw-torus8x8.svg: busbw against size for several all-reduce algorithms on the torus.
 * Regenerate: `npx tsx src/tools/network-figures.ts [outdir]` (default docs/img); each figure's
 * command is printed beside it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { shapeOf } from "../bench/metrics.js";
import { networkTime, parseTopology, placeRanks } from "../model/network/index.js";
import { findAlgorithm } from "../schedule/registry.js";
import { makeCall, specOf } from "../specs/index.js";
import { busbwChartSvg, linkHeatmapSvg } from "../viz/network.js";
import { bytesText } from "../viz/svg.js";

const site = { op: "network-figures" };

interface Run {
  readonly time: number;
  readonly linkBytes: Float64Array;
  readonly engine: string;
}

function run(collective: "allreduce", algorithm: string, topology: string, n: number, bytes: number): Run {
  const alg = findAlgorithm(collective, algorithm, site);
  const spec = specOf(collective);
  const { count } = shapeOf(collective, n, bytes, spec.defaultDtype);
  const call = makeCall({ collective, size: n, count }, alg);
  const t = parseTopology(topology, n, {});
  const r = networkTime(alg, call, { topology: t, placement: placeRanks(t, n) });
  return { time: r.time, linkBytes: r.linkBytes, engine: r.engine };
}

export function networkFigures(outDir: string): string[] {
  const written: string[] = [];
  const out = (name: string, svg: string) => {
    const file = join(outDir, name);
    writeFileSync(file, svg);
    written.push(file);
  };
  const MiB = 2 ** 20;
  const heat = (name: string, alg: string, topology: string, n: number, bytes: number) => {
    const r = run("allreduce", alg, topology, n, bytes);
    const t = parseTopology(topology, n, {});
    out(
      name,
      linkHeatmapSvg(t, r.linkBytes, r.time, {
        title: `allreduce/${alg}, ${bytesText(bytes)} on ${n} ranks of ${t.name}: ${(r.time / 1000).toFixed(2)} ms (${r.engine})`,
      }),
    );
  };
  heat("network-torus8x8-recursive_doubling.svg", "recursive_doubling", "torus:8x8", 64, 64 * MiB);
  heat("network-torus8x8-swing.svg", "swing_bandwidth", "torus:8x8", 64, 64 * MiB);
  heat("network-fattree-over2.svg", "ring", "fattree:leaves=4,hosts=8,over=2", 32, 64 * MiB);
  heat("network-rail.svg", "ring", "rail:4x8", 32, 64 * MiB);
  const sizes = [2 ** 10, 2 ** 14, 2 ** 18, 2 ** 22, 2 ** 26];
  const series = ["ring", "recursive_doubling", "rabenseifner", "swing_bandwidth", "double_binary_tree"].map((alg) => ({
    name: alg,
    points: sizes.map((b): [number, number] => {
      const r = run("allreduce", alg, "torus:8x8", 64, b);
      const busbw = (b / r.time) * specOf("allreduce").busFactor(64);
      return [b, busbw / 1000];
    }),
  }));
  out("network-busbw-torus8x8.svg", busbwChartSvg(series, "allreduce on 64 ranks of a torus 8x8 (network model)"));
  return written;
}

if (process.argv[1]?.endsWith("network-figures.ts")) {
  const dir = process.argv[2] ?? join(import.meta.dirname, "..", "..", "docs", "img");
  for (const f of networkFigures(dir)) console.log(`wrote ${f}`);
}
