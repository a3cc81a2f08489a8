/**
 * allreduce/reduce_broadcast: Parameter server: reduce everything at rank 0 one rank at a time,
 * then send the result to all.
 *
 * Limits: any size; rank 0 moves 2(n-1)·count, so it only suits few ranks or tiny messages.
 * Cost:   n steps; (n-1)·count elements sent per rank.
 * Source: the tutorial's parameter server; Open MPI ompi_coll_base_allreduce_intra_basic_linear
 *         (reduce + bcast).
 *
 * Step table: `cclab explain allreduce --algorithm reduce_broadcast -n 4`
 * (kept current in test/golden/explain/allreduce/reduce_broadcast.txt).
 * (This header is written from the fields below by src/tools/headers.ts.)
 */
import { defineAlgorithm, f, labelled } from "../../src/schedule/dsl.js";
import { linear as linearBroadcast } from "../broadcast/linear.js";
import { linear as linearReduce } from "../reduce/linear.js";

const SERVER = 0;

export const reduceBroadcast = defineAlgorithm({
  collective: "allreduce",
  name: "reduce_broadcast",
  summary: "Parameter server: reduce everything at rank 0 one rank at a time, then send the result to all.",
  limits: "any size; rank 0 moves 2(n-1)·count, so it only suits few ranks or tiny messages",
  source: "the tutorial's parameter server; Open MPI ompi_coll_base_allreduce_intra_basic_linear (reduce + bcast)",
  cost: { steps: f("n", (n) => n), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  *schedule(c, mem) {
    // reduce/linear to rank 0, then broadcast/linear from rank 0 of the sum in its output.
    yield* labelled("reduce: ", linearReduce.schedule({ ...c, collective: "reduce", root: SERVER }, mem));
    const sum = { ...mem, input: mem.output };
    yield* labelled(
      "broadcast: ",
      linearBroadcast.schedule({ ...c, collective: "broadcast", root: SERVER, inPlace: true }, sum),
    );
  },
});
