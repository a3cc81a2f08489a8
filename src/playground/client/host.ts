/**
 * The page's side of its runner (runner.ts): the iframe that starts each job's Worker, where it
 * is loaded from, and whether it still answers. A page served from a loopback name (`cclab
 * playground --serve`) loads it from the other loopback name, another site, which Chromium's
 * site isolation puts in a renderer process of its own: a program that exhausts its memory ends
 * that process, and the page lives on. While a job runs the page pings the runner, which answers
 * from its own thread whatever the program does; a ping left unanswered past SILENT_MS (or a
 * runner not loaded within LOAD_MS) means the runner is gone, and the job ends saying so. A
 * runner whose job did not end by itself (stopped, timed out, gone) is replaced by a fresh one,
 * so nothing of a stopped program keeps running. Timers only decide when to look: a ping sent
 * late (a tab in the background) is not held against the runner.
 */
import type { FromRunner, Job, ToRunner } from "./protocol.js";

/** How long a ping may stay unanswered before the runner is taken for gone. */
export const SILENT_MS = 5000;
/** How long a new runner may take to load its document and the Worker's source. */
export const LOAD_MS = 30_000;
/** How often a running job's runner is pinged. */
const PING_MS = 1000;

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];

export interface RunnerAddress {
  /** The runner's document. */
  readonly url: string;
  /** Its origin, as messages are addressed to it and checked from it ('*': a page opened from a file). */
  readonly origin: string;
  /** Whether it is another site than the page (a process of its own in Chromium). */
  readonly isolated: boolean;
}

/**
 * Where the runner is loaded from: for a page served over http from a loopback name, the same
 * server by another loopback name (127.0.0.1 <-> localhost: another site); else beside the page.
 */
export function runnerAddress(page: { protocol: string; hostname: string; port: string; href: string }): RunnerAddress {
  if (page.protocol === "http:" && LOOPBACK.includes(page.hostname)) {
    const origin = `http://${page.hostname === "127.0.0.1" ? "localhost" : "127.0.0.1"}${page.port ? `:${page.port}` : ""}`;
    const path = new URL("runner.html", page.href).pathname;
    return { url: `${origin}${path}`, origin, isolated: true };
  }
  const url = new URL("runner.html", page.href);
  // A file's origin is opaque: messages from it say 'null' (and URL.origin says 'file://' or 'null').
  const opaque = url.protocol === "file:" || url.origin === "null";
  return { url: url.href, origin: opaque ? "*" : url.origin, isolated: false };
}

/** What a job hears from its runner: its Worker's messages and failures, or that the runner is gone. */
export interface RunnerListener {
  readonly message: (m: Extract<FromRunner, { kind: "worker" | "worker-error" }>) => void;
  readonly gone: (why: string) => void;
}

export class Runner {
  private frame: HTMLIFrameElement;
  private ready = false;
  private queue: ToRunner[] = [];
  private listener: RunnerListener | undefined;
  private pinger: number | undefined;
  private seq = 0;
  /** When the oldest unanswered ping was sent (or the runner made, until it is ready). */
  private waitingSince: number | undefined;
  /** Runners replaced since the page opened (the test reads it). */
  replaced = 0;

  constructor(readonly where: RunnerAddress = runnerAddress(location)) {
    this.frame = this.make();
    window.addEventListener("message", (ev: MessageEvent<unknown>) => this.heard(ev));
  }

  private make(): HTMLIFrameElement {
    const f = document.createElement("iframe");
    f.id = "runner";
    f.title = "runs your program";
    f.setAttribute("aria-hidden", "true");
    f.tabIndex = -1;
    f.src = this.where.url;
    document.body.append(f);
    this.ready = false;
    this.waitingSince = performance.now();
    return f;
  }

  private heard(ev: MessageEvent<unknown>): void {
    if (ev.source !== this.frame.contentWindow) return;
    if (this.where.origin !== "*" && ev.origin !== this.where.origin) return;
    const m = ev.data as FromRunner;
    if (typeof m !== "object" || m === null) return;
    if (m.kind === "ready") {
      this.ready = true;
      this.waitingSince = undefined;
      for (const q of this.queue.splice(0)) this.post(q);
    } else if (m.kind === "pong") {
      if (m.seq === this.seq) this.waitingSince = undefined;
    } else if ((m.kind === "worker" || m.kind === "worker-error") && Number.isInteger(m.id)) {
      this.listener?.message(m);
    }
  }

  private post(m: ToRunner): void {
    if (!this.ready) this.queue.push(m);
    else this.frame.contentWindow?.postMessage(m, this.where.origin);
  }

  /** Starts `job`; what its Worker says, and a runner gone, go to `listener`. */
  start(job: Job, listener: RunnerListener): void {
    this.listener = listener;
    this.post({ kind: "start", job });
    this.pinger = window.setInterval(() => this.check(), PING_MS);
  }

  private check(): void {
    const now = performance.now();
    const limit = this.ready ? SILENT_MS : LOAD_MS;
    if (this.waitingSince !== undefined) {
      if (now - this.waitingSince <= limit) return;
      const l = this.listener;
      const s = Math.round(limit / 1000);
      // The job ends, which replaces this runner (finish(false)).
      if (!l) this.finish(false);
      l?.gone(
        this.ready
          ? `its runner${this.where.isolated ? ", a process of its own," : ""} stopped answering for ${s} s`
          : `its runner (${this.where.url}) did not load within ${s} s`,
      );
      return;
    }
    this.seq++;
    this.waitingSince = now;
    this.post({ kind: "ping", seq: this.seq });
  }

  /**
   * The job is over: its Worker is ended and the runner kept where the job ended by itself
   * (`answered`), else the runner is replaced by a fresh one (nothing of it runs on).
   */
  finish(answered: boolean): void {
    clearInterval(this.pinger);
    this.pinger = undefined;
    this.listener = undefined;
    if (answered && this.ready) {
      this.waitingSince = undefined;
      this.post({ kind: "stop" });
      return;
    }
    this.frame.remove();
    this.queue = [];
    this.replaced++;
    this.frame = this.make();
  }
}
