/**
 * docs/cli.md, generated from the commander definitions (buildProgram) so the reference cannot
 * drift from the parser: every subcommand's usage, description and options as `--help` prints
 * them (at a fixed width), and the shape of each subcommand's --json output.
 * `npx tsx src/cli/reference.ts` rewrites it; test/cli.test.ts holds it equal.
 */
import type { Command } from "commander";
import { buildProgram } from "./main.js";

/** What --json prints on stdout, per subcommand (one JSON document, at the end). */
const JSON_SHAPES: Record<string, string> = {
  demo: "{ nranks, sections }",
  list: "{ version, native: { loaded, path?, engines?, reason? }, collectives: [{ name, torch, api, aliases, algorithms: [{ name, summary }] }], backends: [{ name, what, available, reason?, hint? }] }",
  verify: "{ tool, backend, seed, runs, ok, seconds, results }",
  explain: "{ collective, algorithm, call, errors, steps, cost }",
  trace: "{ collective, algorithm, backend, call, unit, events }",
  model:
    "{ collective, algorithm, nranks, bytes, count, dtype, segment, params, modelUs, formulaUs, ... } (one algorithm at one size; sweeps give their rows); with --topology { collective, algorithm, nranks, bytes, size, count, topology, engine (exact or phases), approximate, symmetry?, note, timeUs, algbw, busbw, criticalRank, linksUsed, bytesByClass, links (top 100), ... }, sweeps { over, algorithms, rows: [{ nranks, size, results }], crossovers }",
  run: "{ exitCode, seconds, failure?, exits } (--json before the program: what follows the program is its own arguments)",
  bench:
    "{ tool, collective, algorithm, backend, nranks, dtype, op, root, iters, warmupIters, timing, average, builtinName, model, simMaxBytes, rows, outOfBounds, builtinWrong, avgBusBw, memory, floors } (src/bench/types.ts BenchResult)",
  import:
    "{ file, collective, name, nranks, chunksPerLoop, threadblocks, channels, proto, inPlace, outOfPlace, rounds, chunksSent, notes, proved }",
  export: "{ output, collective, algorithm, nranks, chunksPerLoop, threadblocks, countMultiple, proved, sameMessages }",
  playground:
    "{ dir, files: [{ path, bytes, gzipBytes }], bytes, gzipBytes } (the site written; --serve then serves it)",
};

function commands(c: Command): Command[] {
  return c.commands.flatMap((s) => [s, ...commands(s)]);
}

export function cliReference(): string {
  const program = buildProgram();
  const help = (c: Command) => {
    c.configureHelp({ helpWidth: 100 });
    return c.helpInformation().trimEnd();
  };
  const out = [
    "# cclab command line reference",
    "",
    "> Reference, for everyone: every cclab command and option, as `--help` prints it, and the shape of each command's `--json`.",
    "",
    "Generated from the commander definitions by `npx tsx src/cli/reference.ts`; do not edit by hand",
    "(test/cli.test.ts fails when this file and the parser differ).",
    "",
    "Every subcommand takes `-n, --nranks` for the number of ranks (`--np` where MPI users reach for",
    "it) and `--json` (the result as one JSON document on stdout; progress and notes go to stderr).",
    "`-o, --output` is always a file to write. Errors print as `<ErrorName>: <command>: <what>`.",
    "",
    "```text",
    help(program),
    "```",
  ];
  for (const c of commands(program)) {
    const name = c.name();
    out.push("", `## cclab ${name}`, "", "```text", help(c), "```");
    const shape = JSON_SHAPES[name];
    if (shape) out.push("", `--json: \`${shape}\``);
  }
  return `${out.join("\n")}\n`;
}

if (process.argv[1]?.endsWith("cli/reference.ts")) {
  const { writeFileSync } = await import("node:fs");
  const file = new URL("../../docs/cli.md", import.meta.url);
  writeFileSync(file, cliReference());
  console.log(`wrote ${file.pathname}`);
}
