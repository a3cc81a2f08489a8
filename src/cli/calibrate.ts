/**
 * `cclab calibrate [-o machine.json]`: this machine's alpha, and beta, gamma and the copy cost at
 * several buffer sizes, for the alpha-beta model, measured with MPI (src/model/calibrate.ts),
 * printed and written to a machine file that `cclab model --machine FILE` reads. Needs Open MPI
 * and mpicc; says how to get them otherwise.
 */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { parseBytes } from "../bench/metrics.js";
import { InvalidArgumentError } from "../core/errors.js";
import { CALIBRATE_SIZES, calibrate } from "../model/calibrate.js";
import { jsonOption, nranksOption, outputOption, parsers, printJson } from "./options.js";

const MAX_SIZES = 16;

/** '1K,64K,1M': the sizes to measure at, bytes, sorted and distinct. */
function sizesList(value: string): number[] {
  const out = value.split(",").map((part) => {
    try {
      return parseBytes(part);
    } catch (e) {
      throw new InvalidArgumentError({ op: "calibrate", arg: "--sizes" }, (e as Error).message);
    }
  });
  if (out.length > MAX_SIZES)
    throw new InvalidArgumentError(
      { op: "calibrate", arg: "--sizes" },
      `at most ${MAX_SIZES} sizes, got ${out.length}`,
    );
  return [...new Set(out)].sort((a, b) => a - b);
}

const sizeText = (b: number) => (b >= 1 << 20 ? `${b / (1 << 20)}M` : b >= 1 << 10 ? `${b / (1 << 10)}K` : `${b}`);

export function registerCalibrate(program: Command): void {
  const p = parsers("calibrate");
  program
    .command("calibrate")
    .description(
      "measure this machine's alpha, and beta, gamma and copy at several sizes, with MPI (ping-pong, Sendrecv, a float32 sum, memcpy) for cclab model --machine",
    )
    .addOption(
      nranksOption("ranks the floors are measured between (MPI's ping-pong and Sendrecv: 2)", p.int("-n", 2, 2), 2),
    )
    .option(
      "--bytes <size>",
      "the largest size measured, whose costs are the machine's scalar beta, gamma, copy: 1M, 32M",
      p.size("--bytes"),
      32 * 1024 * 1024,
    )
    .option(
      "--sizes <list>",
      `the smaller buffer sizes to measure at, up to --bytes (default ${CALIBRATE_SIZES.map(sizeText).join(",")})`,
      sizesList,
    )
    .option("--reps <n>", "repetitions; each figure is their median", p.int("--reps", 1, 10_000), 20)
    .option(
      "--overhead <us>",
      "cclab's own cost per message above MPI's, microseconds (default: the measured fast path's)",
      p.number("--overhead"),
    )
    .addOption(outputOption("the machine file to write (JSON)"))
    .addOption(jsonOption())
    .action(
      (o: { bytes: number; sizes?: number[]; reps: number; overhead?: number; output?: string; json?: boolean }) => {
        const m = calibrate({ bytes: o.bytes, sizes: o.sizes, reps: o.reps, overheadUs: o.overhead });
        if (o.output) writeFileSync(o.output, `${JSON.stringify(m, null, 2)}\n`);
        if (o.json) {
          printJson(m);
          return;
        }
        const f = m.measured.floors;
        console.log(
          `floors (C, 2 ranks, median of ${f.reps}): ping-pong ${f.pingPongUs.toFixed(2)} us, MPI_Sendrecv ${f.sendrecvGBps.toFixed(2)} GB/s, float32 sum ${f.sumFloat32GBps.toFixed(2)} GB/s at ${f.bytes} B; load ${m.measured.load.join(" ")} on ${m.measured.cores} cores`,
        );
        console.log(
          `alpha ${m.alpha.toFixed(3)} us (ping-pong + cclab's ${m.measured.overheadUs} us a message), beta ${m.beta.toExponential(4)} us/B, gamma ${m.gamma.toExponential(4)} us/B, copy ${m.copy.toExponential(4)} us/B`,
        );
        const gbps = (usPerByte: number) => (usPerByte > 0 ? (1 / usPerByte / 1e3).toFixed(2) : "inf");
        console.log("by buffer size (GB/s): size  Sendrecv beyond latency  float32 sum  memcpy");
        for (const q of m.bySize)
          console.log(
            `  ${sizeText(q.bytes).padStart(4)}  ${gbps(q.beta).padStart(6)}  ${gbps(q.gamma).padStart(6)}  ${gbps(q.copy).padStart(6)}`,
          );
        if (o.output)
          console.log(`${o.output}: written; cclab model allreduce --algorithm ring -n 4 --machine ${o.output}`);
      },
    );
}
