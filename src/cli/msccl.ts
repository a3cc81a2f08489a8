/**
 * `cclab import msccl algo.xml` and `cclab export msccl --collective … --algorithm … -n N -o algo.xml`:
 * MSCCL's XML in and out (src/msccl, docs/msccl.md). Import reads the program, checks it against
 * the executor's rules, orders its threadblocks (deadlocks and races named by gpu, tb and step)
 * and proves it the collective it says it is; export writes a schedule as MSCCL IR and imports
 * its own output again, refusing to write a file that does not prove equal to the schedule.
 */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { AlgorithmFileError, InvalidArgumentError } from "../core/errors.js";
import { differentMessages } from "../msccl/compare.js";
import { exportMsccl, longestThreadblock, overLimits, toXml } from "../msccl/export.js";
import { type Imported, importMsccl } from "../msccl/import.js";
import { LIMITS, PROTOS, type Proto } from "../msccl/ir.js";
import { MSCCL_LIMITS, mscclLimits, readMscclFile } from "../msccl/parse.js";
import { checkAlgorithm } from "../schedule/check.js";
import type { Algorithm } from "../schedule/dsl.js";
import { explainCall } from "../schedule/explain.js";
import { makeCall } from "../specs/index.js";
import { selectAlgorithms } from "../verify/load.js";
import { checkCases } from "../verify/matrix.js";
import { exportTrace, TRACE_FORMATS, type TraceFormat } from "./export-trace.js";
import { jsonOption, nranksOption, outputOption, parsers, printJson, required, TOOL_MAX_RANKS } from "./options.js";
import { bindTopology } from "./topology-shape.js";

const format = (f: string, formats: readonly string[] = ["msccl"]) => {
  if (!formats.includes(f))
    throw new InvalidArgumentError(
      { op: "cclab", arg: "format" },
      formats.length === 1
        ? `unknown format '${f}'; cclab reads msccl (MSCCL XML)`
        : `unknown format '${f}'; cclab writes ${formats.join(", ")} (MSCCL XML, LogGOPSim's GOAL, Chakra execution traces)`,
    );
};

/** The checker over the imported program's whole domain; the first counterexample as an AlgorithmFileError. */
export function proveImported(imp: Imported, file: string): number {
  const cases = checkCases(imp.algorithm);
  for (const c of cases) {
    const r = checkAlgorithm(imp.algorithm, c);
    if (r.errors.length > 0) {
      throw new AlgorithmFileError(
        `${file}: the program is not ${imp.algorithm.collective} (checker's counterexample; ranks are GPUs, step labels name tb.step):\n  ${r.errors.join("\n  ")}`,
      );
    }
  }
  return cases.length;
}

