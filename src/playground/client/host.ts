/**
 * The page's side of its runner (runner.ts): the document that starts each job's Worker, where
 * it is loaded from, and whether it still answers. A page served from a loopback name (`cclab
 * playground --serve`) loads it in an iframe from the other loopback name, another site, which
 * Chromium's site isolation puts in a renderer process of its own. A page that cannot have that
 * (opened from a file, or served from one site) runs what it did not ship in a window of its
 * own instead: opened with noopener, a new browsing context group, which Chromium gives a
 * process of its own even under file://, and spoken to over a BroadcastChannel whose name is a
 * random token only the page and that window know. Either way a program that exhausts its
 * memory ends the runner's process, and the page lives on. While a job runs the page pings the
 * runner, which answers from its own thread whatever the program does; a ping left unanswered
 * past SILENT_MS (or a runner not loaded within LOAD_MS) means the runner is gone, and the job
 * ends saying so. A job's own time bound starts once its runner has it (jobs.ts): loading a
 * runner is bounded here, not out of your limit. A frame whose job did not end by itself
 * (stopped, timed out, gone) is replaced by a fresh one, so nothing of a stopped program keeps
 * running; a window that still answers ends the job's Worker and is kept (a new window takes
 * the focus, and the browser allows one only on a click), and one that is gone is forgotten:
 * the next job opens another. Timers only decide when to look: a ping sent late (a tab in the
 * background) is not held against the runner.
 */
import { channelName, type FromRunner, type Job, type ToRunner } from "./protocol.js";

/** How long a ping may stay unanswered before the runner is taken for gone. */
export const SILENT_MS = 5000;
/** How long a new runner may take to load its document and the Worker's source. */
export const LOAD_MS = 30_000;
/** How often a running job's runner is pinged. */
const PING_MS = 1000;
/** How often a runner window is told, between jobs, that its page is still there (runner.ts closes it after LONELY_MS of silence). */
const KEEPALIVE_MS = 10_000;

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];

export interface RunnerAddress {
  /** The runner's document. */
  readonly url: string;
  /** Its origin, as messages are addressed to it and checked from it ('*': a page opened from a file). */
  readonly origin: string;
  /** Whether it runs in a process of its own (another site's frame, or a window of its own). */
  readonly isolated: boolean;
  /** Whether it is a window of its own (else a frame of the page). */
  readonly window: boolean;
}

/**
 * Where the runner is loaded from: for a page served over http from a loopback name, the same
 * server by another loopback name (127.0.0.1 <-> localhost: another site); else beside the page.
 */
export function runnerAddress(page: { protocol: string; hostname: string; port: string; href: string }): RunnerAddress {
  if (page.protocol === "http:" && LOOPBACK.includes(page.hostname)) {
    const origin = `http://${page.hostname === "127.0.0.1" ? "localhost" : "127.0.0.1"}${page.port ? `:${page.port}` : ""}`;
    const path = new URL("runner.html", page.href).pathname;
    return { url: `${origin}${path}`, origin, isolated: true, window: false };
  }
  const url = new URL("runner.html", page.href);
  // A file's origin is opaque: messages from it say 'null' (and URL.origin says 'file://' or 'null').
  const opaque = url.protocol === "file:" || url.origin === "null";
  return { url: url.href, origin: opaque ? "*" : url.origin, isolated: false, window: false };
}

/** The runner as a window of its own, beside the page (for a page whose frame cannot have a process of its own). */
export function windowRunnerAddress(page: { href: string }): RunnerAddress {
  return { url: new URL("runner.html", page.href).href, origin: "*", isolated: true, window: true };
}

/** What a job hears from its runner: its Worker's messages and failures, or that the runner is gone. */
export interface RunnerListener {
  /** The runner has the job (at once, or once it has loaded): the job's time bound starts. */
  readonly started: () => void;
  readonly message: (m: Extract<FromRunner, { kind: "worker" | "worker-error" }>) => void;
  /**
   * `how`: it stopped answering ('silent': the program exhausted its memory, or crashed), it
   * never loaded ('unloaded': the program never ran), or its window was closed ('closed').
   */
  readonly gone: (why: string, how: "silent" | "unloaded" | "closed") => void;
}

/** How the page speaks to one runner, and stops listening to it. */
interface Link {
  readonly post: (m: ToRunner) => void;
  readonly close: () => void;
}

/** A runner in a hidden iframe of the page; its messages come as the frame's postMessage. */
function frameLink(where: RunnerAddress, heard: (data: unknown) => void): Link {
  const f = document.createElement("iframe");
  f.id = "runner";
  f.title = "runs your program";
  f.setAttribute("aria-hidden", "true");
  f.tabIndex = -1;
  f.src = where.url;
  const listen = (ev: MessageEvent<unknown>) => {
    if (ev.source !== f.contentWindow) return;
    if (where.origin !== "*" && ev.origin !== where.origin) return;
    heard(ev.data);
  };
  window.addEventListener("message", listen);
  document.body.append(f);
  return {
    post: (m) => f.contentWindow?.postMessage(m, where.origin),
    close: () => {
      window.removeEventListener("message", listen);
      f.remove();
    },
  };
}

