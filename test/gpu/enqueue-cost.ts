/**
 * Host time per enqueued step on the nccl backend (issue 23's "< 10 µs" target), a cclab program:
 *   node src/cli/bin.js run -n 2 --backend nccl test/gpu/enqueue-cost.ts [calls, default 500] [spin µs]
 * For each algorithm, after a warm-up, in-place all-reduces of 1 KiB timed as JavaScript issues them (a
 * call's promise resolves once its steps are enqueued on the stream, not when they ran), with the
 * NCCL groups they enqueue counted by wrapping the addon's groupEnd (one group a step):
 *   - paced: each call timed alone on an idle stream (synchronized between calls, untimed), so
 *     nothing the device still has to do can hold the host back: the host's own cost;
 *   - back to back: `calls` calls in a row, then the time until the device finished them, as
 *     before (NCCL may hold the host back once enough work is queued behind the transport).
 * Where the host time goes, per step: inside ncclGroupEnd (a non-blocking communicator starts a
 * thread there that enqueues the group), and how many ncclCommGetAsyncError polls the group took
 * until it said ncclSuccess (each a turn of the event loop, setImmediate, in NcclDevice.poll).
 * With a second argument S > 0, an experiment: a groupEnd that returns ncclInProgress is followed
 * by polling ncclCommGetAsyncError in a loop for up to S µs, and reported as ncclSuccess when it
 * got there (what a bounded spin in NcclDevice would save; the library itself does not spin).
 * Rank 0 prints; every rank's figure is its own.
 */
import { NcclComm } from "../../src/backends/nccl/index.js";
import { allReduce } from "../../src/collectives/api.js";
import type { Comm } from "../../src/comm.js";
import { view } from "../../src/core/buffer.js";
import { NCCL_RESULT } from "../../src/native/types.js";
import { findLayer } from "../../src/runtime/guard.js";

