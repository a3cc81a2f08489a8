/**
 * `cclab bench --backend sim`: times come from the alpha-beta model over the algorithm's
 * schedule (src/model), not from a clock — the simulator's logical time says nothing about
 * speed. Each size is still executed once on the simulator, out of place and in place, and
 * checked against the oracle, so #wrong is real; sizes above simMaxBytes are modelled only
 * (#wrong N/A) to keep the run short.
 */
import { invoke } from "../collectives/dispatch.js";
import { isHostBuffer, type View, view } from "../core/buffer.js";
import type { TypedArray } from "../core/dtype.js";
import { opLabel } from "../core/op.js";
import { modelTime } from "../schedule/model.js";
import { spawn } from "../sim/index.js";
import { makeCall, rankCall, specOf } from "../specs/index.js";
import { allocateMemory, viewsFor } from "./buffers.js";
import { countWrong, expectedOutput, fillPeriodic, patterns } from "./data.js";
import { reduces } from "./measure.js";
import { algBandwidth, busBandwidth, shapeOf, sizeSweep } from "./metrics.js";
import { algorithmFor, type BenchProgress, benchAlgorithms } from "./plan.js";
import type { BenchOptions, BenchRow, Measurement } from "./types.js";

function host(v: View): TypedArray {
  if (!isHostBuffer(v.buffer)) throw new Error("the simulator works on host memory");
  return v.buffer.data.subarray(v.offset, v.offset + v.count) as TypedArray;
}

/** Every algorithm of --algorithm a,b,...: rows by size, then in the order given. */
export async function benchSim(o: BenchOptions, progress: BenchProgress): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const algorithm of benchAlgorithms(o)) rows.push(...(await benchSimOne({ ...o, algorithm }, progress)));
  return rows.sort((a, b) => a.size - b.size);
}

async function benchSimOne(o: BenchOptions, progress: BenchProgress): Promise<BenchRow[]> {
  const n = o.nranks;
  const shapes = sizeSweep(o.minBytes, o.maxBytes, o.stepFactor).map((b) => shapeOf(o.collective, n, b, o.dtype));
  const checked = shapes.map((s) => s.size <= o.simMaxBytes);
  const maxCount = Math.max(0, ...shapes.filter((_, i) => checked[i]).map((s) => s.count));
  const params = { alpha: o.alpha, beta: o.beta, gamma: o.gamma };
  progress.start(shapes.length);

  // wrong[i] = [out of place, in place], summed over ranks.
  const wrong = shapes.map(() => [0, 0]);
  const p = patterns(o.dtype, o.op, n);
  await spawn(n, async (comm) => {
    const mem = allocateMemory(comm, o.collective, o.dtype, maxCount, o.root);
    for (const [i, { count, size }] of shapes.entries()) {
      if (comm.rank === 0) progress.tick(`${size} B`);
      if (!checked[i]) continue;
      const alg = algorithmFor(o, n, count).name;
      for (const [v, inPlace] of [false, true].entries()) {
        const bufs = viewsFor(mem, comm, o.collective, count, o.root, inPlace);
        if (bufs.output && bufs.output.count > 0) fillPeriodic(host(bufs.output), p.sentinel);
        if (bufs.input && bufs.input.count > 0) fillPeriodic(host(bufs.input), p.inputs[comm.rank] as TypedArray);
        const call = makeCall({
          collective: o.collective,
          size: n,
          count,
          root: o.root,
          dtype: o.dtype,
          op: o.op,
          inPlace,
          segment: o.segment,
        });
        await invoke(comm, rankCall(call, comm.rank), alg, bufs);
        let w = 0;
        for (const e of expectedOutput(o.collective, p, comm.rank, n, count, o.root)) {
          if (bufs.output && e.length > 0)
            w += countWrong(host(view(bufs.output, e.offset, e.length)), e.table, e.start);
        }
        (wrong[i] as number[])[v] = ((wrong[i] as number[])[v] as number) + w;
      }
    }
  });

  const rows: BenchRow[] = [];
  for (const [i, { count, size }] of shapes.entries()) {
    const alg = algorithmFor(o, n, count);
    const modelled = (inPlace: boolean, w: number | null): Measurement => {
      const call = makeCall({
        collective: o.collective,
        size: n,
        count,
        root: o.root,
        inPlace,
        dtype: o.dtype,
        op: o.op,
        segment: o.segment,
      });
      const us = modelTime(alg, call, params).time;
      return { timeUs: us, algbw: algBandwidth(size, us), busbw: busBandwidth(o.collective, n, size, us), wrong: w };
    };
    const w = wrong[i] as number[];
    rows.push({
      size,
      count,
      type: o.dtype,
      redop: reduces(o.collective) ? opLabel(o.op) : "none",
      root: specOf(o.collective).rooted ? o.root : -1,
      algorithm: alg.name,
      outOfPlace: modelled(false, checked[i] ? (w[0] as number) : null),
      inPlace: modelled(true, checked[i] ? (w[1] as number) : null),
      builtin: null,
      ratio: null,
    });
  }
  progress.stop();
  return rows;
}
