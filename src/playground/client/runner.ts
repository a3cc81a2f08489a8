/**
 * The playground's runner: the small document the page holds in an iframe (runner.html), which
 * starts each job's Worker from the Worker's source (assets/worker.js) and passes its messages
 * to the page, wrapped, so the page checks them as it checks any Worker message. Served from
 * another site than the page where the server allows it (`cclab playground --serve`: the page at
 * 127.0.0.1, this document at localhost, or the other way round), Chromium's site isolation
 * gives it a renderer process of its own: a program that exhausts its memory ends this process,
 * not the page's. It answers the page's pings at once from its own thread (the program runs in
 * the Worker), so a page that hears nothing knows its runner is gone (host.ts).
 */
import type { FromRunner, ToRunner } from "./protocol.js";

const g = globalThis as unknown as { CCLAB_WORKER_SOURCE: string };
const workerUrl = URL.createObjectURL(new Blob([g.CCLAB_WORKER_SOURCE], { type: "text/javascript" }));
let worker: Worker | undefined;

/** To the page (the parent): its origin once it has spoken ('*' for a page opened from a file, whose origin is opaque). */
let target = "*";
function post(m: FromRunner): void {
  window.parent.postMessage(m, target);
}

window.addEventListener("message", (ev: MessageEvent<ToRunner>) => {
  // Only the page that holds this runner speaks to it.
  if (ev.source !== window.parent || typeof ev.data !== "object" || ev.data === null) return;
  target = ev.origin === "null" ? "*" : ev.origin;
  const m = ev.data;
  if (m.kind === "ping") post({ kind: "pong", seq: m.seq });
  else if (m.kind === "stop") {
    worker?.terminate();
    worker = undefined;
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
});
post({ kind: "ready" });