interface Native {
  groupEnd: () => number;
  commGetAsyncError: (comm: number) => number;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

export async function main(comm: Comm, args: string[]): Promise<void> {
  const nccl = findLayer(comm, (c): c is NcclComm => c instanceof NcclComm);
  if (!nccl) throw new Error(`test/gpu/enqueue-cost.ts needs the nccl backend, got '${comm.backend}'`);
  const calls = Number(args[0] ?? 500);
  const spinUs = Number(args[1] ?? 0);
  const native = nccl.device.native as unknown as Native;
  const groupEnd = native.groupEnd.bind(native);
  const getAsyncError = native.commGetAsyncError.bind(native);
  let groups = 0;
  let inProgress = 0;
  let spunOut = 0;
  let insideUs = 0;
  let spinTotalUs = 0;
  let polls = 0;
  native.groupEnd = () => {
    groups++;
    const t = performance.now();
    let rc = groupEnd();
    const t1 = performance.now();
    insideUs += (t1 - t) * 1000;
    if (rc === NCCL_RESULT.inProgress) {
      inProgress++;
      if (spinUs > 0) {
        const until = t1 + spinUs / 1000;
        let code: number = rc;
        do code = getAsyncError(nccl.handle);
        while (code === NCCL_RESULT.inProgress && performance.now() < until);
        spinTotalUs += (performance.now() - t1) * 1000;
        if (code === NCCL_RESULT.success) rc = code;
        else spunOut++;
      }
    }
    return rc;
  };
  let counting = true;
  native.commGetAsyncError = (c: number) => {
    if (counting) polls++;
    return getAsyncError(c);
  };
  const reset = () => {
    groups = inProgress = spunOut = insideUs = spinTotalUs = polls = 0;
  };
  const buf = comm.alloc("float32", 256);
  const mode = spinUs > 0 ? `, spin up to ${spinUs} µs after ncclInProgress` : "";
  const say = (s: string) => {
    if (comm.rank === 0) console.log(s);
  };
  say(
    `enqueue-cost: ${comm.size} ranks, CCLAB_NCCL_BLOCKING=${process.env.CCLAB_NCCL_BLOCKING ?? "(unset)"}${mode}, 1 KiB float32 max`,
  );
  for (const algorithm of ["recursive_doubling", "ring", "double_binary_tree", "segmented_ring"]) {
    for (let i = 0; i < 200; i++) await allReduce(comm, view(buf), { algorithm, op: "max" });
    await comm.synchronize();
    await nccl.builtin.barrier();

    // Paced: each call on an idle stream.
    reset();
    const paced: number[] = [];
    const paceCalls = Math.min(calls, 200);
    for (let i = 0; i < paceCalls; i++) {
      const t = performance.now();
      await allReduce(comm, view(buf), { algorithm, op: "max" });
      paced.push((performance.now() - t) * 1000);
      counting = false; // the wait for the device is not the call's
      await comm.synchronize();
      counting = true;
    }
    if (groups === 0)
      throw new Error(`enqueue-cost: ${algorithm} enqueued no NCCL group (is groupEnd still the addon's?)`);
    const steps = groups / paceCalls;
    const med = quantile(paced, 0.5);
    say(
      `enqueue ${algorithm} paced: ${paceCalls} calls, ${steps} steps a call: host ${(med / steps).toFixed(1)} µs a step ` +
        `(call median ${med.toFixed(1)}, p90 ${quantile(paced, 0.9).toFixed(1)}, max ${Math.max(...paced).toFixed(1)} µs); ` +
        `inside ncclGroupEnd ${(insideUs / groups).toFixed(1)} µs a step, ${inProgress} of ${groups} returned ncclInProgress` +
        (spinUs > 0
          ? `, spin ${(spinTotalUs / Math.max(1, inProgress)).toFixed(1)} µs each, ${spunOut} spun out`
          : "") +
        `, ${(polls / groups).toFixed(2)} ncclCommGetAsyncError polls a step`,
    );
    await nccl.builtin.barrier();

    // Back to back.
    reset();
    const each: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await allReduce(comm, view(buf), { algorithm, op: "max" });
      each.push((performance.now() - t) * 1000);
    }
    const hostUs = (performance.now() - t0) * 1000;
    await comm.synchronize();
    const wallUs = (performance.now() - t0) * 1000;
    await nccl.builtin.barrier();
    say(
      `enqueue ${algorithm} back to back: ${calls} calls, ${groups} steps: host ${(hostUs / groups).toFixed(2)} µs a step, ` +
        `${(hostUs / calls).toFixed(1)} µs a call to enqueue (median ${quantile(each, 0.5).toFixed(1)}, p90 ${quantile(each, 0.9).toFixed(1)}, ` +
        `max ${Math.max(...each).toFixed(1)}); inside ncclGroupEnd ${(insideUs / groups).toFixed(1)} µs a step; ` +
        `${(wallUs / calls).toFixed(1)} µs a call until done`,
    );
  }

  // NCCL's own ncclAllReduce on the same 1 KiB, in place as cclab's calls above, as the floor one
  // enqueued NCCL call costs the host (a2b7229 ran it out of place, into a second buffer).
  const native2 = native as unknown as { collective: (...a: unknown[]) => number };
  const collective = native2.collective.bind(native2);
  let insideColl = 0;
  native2.collective = (...a: unknown[]) => {
    const t = performance.now();
    const rc = collective(...a);
    insideColl += (performance.now() - t) * 1000;
    return rc;
  };
  const builtinCall = () => nccl.builtin.allreduce(null, view(buf), "max");
  for (let i = 0; i < 200; i++) await builtinCall();
  await comm.synchronize();
  await nccl.builtin.barrier();
  insideColl = 0;
  const pacedB: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await builtinCall();
    pacedB.push((performance.now() - t) * 1000);
    await comm.synchronize();
  }
  const pacedInside = insideColl / 200;
  await nccl.builtin.barrier();
  insideColl = 0;
  const eachB: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await builtinCall();
    eachB.push((performance.now() - t) * 1000);
  }
  await comm.synchronize();
  say(
    `enqueue builtin ncclAllReduce: paced call median ${quantile(pacedB, 0.5).toFixed(1)} µs (inside ncclAllReduce ${pacedInside.toFixed(1)}); ` +
      `back to back median ${quantile(eachB, 0.5).toFixed(1)}, p90 ${quantile(eachB, 0.9).toFixed(1)} µs (inside ${(insideColl / calls).toFixed(1)})`,
  );
  native2.collective = collective;
  native.groupEnd = groupEnd;
  native.commGetAsyncError = getAsyncError;
  console.log(`done ${comm.rank}/${comm.size}`);
}
