/** The cclab command line: one subcommand per tool, each in its own module under src/cli/. */
import { Command } from "commander";
import { registerBench } from "./bench.js";
import { registerExplain } from "./explain.js";
import { registerModel } from "./model.js";
import { registerMsccl } from "./msccl.js";
import { registerRun } from "./run.js";
import { registerTrace } from "./trace.js";
import { registerVerify } from "./verify.js";

const program = new Command();
program
  .name("cclab")
  .description("Collective-communication algorithms hand-rolled on send/recv: verify, explain, run.");

program
  .command("demo")
  .description(
    "the seed 003 send/recv chain, the send-send deadlock explained, and its three fixes (4 simulated ranks)",
  )
  .action(async () => {
    const { demo } = await import("./demo.js");
    await demo();
  });

registerVerify(program);
registerExplain(program);
registerTrace(program);
registerModel(program);
registerRun(program);
registerBench(program);
registerMsccl(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  // Errors from cclab carry their own context (rank, operation, argument); print them plainly.
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
}
