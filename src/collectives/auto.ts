/**
 * algorithm: 'auto' — a small table, read top to bottom, of which algorithm to use for a
 * collective given the group size n and the message size in bytes. The thresholds follow
 * MPICH's and Open MPI's tuned defaults in spirit (latency-bound small messages take
 * logarithmic algorithms, bandwidth-bound large ones take rings), and every rule says why.
 */
import type { Collective } from "../specs/index.js";

export interface Rule {
  readonly collective: Collective;
  readonly when: (n: number, bytes: number) => boolean;
  readonly algorithm: string;
  readonly why: string;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const pow2 = (n: number) => (n & (n - 1)) === 0;
const always = () => true;

export const RULES: readonly Rule[] = [
  {
    collective: "allreduce",
    when: (_n, b) => b <= 16 * KiB,
    algorithm: "recursive_doubling",
    why: "small message: log2(n) steps of the whole message beat 2(n-1) latency-bound ring steps",
  },
  {
    collective: "allreduce",
    when: (n, b) => n >= 64 && b <= 64 * MiB,
    algorithm: "double_binary_tree",
    why: "many ranks: the ring's 2(n-1) steps dominate; two complementary trees keep full bandwidth with log2(n) depth",
  },
  {
    collective: "allreduce",
    when: (n, b) => pow2(n) && b <= 512 * KiB,
    algorithm: "rabenseifner",
    why: "medium message on a power of two: recursive halving/doubling sends 2(n-1)/n of the data in 2·log2(n) steps",
  },
  {
    collective: "allreduce",
    when: (n, b) => n % 2 === 0 && !pow2(n) && b > 128 * KiB && b <= 8 * MiB,
    algorithm: "swing_bandwidth",
    why: "medium message on an even group that is not a power of two: Swing's reduce-scatter and all-gather send the bandwidth-optimal 2(n-1)/n in 2⌈log2 n⌉ steps, where Rabenseifner must fold (model: n = 24, 512 KiB, 90 µs against the ring's 270 µs)",
  },
  {
    collective: "allreduce",
    when: always,
    algorithm: "ring",
    why: "large message: the ring sends the bandwidth-optimal 2(n-1)/n of the data per rank",
  },
  {
    collective: "broadcast",
    when: (_n, b) => b <= 64 * KiB,
    algorithm: "binomial",
    why: "small message: log2(n) rounds",
  },
  {
    collective: "broadcast",
    when: (n) => n <= 8,
    algorithm: "chain",
    why: "few ranks, large message: a pipelined chain streams segments at link bandwidth",
  },
  {
    collective: "broadcast",
    when: always,
    algorithm: "scatter_allgather",
    why: "large message, many ranks: van de Geijn's scatter + ring all-gather sends about 2x the data once per rank",
  },
  { collective: "reduce", when: (_n, b) => b <= 64 * KiB, algorithm: "binomial", why: "small message: log2(n) rounds" },
  {
    collective: "reduce",
    when: always,
    algorithm: "rabenseifner",
    why: "large message: reduce-scatter + gather halves the data each rank handles",
  },
  {
    collective: "gather",
    when: always,
    algorithm: "binomial",
    why: "log2(n) rounds; each block crosses at most log2(n) links",
  },
  {
    collective: "scatter",
    when: always,
    algorithm: "binomial",
    why: "log2(n) rounds; each block crosses at most log2(n) links",
  },
  {
    collective: "allgather",
    when: (n, b) => b * n <= 64 * KiB,
    algorithm: "bruck",
    why: "small result: ceil(log2 n) steps for any n",
  },
  {
    collective: "allgather",
    when: (n, b) => pow2(n) && b * n <= 1 * MiB,
    algorithm: "recursive_doubling",
    why: "medium result on a power of two: log2(n) steps",
  },
  { collective: "allgather", when: always, algorithm: "ring", why: "large result: the ring is bandwidth-optimal" },
  {
    collective: "reducescatter",
    when: (n, b) => pow2(n) && b * n <= 1 * MiB,
    algorithm: "recursive_halving",
    why: "small or medium message on a power of two: log2(n) steps",
  },
  {
    collective: "reducescatter",
    when: (n, b) => !pow2(n) && b <= 64 * KiB,
    algorithm: "pat",
    why: "small blocks on a group that is not a power of two: PAT's trees take about log2(n) steps where the ring takes n-1 (model: n = 24, 4 KiB blocks, 21 µs against the ring's 119 µs)",
  },
  {
    collective: "reducescatter",
    when: always,
    algorithm: "ring",
    why: "the ring is bandwidth-optimal and works for any n",
  },
  {
    collective: "alltoall",
    when: (n, b) => b * n <= 4 * KiB && n >= 8,
    algorithm: "bruck",
    why: "tiny blocks, many ranks: log2(n) steps beat n-1 latency-bound exchanges",
  },
  {
    collective: "alltoall",
    when: always,
    algorithm: "grouped",
    why: "one grouped round lets every transfer progress at once (what torch does over NCCL)",
  },
  {
    collective: "alltoallv",
    when: always,
    algorithm: "grouped",
    why: "one grouped round lets every transfer progress at once (what torch does over NCCL)",
  },
  { collective: "barrier", when: always, algorithm: "dissemination", why: "ceil(log2 n) rounds for any n" },
];

export interface Choice {
  readonly algorithm: string;
  /** Why, in words (built only when read: the front API asks for the choice on every call). */
  readonly why: string;
}

/** The first rule that applies and whose algorithm is registered (`available`). */
export function chooseAlgorithm(
  collective: Collective,
  n: number,
  bytes: number,
  available: readonly string[],
): Choice | undefined {
  for (const r of RULES) {
    if (r.collective === collective && r.when(n, bytes) && available.includes(r.algorithm)) {
      return {
        algorithm: r.algorithm,
        get why() {
          return `${collective} on ${n} ranks, ${bytes} B: ${r.why}`;
        },
      };
    }
  }
  const first = available[0];
  return first === undefined
    ? undefined
    : { algorithm: first, why: `${collective}: no rule applies; first registered` };
}
