/** `cclab explain <collective> --algorithm <name> -n 4`: the step table, from the schedule itself. */
import type { Command } from "commander";
import { explain, explainCall } from "../schedule/explain.js";
import { selectAlgorithms } from "../verify/load.js";
import { intOption } from "./options.js";

export function registerExplain(program: Command): void {
  program
    .command("explain")
    .description(
      "print an algorithm's step table: who sends which region to whom, what is reduced, what each rank holds",
    )
    .argument(
      "<collective>",
      "broadcast, reduce, gather, scatter, allgather, reducescatter, allreduce, alltoall, alltoallv, barrier",
    )
    .option("--algorithm <name>", "algorithm name (see cclab verify); optional with --algorithm-file")
    .option("-n, --size <n>", "number of ranks", intOption("-n", 1, 256), 4)
    .option(
      "--count <n>",
      "elements (NCCL's count for the collective); default one element per chunk",
      intOption("--count", 0),
    )
    .option("--root <n>", "root rank", intOption("--root", 0), 0)
    .option("--in-place", "in-place call")
    .option("--segment <n>", "pipelining segment in elements", intOption("--segment", 1), 1)
    .option("--algorithm-file <file>", "your own algorithm file")
    .action(async (collective: string, o) => {
      if (!o.algorithm && !o.algorithmFile) throw new Error("--algorithm <name> is required (or --algorithm-file)");
      const algs = await selectAlgorithms({ collective, algorithm: o.algorithm, algorithmFile: o.algorithmFile });
      if (algs.length > 1) {
        throw new Error(
          `${o.algorithmFile} has several ${collective} algorithms (${algs.map((a) => a.name).join(", ")}); pick one with --algorithm`,
        );
      }
      const [alg] = algs;
      if (!alg) return;
      const base = explainCall(alg, o.size);
      console.log(
        explain(alg, {
          ...base,
          count: o.count ?? base.count,
          root: o.root,
          inPlace: Boolean(o.inPlace),
          segment: o.segment,
        }),
      );
    });
}