/** A runner in a window of its own (noopener: a process of its own), spoken to over a channel named by a fresh random token. */
function windowLink(where: RunnerAddress, heard: (data: unknown) => void): Link {
  const token = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const channel = new BroadcastChannel(channelName(token));
  channel.onmessage = (ev: MessageEvent<unknown>) => heard(ev.data);
  // With noopener, open() returns null whether or not the window opened: a blocked one is
  // noticed as a runner that does not load (LOAD_MS).
  window.open(`${where.url}#channel=${token}`, "_blank", "noopener,popup,width=520,height=220");
  const keepalive = window.setInterval(() => channel.postMessage({ kind: "ping", seq: 0 }), KEEPALIVE_MS);
  const close = () => {
    clearInterval(keepalive);
    window.removeEventListener("pagehide", close);
    channel.postMessage({ kind: "close" });
    channel.close();
  };
  window.addEventListener("pagehide", close);
  return { post: (m) => channel.postMessage(m), close };
}

export class Runner {
  private link: Link | undefined;
  private ready = false;
  /** The runner stopped answering, or said it closes: it takes no more jobs. */
  private lost = false;
  private queue: ToRunner[] = [];
  private listener: RunnerListener | undefined;
  private pinger: number | undefined;
  /** The last job ping's number (keepalive pings are 0). */
  private seq = 0;
  /** When the oldest unanswered ping was sent (or the runner made, until it is ready). */
  private waitingSince: number | undefined;
  /** Runners replaced (or, for windows, given up) since the page opened (the test reads it). */
  replaced = 0;

  /** A frame is made at once (it loads while you read); a window only for a job (a click opens it). */
  constructor(readonly where: RunnerAddress = runnerAddress(location)) {
    if (!where.window) this.link = this.make();
  }

  private make(): Link {
    this.ready = false;
    this.lost = false;
    this.waitingSince = performance.now();
    return (this.where.window ? windowLink : frameLink)(this.where, (data) => this.heard(data));
  }

  private heard(data: unknown): void {
    const m = data as FromRunner;
    if (typeof m !== "object" || m === null) return;
    if (m.kind === "ready") {
      this.ready = true;
      this.waitingSince = undefined;
      for (const q of this.queue.splice(0)) this.post(q);
      this.listener?.started();
    } else if (m.kind === "pong") {
      if (m.seq === this.seq) this.waitingSince = undefined;
    } else if (m.kind === "bye") {
      // The window was closed (by you, or by itself after a long silence of the page).
      this.lost = true;
      const l = this.listener;
      if (!l) this.finish(false);
      l?.gone("its runner window was closed", "closed");
    } else if ((m.kind === "worker" || m.kind === "worker-error") && Number.isInteger(m.id)) {
      this.listener?.message(m);
    }
  }

  private post(m: ToRunner): void {
    if (!this.ready) this.queue.push(m);
    else this.link?.post(m);
  }

  /** Starts `job`; what its Worker says, and a runner gone, go to `listener`. */
  start(job: Job, listener: RunnerListener): void {
    if (!this.link) this.link = this.make();
    this.listener = listener;
    this.post({ kind: "start", job });
    if (this.ready) listener.started();
    this.pinger = window.setInterval(() => this.check(), PING_MS);
  }

  private check(): void {
    const now = performance.now();
    const limit = this.ready ? SILENT_MS : LOAD_MS;
    if (this.waitingSince !== undefined) {
      if (now - this.waitingSince <= limit) return;
      this.lost = true;
      const l = this.listener;
      const s = Math.round(limit / 1000);
      const own = this.where.window ? ", a window of its own," : this.where.isolated ? ", a process of its own," : "";
      // The job ends, which replaces this runner (finish(false)).
      if (!l) this.finish(false);
      l?.gone(
        this.ready
          ? `its runner${own} stopped answering for ${s} s`
          : this.where.window
            ? `its runner window (${this.where.url}) did not answer within ${s} s: the browser may have blocked it as a pop-up. Allow pop-ups for this page, or serve the site (cclab playground -o DIR --serve), where no window is needed`
            : `its runner (${this.where.url}) did not load within ${s} s`,
        this.ready ? "silent" : "unloaded",
      );
      return;
    }
    this.seq++;
    this.waitingSince = now;
    this.post({ kind: "ping", seq: this.seq });
  }

  /**
   * The job is over: its Worker is ended and the runner kept where the job ended by itself
   * (`answered`) or, for a window, where it is not lost (one still loading keeps loading for the
   * next job, without this one); else the runner is replaced by a fresh frame (nothing of it
   * runs on), or the window forgotten (the next job opens another).
   */
  finish(answered: boolean): void {
    clearInterval(this.pinger);
    this.pinger = undefined;
    this.listener = undefined;
    if (this.link && !this.lost && (this.where.window || (answered && this.ready))) {
      if (this.ready) {
        this.waitingSince = undefined;
        this.post({ kind: "stop" });
      } else this.queue = [];
      return;
    }
    this.link?.close();
    this.link = undefined;
    this.queue = [];
    this.replaced++;
    if (!this.where.window) this.link = this.make();
  }
}
