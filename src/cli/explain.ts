/** `cclab explain <collective> --algorithm <name> -n 4`: the step table, from the schedule itself. */
import type { Command } from "commander";
import { InvalidArgumentError } from "../core/errors.js";
import type { Algorithm } from "../schedule/dsl.js";
import { explain, explainCallFor, explainSteps } from "../schedule/explain.js";
import type { CollectiveCall } from "../specs/types.js";
import { selectAlgorithms } from "../verify/load.js";
import { jsonOption, nranksOption, parsers, printJson, TOOL_MAX_RANKS } from "./options.js";
import { bindTopology, topologyHosts } from "./topology-shape.js";

interface ExplainFlags {
  algorithm?: string;
  algorithmFile?: string;
  nranks: number;
  count?: number;
  root: number;
  inPlace?: boolean;
  segment?: number;
  json?: boolean;
  topology?: string;
  placement?: string;
}

/** explain --json: the call, each step's operations per rank and the state table after it, the checker's verdict. */
export function explainJson(alg: Algorithm, call: CollectiveCall) {
  const e = explainSteps(alg, call);
  return {
    collective: alg.collective,
    algorithm: alg.name,
    call: {
      nranks: call.size,
      count: call.count,
      root: call.root,
      inPlace: call.inPlace,
      segment: call.segment,
      dtype: call.dtype,
    },
    errors: [...e.errors],
    steps: e.steps.map((s) => ({
      title: s.title,
      ops: s.ops,
      state: s.rows.map((r) => ({ name: r.name, cells: r.cells })),
    })),
    cost: { steps: alg.cost.steps.text, sentPerRank: alg.cost.sent.text },
  };
}

export function registerExplain(program: Command): void {
  const p = parsers("explain");
  program
    .command("explain")
    .description(
      "print an algorithm's step table: who sends which region to whom, what is reduced, what each rank holds",
    )
    .argument(
      "<collective>",
      "broadcast, reduce, gather, scatter, allgather, reducescatter, allreduce, alltoall, alltoallv, barrier (torch's names too)",
    )
    .option("--algorithm <name>", "algorithm name (see cclab list); optional with --algorithm-file")
    .addOption(nranksOption("ranks", p.int("-n", 1, TOOL_MAX_RANKS), 4))
    .option(
      "--count <n>",
      "elements (NCCL's count for the collective); default one element per chunk",
      p.int("--count", 0),
    )
    .option("--root <n>", "root rank", p.int("--root", 0), 0)
    .option("--in-place", "in-place call")
    .option(
      "--segment <n>",
      "pipelining segment in elements (default: 1 with the default count, so pipelining shows; with --count, the front API's)",
      p.int("--segment", 1),
    )
    .option("--algorithm-file <file>", "your own algorithm file")
    .option(
      "--topology <spec>",
      "the machine, as cclab model takes it (torus:4x4, mesh:2x4, ...): an algorithm that reads its shape (Swing on a torus) gets it; -n defaults to its hosts",
    )
    .option("--placement <how>", "with --topology: ranks on hosts, block (default), round-robin or file:PATH")
    .addOption(jsonOption())
    .action(async (collective: string, o: ExplainFlags, cmd: Command) => {
      if (!o.algorithm && !o.algorithmFile) {
        throw new InvalidArgumentError(
          { op: "explain", arg: "--algorithm" },
          "is required (or --algorithm-file); cclab list names them",
        );
      }
      const algs = await selectAlgorithms({ collective, algorithm: o.algorithm, algorithmFile: o.algorithmFile });
      if (algs.length > 1) {
        throw new InvalidArgumentError(
          { op: "explain", arg: "--algorithm" },
          `${o.algorithmFile} has several ${collective} algorithms (${algs.map((a) => a.name).join(", ")}); pick one`,
        );
      }
      const [given] = algs;
      if (!given) return;
      // With --topology and no -n, the topology's hosts.
      const n =
        o.topology !== undefined && cmd.getOptionValueSource("nranks") !== "cli"
          ? topologyHosts(o.topology, "explain")
          : o.nranks;
      const [alg] = bindTopology([given], o, n, "explain") as [Algorithm];
      // The call as the algorithm's own (its domain, when bound, is only the topology's rank count).
      const call = explainCallFor(given, n, {
        count: o.count,
        root: o.root,
        inPlace: Boolean(o.inPlace),
        segment: o.segment,
      });
      if (call.root >= call.size) {
        throw new InvalidArgumentError({ op: "explain", arg: "--root" }, `${call.root} is not a rank of ${call.size}`);
      }
      if (o.json) printJson(explainJson(alg, call));
      else console.log(explain(alg, call));
    });
}