export function registerMsccl(program: Command): void {
  const parse = parsers("import/export");
  program
    .command("import")
    .description("read an MSCCL XML program (msccl-tools, msccl-executor-nccl, RCCL), check it and prove it")
    .argument("<format>", "msccl")
    .argument("<file>", "the XML file")
    .addOption(
      nranksOption("expect a program for this many GPUs (refuse any other)", parse.int("-n", 1, TOOL_MAX_RANKS)),
    )
    .option(
      "--max-bytes <n>",
      `refuse a file larger than this (default ${MSCCL_LIMITS.bytes}, or CCLAB_MSCCL_MAX_BYTES)`,
      parse.int("--max-bytes", 1),
    )
    .option(
      "--max-chunks <n>",
      `refuse nchunksperloop or a GPU's i/o/s_chunks above this (default ${MSCCL_LIMITS.chunks}, or CCLAB_MSCCL_MAX_CHUNKS)`,
      parse.int("--max-chunks", 1),
    )
    .addOption(jsonOption())
    .action(
      (f: string, file: string, o: { nranks?: number; json?: boolean; maxBytes?: number; maxChunks?: number }) => {
        format(f);
        const limits = mscclLimits({ bytes: o.maxBytes, chunks: o.maxChunks });
        const imp = importMsccl(readMscclFile(file, limits), { file, limits });
        const p = imp.program;
        const a = imp.algorithm;
        if (o.nranks !== undefined && o.nranks !== p.ngpus) {
          throw new InvalidArgumentError(
            { op: "import msccl", arg: "-n" },
            `${file} is a program for ${p.ngpus} GPUs, not ${o.nranks}`,
          );
        }
        if (o.json) {
          const cases = proveImported(imp, file);
          printJson({
            file,
            collective: a.collective,
            name: p.name,
            nranks: p.ngpus,
            chunksPerLoop: p.nchunksperloop,
            threadblocks: imp.threadblocks,
            channels: p.nchannels,
            proto: p.proto,
            inPlace: p.inplace,
            outOfPlace: p.outofplace,
            rounds: imp.rounds,
            chunksSent: imp.chunksSent,
            notes: imp.notes,
            proved: cases,
          });
          return;
        }
        console.log(`${file}: ${a.collective} on ${p.ngpus} GPUs, '${p.name}'`);
        console.log(
          `  ${p.nchunksperloop} chunks per loop, ${imp.threadblocks} threadblocks on ${p.nchannels} channel(s), ${p.proto}, ${[p.inplace ? "in place" : "", p.outofplace ? "out of place" : ""].filter(Boolean).join(" and ")}${p.minBytes || p.maxBytes ? `, ${p.minBytes}..${p.maxBytes || "any"} bytes` : ""}`,
        );
        console.log(`  ${imp.rounds} rounds, ${imp.chunksSent} chunks sent by the busiest GPU`);
        for (const n of imp.notes) console.log(`  note: ${n}`);
        const cases = proveImported(imp, file);
        const unit = a.domain?.countMultiple ?? 1;
        console.log(
          `  proved: ${cases} calls (counts 0..${3 * unit} in units of ${unit}, in and out of place): it is ${a.collective}`,
        );
        console.log(`next: cclab explain ${a.collective} --algorithm-file ${file} -n ${p.ngpus} --count ${unit}`);
        console.log(`      cclab verify --algorithm-file ${file}   (also: trace, model, bench with --algorithm-file)`);
      },
    );

  program
    .command("export")
    .description(
      "write an algorithm's schedule for another tool: MSCCL XML (msccl-executor-nccl, RCCL), GOAL (LogGOPSim, ATLAHS) or Chakra traces (ASTRA-sim)",
    )
    .argument("<format>", `one of msccl, ${TRACE_FORMATS.join(", ")}`)
    .argument("[collective]", "the collective (or --collective)")
    .option("--collective <name>", "the collective (required)")
    .option("--algorithm <name>", "the algorithm (optional with --algorithm-file)")
    .option("--algorithm-file <file>", "your own algorithm file")
    .addOption(nranksOption("GPUs (required)", parse.int("-n", 2, TOOL_MAX_RANKS)))
    .option(
      "--count <n>",
      "elements the schedule is written for (default one element per chunk, as explain)",
      parse.int("--count", 1),
    )
    .option(
      "--segment <n>",
      "pipelining segment in elements (default the whole message: MSCCL pipelines each chunk itself)",
      parse.int("--segment", 1),
    )
    .option("--root <n>", "root rank (the file is for this root only)", parse.int("--root", 0), 0)
    .option("--in-place", "write the in-place program")
    .option("--channels <n>", "instances side by side, each on its own channels", parse.int("--channels", 1, 32), 1)
    .option("--proto <name>", "Simple, LL or LL128", "Simple")
    .option(
      "--bytes <size>",
      "goal, chakra: message size, nccl-tests' bytes (as bench): 8, 64K, 1M",
      parse.size("--bytes"),
    )
    .option(
      "--gamma <us-per-byte>",
      "goal, chakra: a reduction's cost, microseconds per byte (the model's gamma)",
      parse.number("--gamma"),
    )
    .option(
      "--max-steps <n>",
      `msccl: the executor's MSCCL_MAX_NUM_STEPS: steps a threadblock may have (msccl-executor-nccl ${LIMITS.steps}, RCCL and older executors ${LIMITS.stepsElsewhere})`,
      parse.int("--max-steps", 1),
    )
    .addOption(outputOption("msccl, goal: the file to write; chakra: the prefix of <prefix>.<rank>.et (required)"))
    .option(
      "--topology <spec>",
      "the machine, as cclab model takes it (torus:4x4, ...): an algorithm that reads its shape (Swing on a torus) is written for it",
    )
    .option("--placement <how>", "with --topology: ranks on hosts, block (default), round-robin or file:PATH")
    .addOption(jsonOption())
    .action(async (f: string, positional: string | undefined, o) => {
      format(f, ["msccl", ...TRACE_FORMATS]);
      if (positional !== undefined && o.collective !== undefined && positional !== o.collective) {
        throw new InvalidArgumentError(
          { op: `export ${f}`, arg: "--collective" },
          `two collectives given: '${positional}' and --collective ${o.collective}`,
        );
      }
      o.collective ??= positional;
      if (f !== "msccl") {
        for (const [flag, given] of [
          ["--count", o.count],
          ["--in-place", o.inPlace],
          ["--channels", o.channels !== 1 ? o.channels : undefined],
          ["--proto", o.proto !== "Simple" ? o.proto : undefined],
          ["--max-steps", o.maxSteps],
        ] as const) {
          if (given !== undefined)
            throw new InvalidArgumentError(
              { op: `export ${f}`, arg: flag },
              `applies to msccl only; ${f} takes --bytes`,
            );
        }
        required(`export ${f}`, { "--collective": o.collective, "-n": o.nranks, "-o": o.output });
        const algs = await selectAlgorithms({
          collective: o.collective,
          algorithm: o.algorithm,
          algorithmFile: o.algorithmFile,
        });
        if (algs.length > 1)
          throw new InvalidArgumentError(
            { op: `export ${f}`, arg: "--algorithm" },
            `several algorithms match (${algs.map((x) => x.name).join(", ")}); pick one`,
          );
        const given = algs[0];
        if (!given) return;
        const [alg] = bindTopology([given], o, o.nranks, `export ${f}`) as [Algorithm];
        exportTrace(f as TraceFormat, alg, {
          nranks: o.nranks,
          bytes: o.bytes ?? 1024 * 1024,
          root: o.root,
          segment: o.segment,
          gamma: o.gamma ?? 0,
          output: o.output,
          json: o.json,
        });
        return;
      }
      for (const [flag, given] of [
        ["--bytes", o.bytes],
        ["--gamma", o.gamma],
      ] as const) {
        if (given !== undefined)
          throw new InvalidArgumentError(
            { op: "export msccl", arg: flag },
            `applies to goal and chakra; msccl takes --count`,
          );
      }
      required("export msccl", { "--collective": o.collective, "-n": o.nranks, "-o": o.output });
      if (!PROTOS.includes(o.proto as Proto)) {
        throw new InvalidArgumentError(
          { op: "export msccl", arg: "--proto" },
          `expected ${PROTOS.join(", ")}, got '${o.proto}'`,
        );
      }
      const algs = await selectAlgorithms({
        collective: o.collective,
        algorithm: o.algorithm,
        algorithmFile: o.algorithmFile,
      });
      if (algs.length > 1)
        throw new Error(`several algorithms match (${algs.map((x) => x.name).join(", ")}); pick one with --algorithm`);
      const given = algs[0];
      if (!given) return;
      const base = explainCall(given, o.nranks);
      const [alg] = bindTopology([given], o, o.nranks, "export msccl") as [Algorithm];
      const count = o.count ?? base.count;
      const call = makeCall({
        ...base,
        count,
        root: o.root,
        inPlace: Boolean(o.inPlace),
        segment: o.segment ?? Math.max(1, count),
      });
      const program = exportMsccl(alg, call, { channels: o.channels, proto: o.proto as Proto });
      const maxSteps: number = o.maxSteps ?? LIMITS.steps;
      const over = overLimits(program, maxSteps);
      if (over.length > 0) {
        const longest = longestThreadblock(program);
        // More segments than one per chunk add steps; the algorithm and n set the rest.
        const fix =
          longest > maxSteps
            ? `for an executor built with a larger MSCCL_MAX_NUM_STEPS (RCCL's is ${LIMITS.stepsElsewhere}) pass --max-steps ${longest}; otherwise use fewer GPUs or an algorithm with fewer steps${call.segment < count ? ", or a larger --segment" : ""}`
            : "use fewer GPUs or another algorithm";
        throw new InvalidArgumentError(
          { op: "export msccl", arg: longest > maxSteps ? "--max-steps" : "-n" },
          `the program would break the executor's limits: ${over.slice(0, 3).join("; ")}${over.length > 3 ? ` (and ${over.length - 3} more)` : ""}; ${fix}`,
        );
      }
      const xml = toXml(program);
      // The file must pass the import's checks and prove equal to the schedule before it is written.
      // It is our own output, so the size caps for files from elsewhere are raised to fit it.
      const limits = mscclLimits();
      const imp = importMsccl(xml, {
        file: o.output,
        limits: { bytes: Math.max(limits.bytes, xml.length), chunks: Math.max(limits.chunks, program.nchunksperloop) },
      });
      const cases = proveImported(imp, o.output);
      const diff = o.channels === 1 ? differentMessages(alg, imp.algorithm, call) : undefined;
      if (diff)
        throw new AlgorithmFileError(
          `${o.output}: the exported program sends other messages than the schedule: ${diff}`,
        );
      writeFileSync(o.output, xml);
      const unit = imp.algorithm.domain?.countMultiple ?? 1;
      if (o.json) {
        printJson({
          output: o.output,
          collective: alg.collective,
          algorithm: alg.name,
          nranks: o.nranks,
          chunksPerLoop: program.nchunksperloop,
          threadblocks: imp.threadblocks,
          countMultiple: unit,
          proved: cases,
          sameMessages: o.channels === 1,
        });
        return;
      }
      console.log(
        `${o.output}: ${alg.collective}/${alg.name} on ${o.nranks} GPUs, ${program.nchunksperloop} chunks per loop, ${imp.threadblocks} threadblocks; runs for counts that are multiples of ${unit}`,
      );
      console.log(
        `  imported again and proved (${cases} calls)${o.channels === 1 ? "; sends the same messages as the schedule" : ""}`,
      );
    });
}
