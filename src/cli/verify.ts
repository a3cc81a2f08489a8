/** `cclab verify`: the command line of src/verify/run.ts (the static proof, property and differential tests). */
import { type Command, Option } from "commander";
import { InvalidArgumentError } from "../core/errors.js";
import type { Shape } from "../specs/types.js";
import { PROOF_HEAP_MIB } from "../verify/proofs.js";
import { type VerifyOptions, verify } from "../verify/run.js";
import { jsonOption, npOption, nranksOption, parsers, ranksOf, TOOL_MAX_RANKS } from "./options.js";
import { absolutePlacement, shapeOfFlags, topologyHosts } from "./topology-shape.js";

interface VerifyFlags {
  collective?: string;
  algorithm?: string;
  algorithmFile?: string;
  maxN: number;
  runs: number;
  seed?: number;
  backend: string;
  nranks?: number[];
  np?: number[];
  json?: boolean;
  size?: string;
  topology?: string;
  placement?: string;
  proofMemory?: number;
}

/** --topology's shape for the one rank count verify then runs at (-n's single value, else the topology's hosts). */
function verifyShape(f: VerifyFlags, ranks: readonly number[] | undefined): Shape | undefined {
  if (f.topology === undefined) {
    if (f.placement !== undefined)
      throw new InvalidArgumentError(
        { op: "verify", arg: "--placement" },
        "places ranks on a topology's hosts: give --topology too",
      );
    return undefined;
  }
  if (ranks && ranks.length > 1)
    throw new InvalidArgumentError(
      { op: "verify", arg: "-n" },
      `with --topology names one rank count, got ${ranks.join(",")}`,
    );
  return shapeOfFlags(f.topology, ranks?.[0] ?? topologyHosts(f.topology, "verify"), f.placement, "verify");
}

/** The most ranks -n takes: past TOOL_MAX_RANKS the proof is by rotation (src/schedule/rotation.ts). */
export const VERIFY_MAX_RANKS = 16_384;

export function registerVerify(program: Command): void {
  const p = parsers("verify");
  const parsed = p.list("-n", 1, VERIFY_MAX_RANKS);
  // Past VERIFY_MAX_RANKS the refusal says why, not only the bound.
  const list = (v: string): number[] => {
    const over = (v.match(/\d+/g) ?? []).map(Number).find((n) => n > VERIFY_MAX_RANKS);
    if (over !== undefined) {
      throw new InvalidArgumentError(
        { op: "verify", arg: "-n" },
        `takes at most ${VERIFY_MAX_RANKS} ranks, got ${over}: past ${TOOL_MAX_RANKS} the proof turns rank 0's plan onto every rank, generating every rank's steps to check the turn (minutes at ${VERIFY_MAX_RANKS}: docs/verify-scale.md)`,
      );
    }
    return parsed(v);
  };
  program
    .command("verify")
    .description(
      "prove every algorithm's schedule (static, symbolic) and property-test it against the oracle; on mpi/nccl, test it against the engine's own collectives",
    )
    .option("--collective <name>", "only this collective (torch's names too)")
    .option("--algorithm <name>", "only algorithms with this name")
    .option("--algorithm-file <file>", "load and verify your own algorithm(s) from a .ts (or MSCCL .xml) file")
    .option("--max-n <n>", "sim: the static proof covers n = 1..max", p.int("--max-n", 1, TOOL_MAX_RANKS), 16)
    .option("--runs <n>", "property-test cases per algorithm", p.int("--runs", 0), 25)
    .option("--seed <n>", "fast-check seed (printed; replays a failure)", p.int("--seed", -(2 ** 31), 2 ** 31))
    .addOption(new Option("--backend <name>", "where the ranks run").choices(["sim", "mpi", "nccl"]).default("sim"))
    .addOption(
      nranksOption(
        "ranks, e.g. 4, 2,3 or 2..5: sim, where the static proof (besides 1..--max-n) and the property tests run (default 1..17); mpi, nccl, the worlds to launch (default 2..5)",
        list,
      ),
    )
    .addOption(npOption(list).hideHelp())
    .addOption(new Option("--size <n>", "renamed --max-n").hideHelp())
    .option(
      "--topology <spec>",
      "the machine, as cclab model takes it (torus:4x4, mesh:2x4x2, ring:8, rail:2x4, ...): every algorithm is verified at its rank count (-n, else its hosts; on mpi and nccl the one world launched) and an algorithm that reads the shape (Swing on a torus or mesh) gets it",
    )
    .option("--placement <how>", "with --topology: ranks on hosts, block (default), round-robin or file:PATH")
    .option(
      "--proof-memory <MiB>",
      `sim: the heap one proof of 128 ranks or more may use, in its own thread (default ${PROOF_HEAP_MIB}); past it the proof stops with an error naming the call`,
      p.int("--proof-memory", 64, 1 << 20),
    )
    .addOption(jsonOption())
    .action(async (f: VerifyFlags) => {
      if (f.size !== undefined) {
        throw new InvalidArgumentError(
          { op: "verify", arg: "--size" },
          "is now --max-n (the largest n the static proof covers); -n gives the ranks",
        );
      }
      let ranks = ranksOf("verify", f);
      const shape = verifyShape(f, ranks);
      if (shape) ranks = [shape.hostOf.length];
      // mpi, nccl: each rank reads the machine itself (CCLAB_TOPOLOGY), a placement file from any directory.
      const machine =
        shape && f.backend !== "sim" && f.topology !== undefined
          ? {
              topology: f.topology,
              ...(f.placement !== undefined ? { placement: absolutePlacement(f.placement) } : {}),
            }
          : undefined;
      const o: VerifyOptions = {
        collective: f.collective,
        algorithm: f.algorithm,
        algorithmFile: f.algorithmFile,
        size: f.maxN,
        runs: f.runs,
        seed: f.seed,
        backend: f.backend,
        np: f.backend !== "sim" && ranks ? ranks.join(",") : undefined,
        sizes: f.backend === "sim" ? ranks : undefined,
        json: f.json,
        ...(f.proofMemory !== undefined ? { proofMemory: f.proofMemory } : {}),
        ...(shape && !machine ? { shape } : {}),
        ...(machine ? { machine } : {}),
      };
      process.exitCode = await verify(o);
    });
}
