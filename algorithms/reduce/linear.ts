/**
 * reduce/linear: Every rank sends to the root, which reduces the contributions in rank order.
 *
 * Limits: any size and root; n-1 sequential steps and all the reductions at the root.
 * Cost:   n-1 steps; count elements sent per rank.
 * Source: Open MPI ompi_coll_base_reduce_intra_basic_linear.
 *
 * Step table: `cclab explain reduce --algorithm linear -n 4`
 * (kept current in test/golden/explain/reduce/linear.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import {
  defineAlgorithm,
  f,
  type LocalOp,
  type Region,
  recv,
  reduce,
  send,
  step,
  type Transfer,
} from "../../src/schedule/dsl.js";

export const linear = defineAlgorithm({
  collective: "reduce",
  name: "linear",
  summary: "Every rank sends to the root, which reduces the contributions in rank order.",
  limits: "any size and root; n-1 sequential steps and all the reductions at the root",
  source: "Open MPI ompi_coll_base_reduce_intra_basic_linear",
  cost: { steps: f("n-1", (n) => n - 1), sent: f("count", (_n, count) => count) },
  *schedule({ rank, size, root, count }, mem) {
    if (rank !== root) {
      yield step("send", [send(root, mem.input)]);
      return;
    }
    // The root folds the contributions in rank order, ((x0 op x1) op x2) ..., whatever the root,
    // like a sequential loop. Root 0 accumulates in its output, starting from its own input;
    // another root receives x0 into scratch first, since its output may be its input (in place).
    const tmp = mem.scratch(count);
    const acc0 = root === 0 ? mem.input : mem.scratch(count);
    const steps: { label: string; transfers: Transfer[]; local: LocalOp[] }[] = [];
    let acc: Region | undefined = root === 0 ? acc0 : undefined;
    for (let peer = 0; peer < size; peer++) {
      if (peer === 0 && root === 0) continue;
      const into = peer === size - 1 ? mem.output : root === 0 ? mem.output : acc0;
      if (peer === root) {
        // The root's own contribution joins in its rank's turn, in the previous step.
        steps[steps.length - 1]?.local.push(reduce(into, mem.input, acc));
      } else if (acc === undefined) {
        steps.push({ label: `recv from ${peer}`, transfers: [recv(peer, acc0)], local: [] });
      } else {
        steps.push({ label: `recvReduce from ${peer}`, transfers: [recv(peer, tmp)], local: [reduce(into, tmp, acc)] });
      }
      acc = peer === 0 ? acc0 : into;
    }
    for (const s of steps) yield step(s.label, s.transfers, s.local);
  },
});
