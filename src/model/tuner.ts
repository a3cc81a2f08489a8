/**
 * `cclab model --nccl-tuner FILE`: the fastest of NCCL's own algorithms per size on a modelled
 * machine, as the CSV that NCCL's example tuner plugin reads (NVIDIA/nccl ext-tuner/example,
 * NCCL_TUNER_CONFIG_FILE): one line per size range,
 *
 *   coll,min_bytes,max_bytes,algo,proto,channels,nNodes,nRanks,numPipeOps,regBuff
 *
 * The plugin takes the first line whose collective, inclusive byte range [min_bytes, max_bytes],
 * nNodes and nRanks match the call (-1 matching anything) and gives that algorithm and protocol a
 * cost of 0, so NCCL picks them. Its nBytes is the whole array for all-gather and reduce-scatter
 * (NCCL's ncclFuncMaxSendRecvCount), which is nccl-tests' and cclab's size S. cclab models
 * schedules, not NCCL's protocols (LL, LL128, Simple) or channels (thread blocks), so every line
 * says proto 'simple' (the protocol of bulk transfers) and channels -1 (NCCL's own choice), and
 * numPipeOps and regBuff -1 (any).
 */
import { type Crossover, crossoversOf, type GridSweep } from "./sweep.js";

/** NCCL's algorithms (the plugin's names) and the cclab schedule that runs each, per collective. */
export const NCCL_ALGORITHMS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  allreduce: { ring: "ring", tree: "double_binary_tree" },
  allgather: { ring: "ring", pat: "pat" },
  reducescatter: { ring: "ring", pat: "pat" },
  // NCCL's broadcast ring is a pipelined chain from the root.
  broadcast: { ring: "chain" },
};

/** The plugin's largest byte count in its examples ("covers all sizes"). */
export const TUNER_MAX_BYTES = 4294967295;

export interface TunerRow {
  readonly coll: string;
  readonly minBytes: number;
  readonly maxBytes: number;
  /** NCCL's name: ring, tree, pat. */
  readonly algo: string;
  /** The cclab schedule modelled for it. */
  readonly algorithm: string;
  readonly proto: "simple";
  readonly channels: -1;
  readonly nNodes: number;
  readonly nRanks: number;
  readonly numPipeOps: -1;
  readonly regBuff: -1;
}

/**
 * Size ranges from a sweep over sizes of NCCL's algorithms (in NCCL_ALGORITHMS order): each swept
 * size goes to its fastest algorithm; where the fastest changes between two swept sizes, the
 * boundary is where their two time lines cross (interpolated in log2 size, as the crossovers), so
 * the ranges tile [0, max] with no gap. Sizes no algorithm could be modelled at are left to their
 * neighbours.
 */
export function tunerRows(collective: string, r: GridSweep, dims: { nNodes: number; nRanks: number }): TunerRow[] {
  const names = NCCL_ALGORITHMS[collective];
  if (!names) throw new Error(`NCCL's tuner has no algorithms of ${collective} that cclab models`);
  const ncclOf = new Map(Object.entries(names).map(([nccl, ours]) => [ours, nccl]));
  const points: { size: number; best: number }[] = [];
  for (const row of r.rows) {
    let best = -1;
    row.results.forEach((p, i) => {
      if (Number.isFinite(p.time) && (best < 0 || p.time < (row.results[best]?.time as number))) best = i;
    });
    if (best >= 0) points.push({ size: row.size, best });
  }
  const rows: { best: number; min: number; max: number }[] = [];
  for (let k = 0; k < points.length; k++) {
    const p = points[k] as { size: number; best: number };
    const last = rows[rows.length - 1];
    if (last && last.best === p.best) continue;
    let start = 0;
    if (last) {
      const q = points[k - 1] as { size: number; best: number };
      start = Math.floor(boundary(r, q, p)) + 1;
      last.max = start - 1;
    }
    rows.push({ best: p.best, min: start, max: TUNER_MAX_BYTES });
  }
  const lastRow = rows[rows.length - 1];
  if (lastRow) lastRow.max = Math.max(TUNER_MAX_BYTES, points[points.length - 1]?.size ?? 0);
  return rows.map((x) => {
    const algorithm = r.algorithms[x.best] as string;
    return {
      coll: collective,
      minBytes: x.min,
      maxBytes: x.max,
      algo: ncclOf.get(algorithm) ?? algorithm,
      algorithm,
      proto: "simple",
      channels: -1,
      nNodes: dims.nNodes,
      nRanks: dims.nRanks,
      numPipeOps: -1,
      regBuff: -1,
    };
  });
}

/** Where the winner at q (smaller size) and the winner at p cross, between q.size and p.size. */
function boundary(r: GridSweep, q: { size: number; best: number }, p: { size: number; best: number }): number {
  const rowOf = (size: number) => r.rows.find((row) => row.size === size);
  const [rq, rp] = [rowOf(q.size), rowOf(p.size)];
  const names = [r.algorithms[q.best] as string, r.algorithms[p.best] as string];
  if (rq && rp) {
    const times = [rq, rp].map((row) => [row.results[q.best]?.time as number, row.results[p.best]?.time as number]);
    const c: Crossover | undefined = crossoversOf(names, [q.size, p.size], times)[0];
    if (c) return Math.min(Math.max(c.at, q.size), p.size - 1);
  }
  // No crossing between them (a size skipped): halfway in log2 size.
  return Math.sqrt(q.size * p.size);
}

/** The plugin's CSV: '#' comment lines first (the plugin skips them), then one line per row. */
export function tunerCsv(rows: readonly TunerRow[], comments: readonly string[]): string {
  const lines = [
    ...comments.map((c) => `# ${c}`),
    "# coll,min_bytes,max_bytes,algo,proto,channels,nNodes,nRanks,numPipeOps,regBuff",
    ...rows.map((x) =>
      [x.coll, x.minBytes, x.maxBytes, x.algo, x.proto, x.channels, x.nNodes, x.nRanks, x.numPipeOps, x.regBuff].join(
        ",",
      ),
    ),
  ];
  return `${lines.join("\n")}\n`;
}
