/**
 * `cclab bench --backend sim`: times come from the alpha-beta model over the algorithm's
 * schedule (src/model), or with --topology from the network model on that machine
 * (src/model/network: the same flags and engine as `cclab model --topology`), not from a clock —
 * the simulator's logical time says nothing about speed. Each size is still executed once on the simulator, out of place and in place, and
 * checked against the oracle, so #wrong is real; sizes above simMaxBytes are modelled only
 * (#wrong N/A) to keep the run short.
 */
import { invoke } from "../collectives/dispatch.js";
import { isHostBuffer, type View, view } from "../core/buffer.js";
import type { TypedArray } from "../core/dtype.js";
import { opLabel } from "../core/op.js";
import { type Machine, machineFor, type NetworkRequest, timeOnMachine } from "../model/machine.js";
import { modelTime } from "../schedule/model.js";
import { withShape } from "../schedule/shape.js";
import { spawn } from "../sim/index.js";
import { rankCall, specOf } from "../specs/index.js";
import { shapeOfTopology } from "../tools/topology-shape.js";
import { allocateMemory, viewsFor } from "./buffers.js";
import { countWrong, expectedOutput, fillPeriodic, patterns } from "./data.js";
import { reduces } from "./measure.js";
import { algBandwidth, busBandwidth, shapeOf, sizeSweep } from "./metrics.js";
import { algorithmFor, type BenchProgress, benchAlgorithms, benchCall } from "./plan.js";
import type { BenchOptions, BenchRow, Measurement } from "./types.js";

function host(v: View): TypedArray {
  if (!isHostBuffer(v.buffer)) throw new Error("the simulator works on host memory");
  return v.buffer.data.subarray(v.offset, v.offset + v.count) as TypedArray;
}

/** Every algorithm of --algorithm a,b,...: rows by size, then in the order given. */
export async function benchSim(
  o: BenchOptions,
  progress: BenchProgress,
  onRow: (row: BenchRow) => void = () => {},
): Promise<BenchRow[]> {
  const n = o.nranks;
  const shapes = sizeSweep(o.minBytes, o.maxBytes, o.stepFactor).map((b) => shapeOf(o.collective, n, b, o.dtype));
  const algorithms = benchAlgorithms(o);
  // One machine for the run: the topology is built and the ranks placed once.
  const machine = o.network ? machineFor(o.network, n) : undefined;
  progress.start(shapes.length * algorithms.length);
  const rows: BenchRow[] = [];
  // One size at a time, so each row is printed as soon as it is done.
  for (const { count, size } of shapes) {
    for (const algorithm of algorithms) {
      progress.tick(`${size} B ${algorithm}`);
      const row = await benchSimRow({ ...o, algorithm }, count, size, machine);
      rows.push(row);
      onRow(row);
    }
  }
  progress.stop();
  return rows;
}

/** One size of one algorithm: executed and checked (up to simMaxBytes), timed by the model. */
async function benchSimRow(o: BenchOptions, count: number, size: number, machine?: Machine): Promise<BenchRow> {
  const n = o.nranks;
  const params = { alpha: o.alpha, beta: o.beta, gamma: o.gamma };
  const p = patterns(o.dtype, o.op, n);
  const checked = size <= o.simMaxBytes;
  // On a network the algorithm sees the machine (Swing on a torus runs its multi-dimensional form).
  const alg = machine
    ? withShape(algorithmFor(o, n, count), shapeOfTopology(machine.topology, machine.placement), {
        op: "bench",
        arg: "--topology",
      })
    : algorithmFor(o, n, count);
  // wrong = [out of place, in place], summed over ranks.
  const wrong = [0, 0];
  if (checked) {
    await spawn(n, async (comm) => {
      const mem = allocateMemory(comm, o.collective, o.dtype, count, o.root);
      for (const [v, inPlace] of [false, true].entries()) {
        const bufs = viewsFor(mem, comm, o.collective, count, o.root, inPlace);
        if (bufs.output && bufs.output.count > 0) fillPeriodic(host(bufs.output), p.sentinel);
        if (bufs.input && bufs.input.count > 0) fillPeriodic(host(bufs.input), p.inputs[comm.rank] as TypedArray);
        const call = benchCall(o, n, count, inPlace, alg);
        await invoke(comm, rankCall(call, comm.rank), alg, bufs);
        let w = 0;
        for (const e of expectedOutput(o.collective, p, comm.rank, n, count, o.root)) {
          if (bufs.output && e.length > 0)
            w += countWrong(host(view(bufs.output, e.offset, e.length)), e.table, e.start);
        }
        wrong[v] = (wrong[v] as number) + w;
      }
    });
  }
  const modelled = (inPlace: boolean, w: number | null): Measurement => {
    const call = benchCall(o, n, count, inPlace, alg);
    const us = machine ? timeOnMachine(alg, call, machine, o.gamma).time : modelTime(alg, call, params).time;
    return { timeUs: us, algbw: algBandwidth(size, us), busbw: busBandwidth(o.collective, n, size, us), wrong: w };
  };
  return {
    size,
    count,
    type: o.dtype,
    redop: reduces(o.collective) ? opLabel(o.op) : "none",
    root: specOf(o.collective).rooted ? o.root : -1,
    algorithm: alg.name,
    outOfPlace: modelled(false, checked ? (wrong[0] as number) : null),
    inPlace: modelled(true, checked ? (wrong[1] as number) : null),
    builtin: null,
    ratio: null,
  };
}

/** The machine a sim bench with --topology times on, for its header and --json. */
export function simNetwork(
  request: NetworkRequest,
  n: number,
): { topology: string; description: readonly string[]; engine: string } {
  const m = machineFor(request, n);
  return { topology: m.topology.name, description: m.description, engine: m.engine };
}
