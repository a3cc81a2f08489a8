/**
 * allreduce/hierarchical: Hierarchical all-reduce on a 2-D mesh of g × n/g ranks (g = the largest
 * divisor of n not above √n): ring reduce-scatter inside each group of g consecutive ranks, ring
 * all-reduce of each rank's chunk across the groups, ring all-gather inside.
 *
 * Limits: any size (g = 1 for a prime n: one ring across); 2(n-1)/n·count sent, as the ring, in
 *         2(g-1) + 2(n/g-1) steps instead of 2(n-1); a schedule runs on one communicator and cannot
 *         split it, so the groups and the rings across them are rank spaces (local index, group
 *         index) mapped onto the communicator's ranks with mapPeers: what split communicators would
 *         give, with the same messages; the alpha-beta model (no --topology) makes links inside a
 *         group no faster than those across; `cclab model --topology rail:16x8` does (NVLink inside
 *         a node, NICs across: docs/why-these-algorithms.md).
 * Cost:   2(g-1) + 2(n/g-1) steps; 2(g-1)·⌈count/g⌉ + 2(n/g-1)·⌈⌈count/g⌉/(n/g)⌉ elements sent per
 *         rank.
 * Source: Horovod's hierarchical all-reduce (HOROVOD_HIERARCHICAL_ALLREDUCE: reduce-scatter in the
 *         node, all-reduce across nodes, all-gather in the node); the 2-D torus all-reduce of
 *         Mikami et al. 2018; composed from the ring routines of algorithms/lib/ring.ts.
 *
 * Step table: `cclab explain allreduce --algorithm hierarchical -n 4`
 * (kept current in test/golden/explain/allreduce/hierarchical.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { InvalidArgumentError } from "../../src/core/errors.js";
import {
  type Algorithm,
  type Chunk,
  chunkOf,
  defineAlgorithm,
  f,
  type Memory,
  mapPeers,
  partition,
  type Region,
  type Schedule,
  sub,
} from "../../src/schedule/dsl.js";
import type { RankCall } from "../../src/specs/types.js";
import { ringAllGather, ringReduceScatter } from "../lib/ring.js";

/** The default mesh: g = the largest divisor of n not above √n, so the groups are as square as n allows (g = 1 for a prime n). */
export function squarestGroup(n: number): number {
  let g = 1;
  for (let d = 1; d * d <= n; d++) if (n % d === 0) g = d;
  return g;
}

/** Steps of any rank: a ring of g inside the group twice, a ring all-reduce of n/g across groups. */
const meshSteps = (n: number, g: number) => 2 * (g - 1) + 2 * (n / g - 1);

/** Elements the busiest rank sends: (g-1) chunks of ⌈count/g⌉ each way inside, 2(h-1) pieces of ⌈⌈count/g⌉/h⌉ across. */
const meshSent = (n: number, count: number, g: number) => {
  const h = n / g;
  const chunk = Math.ceil(count / g);
  return 2 * (g - 1) * chunk + 2 * (h - 1) * Math.ceil(chunk / h);
};

/**
 * The schedule on the g × n/g mesh `groupSize(n)` gives, for any name: the one part of the
 * algorithm that depends on the mesh. The group size must divide n.
 */
