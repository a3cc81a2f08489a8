/**
 * A store hosted by a rank (torchrun-style variables, no cclab launcher), served from a worker
 * thread: the rank's main thread may block in its backend (MPI_Init, MPI_Finalize, MPI_Comm_split,
 * MPI's own collectives) while the other ranks still need the store, and a server in that event
 * loop would stop answering them. The worker keeps serving until every rank has left or died.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { InvalidArgumentError } from "../../core/errors.js";
import { deadKey, leftKey } from "../../kvstore.js";
import { StoreServer, type StoreServerOptions } from "./server.js";

type ToWorker = { close: "when-done"; timeoutMs: number } | { close: "now" };
type FromWorker = { port: number } | { error: string } | { closed: true };

export interface HostedStore {
  readonly port: number;
  /** Serves until every rank said goodbye or died (at most timeoutMs), then stops. */
  closeWhenDone(timeoutMs: number): Promise<void>;
}

// Loads this module in the worker: through tsx where cclab runs as TypeScript (a loader registered
// with register() in the main thread does not reach workers).
const BOOT = `
const { workerData } = require("node:worker_threads");
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.url);
})();
`;

/** Starts the server in a worker thread; resolves once it listens. */
export function hostStore(options: StoreServerOptions): Promise<HostedStore> {
  const tsx = import.meta.url.endsWith(".ts") ? import.meta.resolve("tsx/esm/api") : undefined;
  const worker = new Worker(BOOT, {
    eval: true,
    execArgv: [],
    workerData: { cclabStoreHost: options, url: import.meta.url, tsx },
  });
  const closed = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", (m: FromWorker) => {
      if ("error" in m) {
        reject(new InvalidArgumentError({ op: "init", arg: "MASTER_PORT" }, `could not host the store: ${m.error}`));
        return;
      }
      if (!("port" in m)) return;
      resolve({
        port: m.port,
        closeWhenDone: async (timeoutMs) => {
          worker.postMessage({ close: "when-done", timeoutMs } satisfies ToWorker);
          await closed;
        },
      });
    });
  });
}

async function serve(options: StoreServerOptions): Promise<void> {
  const port = parentPort!;
  let server: StoreServer;
  try {
    server = await StoreServer.start(options);
  } catch (e) {
    port.postMessage({ error: (e as Error).message } satisfies FromWorker);
    return;
  }
  port.postMessage({ port: server.port } satisfies FromWorker);
  port.on("message", async (m: ToWorker) => {
    if (m.close === "when-done") {
      const local = server.local;
      const gone = (r: number) => Promise.race([leftKey(r), deadKey(r)].map((k) => local.get(k, m.timeoutMs)));
      await Promise.all(Array.from({ length: options.world }, (_, r) => gone(r))).catch(() => {});
    }
    await server.close();
    port.postMessage({ closed: true } satisfies FromWorker);
    port.close();
  });
}

const mine = (workerData as { cclabStoreHost?: StoreServerOptions } | null)?.cclabStoreHost;
if (!isMainThread && mine && parentPort) void serve(mine);
