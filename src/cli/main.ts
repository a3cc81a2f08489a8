/**
 * The cclab command line: one subcommand per tool, each in its own module under src/cli/.
 * buildProgram() is the whole definition (docs/cli.md is generated from it); every error, from
 * commander or from cclab, is printed one way: '<ErrorName>: <command>: <what>'.
 */
import { Command, CommanderError } from "commander";
import { packageVersion } from "../native/root.js";
import { registerBench } from "./bench.js";
import { registerCalibrate } from "./calibrate.js";
import { registerExplain } from "./explain.js";
import { registerList } from "./list.js";
import { registerModel } from "./model.js";
import { registerMsccl } from "./msccl.js";
import { jsonOption, nranksOption, parsers, printJson } from "./options.js";
import { registerPlayground } from "./playground.js";
import { registerRun } from "./run.js";
import { registerTrace } from "./trace.js";
import { registerVerify } from "./verify.js";

/** The subcommand being parsed, for error messages. */
let current = "cclab";

/** commander's 'error: unknown option ...' in cclab's style: 'InvalidArgumentError: cclab run: unknown option ...'. */
export function restyle(message: string, command: string): string {
  const text = message.replace(/^error: /, "").replace(/\n\(Did you mean (.*)\?\)/, "; did you mean $1?");
  return `InvalidArgumentError: ${command}: ${text.trimEnd()}\n`;
}

export function buildProgram(): Command {
  const program = new Command();
  const version = packageVersion();
  program
    .name("cclab")
    .description("Collective-communication algorithms hand-rolled on send/recv: verify, explain, run.")
    .version(version, "-V, --version", "print cclab's version")
    .showSuggestionAfterError(true)
    .configureOutput({ outputError: (str, write) => write(restyle(str, current)) })
    .exitOverride()
    .hook("preSubcommand", (_, sub) => {
      current = sub.name();
    });

  const p = parsers("demo");
  program
    .command("demo")
    .description(
      "the tutorial's send/recv chain, the send-send deadlock explained, and its three fixes (simulated ranks)",
    )
    .addOption(nranksOption("ranks (at least 2)", p.int("-n", 2, 64), 4))
    .addOption(jsonOption())
    .action(async (o: { nranks: number; json?: boolean }) => {
      const { demo } = await import("./demo.js");
      const sections = await demo(o.nranks, o.json === true);
      if (o.json) printJson({ nranks: o.nranks, sections });
    });

  registerList(program, version);
  registerVerify(program);
  registerExplain(program);
  registerTrace(program);
  registerModel(program);
  registerRun(program);
  registerBench(program);
  registerMsccl(program);
  registerPlayground(program);
  registerCalibrate(program);
  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  try {
    await buildProgram().parseAsync([...argv]);
    return Number(process.exitCode ?? 0);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Already printed (outputError); --help and --version end here too, with code 0.
      return e.exitCode;
    }
    // Errors from cclab carry their own context (rank, operation, argument); print them plainly.
    console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    return 1;
  }
}
