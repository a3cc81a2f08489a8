/**
 * The rendezvous store of a job of processes: the TCP server (hosted by the launcher, or by rank 0
 * under torchrun-style variables), its client (one per rank), the wire format, and what the
 * runtime builds on them (the job token, a barrier). The KVStore interface and the in-process
 * MemoryStore live below the backends, in src/kvstore.ts.
 */
import { randomBytes } from "node:crypto";
import { type KVStore, ownKey } from "../../kvstore.js";

export { MemoryStore } from "../../kvstore.js";
export { StoreClient, type StoreClientOptions, type StoreRole } from "./client.js";
export { encodeFrame, MAGIC, OP, VERSION } from "./protocol.js";
export { StoreServer, type StoreServerOptions } from "./server.js";

/** A fresh job token (hex of 16 random bytes): the launcher hands it to its own ranks only. */
export function makeToken(): string {
  return randomBytes(16).toString("hex");
}

const generations = new WeakMap<KVStore, Map<string, number>>();

/**
 * A reusable barrier of `size` ranks on the store: each call is one generation (counted per store
 * handle and rank, so every rank must call it the same number of times). Each rank writes only its
 * own key, so it works on a store that binds connections to ranks.
 */
export async function storeBarrier(
  store: KVStore,
  rank: number,
  name: string,
  size: number,
  timeoutMs?: number,
): Promise<void> {
  let gens = generations.get(store);
  if (!gens) generations.set(store, (gens = new Map()));
  const counter = `${name}#${rank}`;
  const gen = gens.get(counter) ?? 0;
  gens.set(counter, gen + 1);
  const key = (r: number, g: number) => ownKey(r, `barrier/${name}/${g}`);
  await store.set(key(rank, gen), "1");
  await store.wait(
    Array.from({ length: size }, (_, r) => key(r, gen)),
    timeoutMs,
  );
  // Everyone has set generation gen, so everyone has passed gen - 1: nobody waits on that key now.
  if (gen > 0) await store.delete(key(rank, gen - 1));
}
