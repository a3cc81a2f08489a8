/** `cclab verify`: the command line of src/verify/run.ts (the static proof, property and differential tests). */
import type { Command } from "commander";
import { type VerifyOptions, verify } from "../verify/run.js";
import { intOption } from "./options.js";

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .description("prove every algorithm's schedule (static, symbolic) and property-test it against the oracle")
    .option("--collective <name>", "only this collective")
    .option("--algorithm <name>", "only algorithms with this name")
    .option("--algorithm-file <file>", "load and verify your own algorithm(s) from a .ts file")
    .option("--size <n>", "largest group size for the static proof", intOption("--size", 1, 1024), 16)
    .option("--runs <n>", "property-test cases per algorithm", intOption("--runs", 0), 25)
    .option("--seed <n>", "fast-check seed (printed; replays a failure)", intOption("--seed", -(2 ** 31), 2 ** 31))
    .option("--backend <name>", "sim, mpi or nccl", "sim")
    .option("-n, --np <list>", "mpi, nccl: world sizes to launch, e.g. 4 or 2,3 (default 2..5)")
    .action(async (o: VerifyOptions) => {
      process.exitCode = await verify(o);
    });
}
