/**
 * barrier/dissemination: the dissemination barrier of Hensgen, Finkel and Manber (MPICH's
 * MPIR_Barrier_intra_dissemination, Open MPI's ompi_coll_base_barrier_intra_bruck).
 *
 * In round k rank r sends a one-element token to (r + 2^k) mod n and receives one from
 * (r - 2^k) mod n. After round k every rank has heard, directly or through others, from the
 * 2^(k+1) ranks before it, so after ⌈log2 n⌉ rounds it has heard from all n. The token sent
 * and the token received are separate scratch elements, so no step receives into memory it
 * sends from.
 *
 * Limits: any size (no power-of-two requirement); ⌈log2 n⌉ rounds of n messages each.
 * Cost: ⌈log2 n⌉ steps; ⌈log2 n⌉ · s bytes sent per rank.
 *
 * Step table (n = 4), from `cclab explain barrier --algorithm dissemination -n 4`:
 * barrier/dissemination: n = 4, count = 0, out of place, segment 1
 * cells: [0+1] holds ranks 0 and 1's contributions to that element; . not written
 *
 * step 1
 *   rank 0  round 0: send token to 1, recv from 3: tmp[0]->1 tmp[1]<-3
 *   rank 1  round 0: send token to 2, recv from 0: tmp[0]->2 tmp[1]<-0
 *   rank 2  round 0: send token to 3, recv from 1: tmp[0]->3 tmp[1]<-1
 *   rank 3  round 0: send token to 0, recv from 2: tmp[0]->0 tmp[1]<-2
 *
 * step 2
 *   rank 0  round 1: send token to 2, recv from 2: tmp[0]->2 tmp[1]<-2
 *   rank 1  round 1: send token to 3, recv from 3: tmp[0]->3 tmp[1]<-3
 *   rank 2  round 1: send token to 0, recv from 0: tmp[0]->0 tmp[1]<-0
 *   rank 3  round 1: send token to 1, recv from 1: tmp[0]->1 tmp[1]<-1
 *
 * cost: ⌈log2 n⌉ steps, ⌈log2 n⌉ · s bytes sent per rank; here 2 steps, at most 2 elements sent by a rank
 */
import { recv, region, send, step } from "../../src/schedule/build.js";
import type { Algorithm } from "../../src/schedule/types.js";
import { ceilLog2 } from "../topology/binomial.js";

export const dissemination: Algorithm = {
  collective: "barrier",
  name: "dissemination",
  summary: "Dissemination barrier: in round k each rank signals the rank 2^k ahead of it.",
  limits: "any size; ⌈log2 n⌉ rounds",
  cost: {
    stepsFormula: "⌈log2 n⌉",
    bytesFormula: "⌈log2 n⌉ · s",
    steps: (n) => ceilLog2(n),
    sentElements: (n) => ceilLog2(n),
  },
  scratch: (ctx) => (ctx.size === 1 ? 0 : 2),
  *schedule(ctx) {
    const { rank, size } = ctx;
    const token = region("scratch", 0, 1);
    const heard = region("scratch", 1, 1);
    for (let dist = 1, k = 0; dist < size; dist <<= 1, k++) {
      const to = (rank + dist) % size;
      const from = (rank - dist + size) % size;
      yield step(`round ${k}: send token to ${to}, recv from ${from}`, [send(to, token), recv(from, heard)]);
    }
  },
};
