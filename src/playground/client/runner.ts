/**
 * The playground's runner: the small document (runner.html) that starts each job's Worker from
 * the Worker's source (assets/worker.js) and passes its messages to the page, wrapped, so the
 * page checks them as it checks any Worker message. It is either a frame of the page, served
 * from another site where the server allows it (`cclab playground --serve`: the page at
 * 127.0.0.1, this document at localhost, or the other way round), or, where the page cannot have
 * that (opened from a file), a window of its own, opened with noopener and named a channel in its
 * address (#channel=<32 hex digits>) that only the page knows. Either way Chromium gives it a
 * renderer process of its own: a program that exhausts its memory ends this process, not the
 * page's. It answers the page's pings at once from its own thread (the program runs in the
 * Worker), so a page that hears nothing knows its runner is gone (host.ts). A window closes when
 * its page leaves, or after LONELY_MS without a word from it (a page that crashed), and says so
 * when it closes.
 */
import { channelName, type FromRunner, type ToRunner } from "./protocol.js";

/** How long a runner window waits for a word from its page before it closes (the page sends one every 10 s). */
const LONELY_MS = 120_000;

const g = globalThis as unknown as { CCLAB_WORKER_SOURCE: string };
const workerUrl = URL.createObjectURL(new Blob([g.CCLAB_WORKER_SOURCE], { type: "text/javascript" }));
let worker: Worker | undefined;

const token = /^#channel=([0-9a-f]{32})$/.exec(location.hash)?.[1];
const channel = token === undefined ? undefined : new BroadcastChannel(channelName(token));

/** To the page (the parent): its origin once it has spoken ('*' for a page opened from a file, whose origin is opaque). */
let target = "*";
function post(m: FromRunner): void {
  if (channel) channel.postMessage(m);
  else window.parent.postMessage(m, target);
}

let lastHeard = performance.now();

function heard(m: ToRunner): void {
  lastHeard = performance.now();
  if (m.kind === "ping") post({ kind: "pong", seq: m.seq });
  else if (m.kind === "stop") {
    worker?.terminate();
    worker = undefined;
  } else if (m.kind === "close") {
    worker?.terminate();
    worker = undefined;
    window.close();
  } else if (m.kind === "start") {
    worker?.terminate();
    const id = m.job.id;
    const w = new Worker(workerUrl);
    worker = w;
    w.onmessage = (e: MessageEvent<unknown>) => {
      if (worker !== w) return;
      try {
        post({ kind: "worker", id, data: e.data });
      } catch (err) {
        // What the page cannot be sent (a value structured clone refuses) ends the job, saying why.
        post({ kind: "worker-error", id, message: `its message could not be passed on: ${String(err)}` });
      }
    };
    w.onerror = (e) => {
      e.preventDefault();
      if (worker === w) post({ kind: "worker-error", id, message: e.message });
    };
    w.postMessage(m.job);
  }
}

if (channel) {
  // Only the page that opened this window knows the channel's name.
  channel.onmessage = (ev: MessageEvent<unknown>) => {
    if (typeof ev.data === "object" && ev.data !== null) heard(ev.data as ToRunner);
  };
  window.addEventListener("pagehide", () => post({ kind: "bye" }));
  window.setInterval(() => {
    if (performance.now() - lastHeard > LONELY_MS) {
      worker?.terminate();
      worker = undefined;
      window.close();
    }
  }, 5000);
} else {
  window.addEventListener("message", (ev: MessageEvent<unknown>) => {
    // Only the page that holds this runner speaks to it.
    if (ev.source !== window.parent || typeof ev.data !== "object" || ev.data === null) return;
    target = ev.origin === "null" ? "*" : ev.origin;
    heard(ev.data as ToRunner);
  });
}
post({ kind: "ready" });
