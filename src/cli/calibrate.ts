/**
 * `cclab calibrate [-o machine.json]`: this machine's alpha, beta and gamma for the alpha-beta
 * model, measured with MPI (src/model/calibrate.ts), printed and written to a machine file that
 * `cclab model --machine FILE` reads. Needs Open MPI and mpicc; says how to get them otherwise.
 */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { calibrate } from "../model/calibrate.js";
import { jsonOption, nranksOption, outputOption, parsers, printJson } from "./options.js";

export function registerCalibrate(program: Command): void {
  const p = parsers("calibrate");
  program
    .command("calibrate")
    .description(
      "measure this machine's alpha, beta and gamma with MPI (ping-pong, Sendrecv, a float32 sum) for cclab model --machine",
    )
    .addOption(
      nranksOption("ranks the floors are measured between (MPI's ping-pong and Sendrecv: 2)", p.int("-n", 2, 2), 2),
    )
    .option("--bytes <size>", "size of the bandwidth measurements: 1M, 32M", p.size("--bytes"), 32 * 1024 * 1024)
    .option("--reps <n>", "repetitions; each figure is their median", p.int("--reps", 1, 10_000), 20)
    .option(
      "--overhead <us>",
      "cclab's own cost per message above MPI's, microseconds (default: the measured fast path's)",
      p.number("--overhead"),
    )
    .addOption(outputOption("the machine file to write (JSON)"))
    .addOption(jsonOption())
    .action((o: { bytes: number; reps: number; overhead?: number; output?: string; json?: boolean }) => {
      const m = calibrate({ bytes: o.bytes, reps: o.reps, overheadUs: o.overhead });
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
        `alpha ${m.alpha.toFixed(3)} us (ping-pong + cclab's ${m.measured.overheadUs} us a message), beta ${m.beta.toExponential(4)} us/B, gamma ${m.gamma.toExponential(4)} us/B`,
      );
      if (o.output)
        console.log(`${o.output}: written; cclab model allreduce --algorithm ring -n 4 --machine ${o.output}`);
    });
}