function* onMesh(name: string, groupSize: (n: number) => number, c: RankCall, mem: Memory): Schedule {
  const { rank, size, count } = c;
  const { output, scratch } = mem;
  const g = groupSize(size);
  if (!Number.isInteger(g) || g < 1 || size % g !== 0) {
    throw new InvalidArgumentError(
      { rank, op: `allreduce/${name}`, arg: "groupSize" },
      `the group size must divide the ${size} ranks; got ${g}`,
    );
  }
  const h = size / g;
  // Rank = group · g + local: groups are runs of g consecutive ranks (a node's GPUs).
  const group = Math.floor(rank / g);
  const local = rank % g;
  const inGroup = (v: number) => group * g + v;
  const acrossGroups = (v: number) => v * g + local;
  const chunks = partition(count, g);
  let tmp: Region | undefined;
  const t = () => (tmp ??= scratch((chunks[0] as Chunk).count));
  // 1. Inside the group: after g-1 steps chunk `local` holds the group's sum.
  yield* mapPeers(
    ringReduceScatter(local, g, { chunks, input: output, acc: (_k, j) => chunkOf(output, chunks[j] as Chunk), tmp: t }),
    inGroup,
  );
  // 2. Across groups: the ranks with the same local index all-reduce that chunk.
  const mine = chunkOf(output, chunks[local] as Chunk);
  const pieces = partition(mine.count, h);
  yield* mapPeers(
    ringReduceScatter(group, h, {
      chunks: pieces,
      input: mine,
      acc: (_k, j) => chunkOf(mine, pieces[j] as Chunk),
      tmp: () => sub(t(), 0, (pieces[0] as Chunk).count),
    }),
    acrossGroups,
  );
  yield* mapPeers(ringAllGather(group, h, mine, pieces), acrossGroups);
  // 3. Inside the group: every chunk to every rank.
  yield* mapPeers(ringAllGather(local, g, output, chunks), inGroup);
}

/** The cost on the mesh `groupSize(n)` gives. */
const meshCost = (groupSize: (n: number) => number) => ({
  steps: f("2(g-1) + 2(n/g-1)", (n) => meshSteps(n, groupSize(n))),
  sent: f("2(g-1)·⌈count/g⌉ + 2(n/g-1)·⌈⌈count/g⌉/(n/g)⌉", (n, count) => meshSent(n, count, groupSize(n))),
  exact: (n: number, count: number) => count % n === 0,
});

const SQUAREST = "g = the largest divisor of n not above √n";
const summaryFor = (shape: string) =>
  `Hierarchical all-reduce on a 2-D mesh of g × n/g ranks (${shape}): ring reduce-scatter inside each group of g consecutive ranks, ring all-reduce of each rank's chunk across the groups, ring all-gather inside.`;

export const hierarchical = defineAlgorithm({
  collective: "allreduce",
  name: "hierarchical",
  summary: summaryFor(SQUAREST),
  limits:
    "any size (g = 1 for a prime n: one ring across); 2(n-1)/n·count sent, as the ring, in 2(g-1) + 2(n/g-1) steps instead of 2(n-1); a schedule runs on one communicator and cannot split it, so the groups and the rings across them are rank spaces (local index, group index) mapped onto the communicator's ranks with mapPeers: what split communicators would give, with the same messages; the alpha-beta model (no --topology) makes links inside a group no faster than those across; `cclab model --topology rail:16x8` does (NVLink inside a node, NICs across: docs/why-these-algorithms.md)",
  source:
    "Horovod's hierarchical all-reduce (HOROVOD_HIERARCHICAL_ALLREDUCE: reduce-scatter in the node, all-reduce across nodes, all-gather in the node); the 2-D torus all-reduce of Mikami et al. 2018; composed from the ring routines of algorithms/lib/ring.ts",
  form: "in-place",
  cost: meshCost(squarestGroup),
  schedule: (c, mem) => onMesh("hierarchical", squarestGroup, c, mem),
});

/**
 * Hierarchical all-reduce on a mesh of your own: `groupSize(n)` must divide n (e.g. `() => 8`
 * for 8 GPUs a node, on multiples of 8); `shape` says so in the summary. Export what it returns
 * from a file and load it with --algorithm-file.
 */
export function hierarchicalAllreduce(name: string, groupSize: (n: number) => number, shape: string): Algorithm {
  return {
    ...hierarchical,
    name,
    summary: summaryFor(shape),
    cost: meshCost(groupSize),
    schedule: (c, mem) => onMesh(name, groupSize, c, mem),
  };
}
