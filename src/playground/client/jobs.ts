/**
 * One job in its own Worker, which the runner starts (host.ts, runner.ts): ended by terminating
 * it (at its time bound, on Stop, or when it answers), so nothing in the Worker has to cooperate
 * with a stop, and ended with a clear message where the runner is gone (the program exhausted
 * its memory, or crashed). Every message is checked against the protocol (check.ts) before the
 * page reads it: a program runs in that Worker and may post anything, so a message of another
 * shape ends the job and says why.
 */
import { checkFromWorker } from "./check.js";
import type { Runner } from "./host.js";
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
  private live = true;
  /** The time bound, set once the runner has the job (a runner window's loading is bounded by host.ts, not by your limit). */
  private timer: number | undefined;
  readonly started = performance.now();

  constructor(
    private readonly runner: Runner,
    job: Job,
    limitS: number,
    private readonly hooks: JobHooks,
  ) {
    runner.start(job, {
      started: () => {
        if (!this.live || this.timer !== undefined) return;
        this.timer = window.setTimeout(
          () =>
            this.stop(
              `stopped: ${job.kind} of ${job.main} ran past its limit of ${limitS} s (an endless loop, or too much work: raise the limit)`,
            ),
          limitS * 1000,
        );
      },
      message: (r) => {
        if (!this.live || r.id !== job.id) return;
        if (r.kind === "worker-error") {
          this.stop(`the worker failed: ${r.message}`);
          return;
        }
        let m: FromWorker;
        try {
          m = checkFromWorker(r.data);
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
        else this.end(m.kind === "failed" ? { failed: m.message } : { result: m.result }, true);
      },
      gone: (why, how) =>
        this.end(
          {
            failed:
              how === "silent"
                ? `the program ran out of memory or crashed (${why}); the page is fine and your program is kept: press Run to run it again`
                : how === "closed"
                  ? `stopped: ${why} (it runs your programs apart from the page); your program is kept: press Run to open another`
                  : `the program did not start: ${why}`,
          },
          false,
        ),
    });
  }

  get running(): boolean {
    return this.live;
  }

  /** Ends the job now (if it still runs), saying why. */
  stop(why: string): void {
    this.end({ stopped: why }, false);
  }

  /** `answered`: the Worker said its last word (its runner may take the next job). */
  private end(how: Ending, answered: boolean): void {
    if (!this.live) return;
    this.live = false;
    clearTimeout(this.timer);
    this.runner.finish(answered);
    this.hooks.end(how);
  }
}
