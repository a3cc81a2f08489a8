/**
 * One job in its own Worker: started from the Worker's Blob URL, ended by terminating it (at
 * its time bound, on Stop, or when it answers), so nothing in the Worker has to cooperate with
 * a stop. Every message is checked against the protocol (check.ts) before the page reads it: a
 * program runs in that Worker and may post anything, so a message of another shape ends the job
 * and says why.
 */
import { checkFromWorker } from "./check.js";
import type { FromWorker, Job, Printed, Result } from "./protocol.js";

export type Ending = { readonly result: Result } | { readonly failed: string } | { readonly stopped: string };

export interface JobHooks {
  readonly print: (p: Printed) => void;
  readonly progress: (done: number, total: number, what: string) => void;
  /** Called once, when the job ends, however it does. */
  readonly end: (how: Ending) => void;
}

/** Worker messages refused since the page opened (the test reads it). */
let refused = 0;
export const refusedMessages = () => refused;

export class RunningJob {
  private worker: Worker | undefined;
  private readonly timer: number;
  readonly started = performance.now();

  constructor(
    url: string,
    job: Job,
    limitS: number,
    private readonly hooks: JobHooks,
  ) {
    const w = new Worker(url);
    this.worker = w;
    this.timer = window.setTimeout(
      () =>
        this.stop(
          `stopped: ${job.kind} of ${job.main} ran past its limit of ${limitS} s (an endless loop, or too much work: raise the limit)`,
        ),
      limitS * 1000,
    );
    w.onmessage = (ev: MessageEvent<unknown>) => {
      if (this.worker !== w) return;
      let m: FromWorker;
      try {
        m = checkFromWorker(ev.data);
      } catch (e) {
        refused++;
        this.stop(
          `the job was stopped: its Worker sent a message the page does not accept (${e instanceof Error ? e.message : String(e)}); a program that calls postMessage itself does this`,
        );
        return;
      }
      if (m.id !== job.id) return;
      if (m.kind === "print") for (const p of m.streams) hooks.print(p);
      else if (m.kind === "progress") hooks.progress(m.done, m.total, m.what);
      else this.end(m.kind === "failed" ? { failed: m.message } : { result: m.result });
    };
    w.onerror = (ev) => {
      if (this.worker === w) this.stop(`the worker failed: ${ev.message}`);
    };
    w.postMessage(job);
  }

  get running(): boolean {
    return this.worker !== undefined;
  }

  /** Ends the job now (if it still runs), saying why. */
  stop(why: string): void {
    this.end({ stopped: why });
  }

  private end(how: Ending): void {
    if (!this.worker) return;
    this.worker.terminate();
    this.worker = undefined;
    clearTimeout(this.timer);
    this.hooks.end(how);
  }
}
