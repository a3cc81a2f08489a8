/**
 * The MPI backend's plan runner (the PlanRunner of src/schedule/executor.ts, which the front API
 * hands each call directly): runs a whole compiled plan with what MPI needs and nothing else, so
 * `cclab bench` measures the algorithm and not cclab. It checks the caller's memory once per
 * buffer, gives each call its scratch (kept per dtype), and reuses one run per plan and comm
 * (plan-run.ts: the dataflow over the native progress call). A call is driven at once, inside
 * runPlan: one whose transfers all complete in that first turn returns the executor's SETTLED
 * (no Promise made, no callback chained); a longer one gets a Promise.
 */
import { checkHostView } from "../../checks.js";
import { type DataBuffer, type HostBuffer, isHostBuffer, type View, view } from "../../core/buffer.js";
import type { DType, TypedArray } from "../../core/dtype.js";
import { type Scheduling, scheduling } from "../../schedule/dataflow.js";
import type { Bound, PlanRunner, PlanRunOptions } from "../../schedule/executor.js";
import type { Plan } from "../../schedule/plan.js";
import { Run, type RunnerComm } from "./plan-run.js";
import { ranksOutnumberCores } from "./progress.js";

export type { RunnerComm } from "./plan-run.js";

/** What a plan needs at run time beyond itself, worked out once per plan. */
interface Prepared {
  readonly sched: Scheduling;
  /** Transfers in the plan: the most requests in flight at once. */
  readonly transfers: number;
}
const prepared = new WeakMap<Plan, Prepared>();

function prepare(plan: Plan): Prepared {
  let p = prepared.get(plan);
  if (!p) {
    const transfers = plan.ops.filter((op) => op.kind === "send" || op.kind === "recv").length;
    // One order per peer: MPI keeps no channels apart (the checker holds schedules to that).
    p = { sched: scheduling(plan, false), transfers };
    prepared.set(plan, p);
  }
  return p;
}

/**
 * The memories of sends that failed runs left to MPI (cancelling a send is not reliable): the
 * native progress call's posts do not keep their memory alive as isend's handles do, so these
 * are held here for the life of the process (a failed run is rare; each adds one entry).
 */
const stranded: TypedArray[] = [];

export class MpiPlanRunner implements PlanRunner {
  /** Whether this node runs more ranks than it has cores (then spinning would starve a peer). */
  readonly yieldCpu: boolean;
  /** MPI_ERR_TRUNCATE: a receive's message was longer than its size. */
  readonly truncate: number;
  /**
   * Runs not in use, per plan, reused by this comm's next call of that plan (a plan is shared by
   * every comm of its shape; a run belongs to one comm; calls on one comm may overlap).
   */
  private readonly spare = new WeakMap<Plan, Run[]>();
  /** Runs made so far: a repeated call of one shape makes none (test/fixtures/mpi/plan.ts counts). */
  runsMade = 0;

  constructor(readonly comm: RunnerComm) {
    this.yieldCpu = ranksOutnumberCores(comm.size);
    this.truncate = comm.proc.mpi.errorCodes().MPI_ERR_TRUNCATE ?? -1;
  }

  /**
   * Starts the run and drives it at once: where every transfer completes within that first turn
   * (a small call whose peer is there), the call is over before this returns and the answer is
   * the executor's SETTLED, with no promise made; otherwise a promise the run settles later.
   */
  runPlan(plan: Plan, bound: Bound, options: PlanRunOptions): Promise<void> {
    const { dtype } = plan.call;
    let input: View;
    let output: View;
    let run: Run | undefined;
    try {
      input = bound.input ?? this.empty(dtype);
      output = bound.output ?? this.empty(dtype);
      // The engine is handed these views' memory, as the per-operation path's send/recv checks;
      // a buffer's memory never changes (HostBuffer.data is readonly): the last three passed are not checked again.
      const c = this.checked;
      if (input.buffer !== c[0] && input.buffer !== c[1] && input.buffer !== c[2]) this.check(input, plan, options);
      if (output.buffer !== c[0] && output.buffer !== c[1] && output.buffer !== c[2]) this.check(output, plan, options);
      let spare = this.spare.get(plan);
      if (!spare) this.spare.set(plan, (spare = []));
      run = spare.pop();
      if (!run) {
        const { sched, transfers } = prepare(plan);
        run = new Run(this, plan, sched, transfers, spare);
        this.runsMade++;
      }
    } catch (e) {
      return Promise.reject(e);
    }
    return run.start(input, output, this.takeScratch(dtype, plan.scratch), options);
  }

  /**
   * Scratch per dtype, grown on demand and kept (allocating it per call left a message-sized dead
   * buffer behind every collective until the next GC); a call that finds it in use by another on
   * this comm gets its own.
   */
  private readonly scratch = new Map<DType, { buffer: HostBuffer; busy: boolean }>();
  private readonly empties = new Map<DType, View>();

  private empty(dtype: DType): View {
    let v = this.empties.get(dtype);
    if (!v) this.empties.set(dtype, (v = view(this.comm.alloc(dtype, 0), 0, 0)));
    return v;
  }

  /** `count` elements of scratch, marked busy until the run gives it back (giveScratch). */
  private takeScratch(dtype: DType, count: number): HostBuffer {
    if (count === 0) return this.empty(dtype).buffer as HostBuffer;
    const have = this.scratch.get(dtype);
    if (have?.busy) return this.comm.alloc(dtype, count) as HostBuffer;
    if (have && have.buffer.count >= count) {
      have.busy = true;
      return have.buffer;
    }
    const buffer = this.comm.alloc(dtype, count) as HostBuffer;
    this.scratch.set(dtype, { buffer, busy: true });
    return buffer;
  }

  strand(memory: TypedArray): void {
    stranded.push(memory);
  }

  giveScratch(buffer: HostBuffer): void {
    const have = this.scratch.get(buffer.dtype);
    if (have?.buffer === buffer) have.busy = false;
  }

  /** The buffers checkHandedView last passed, newest first. */
  private readonly checked: (DataBuffer | undefined)[] = [undefined, undefined, undefined];

  private check(v: View, plan: Plan, options: PlanRunOptions): void {
    checkHandedView(this.comm.rank, v, options.label ?? `${plan.alg.collective}/${plan.alg.name}`);
    const c = this.checked;
    c[2] = c[1];
    c[1] = c[0];
    c[0] = v.buffer;
  }
}

/** Host memory of an ordinary ArrayBuffer, or checkHostView's error naming why not. */
function checkHandedView(rank: number, v: View, label: string): void {
  const b = v.buffer;
  if (!isHostBuffer(b) || !(b.data.buffer instanceof ArrayBuffer)) {
    checkHostView(rank, v, label, "view", "mpi", { shared: false });
  }
}
