/**
 * torch.distributed's object collectives, over the front API's byte collectives: each object
 * serialised with v8.serialize, its length sent first.
 */
import { deserialize, serialize } from "node:v8";
import type { Comm } from "../comm.js";
import { type DataBuffer, type HostBuffer, isHostBuffer } from "../core/buffer.js";
import { InvalidArgumentError } from "../core/errors.js";
import { maxOf } from "../core/extent.js";
import { allGather, broadcast, type CollectiveOptions, checkMember, checkRoot, type RootOptions, site } from "./api.js";

function hostBytes(comm: Comm, name: string, b: DataBuffer): Uint8Array {
  if (!isHostBuffer(b)) {
    throw new InvalidArgumentError(
      site(comm, name),
      `object collectives need host memory; backend '${comm.backend}' gave ${b.location}`,
    );
  }
  return b.data as Uint8Array;
}

function serialized(comm: Comm, name: string, obj: unknown): Uint8Array {
  try {
    return serialize(obj);
  } catch (e) {
    throw new InvalidArgumentError(
      site(comm, name, "obj"),
      `cannot be serialised (v8.serialize): ${(e as Error).message}`,
    );
  }
}

/** torch.distributed.broadcast_object_list for one object: returns the root's object on every rank (v8.serialize). */
export async function broadcastObject<T>(
  comm: Comm,
  obj: T,
  options: CollectiveOptions & RootOptions = {},
): Promise<T> {
  const name = "broadcastObject";
  checkMember(comm, name);
  const root = checkRoot(comm, name, options.root);
  const bytes = comm.rank === root ? serialized(comm, name, obj) : undefined;
  const len = comm.alloc("int64", 1);
  if (bytes) (len as HostBuffer).data[0] = BigInt(bytes.length);
  await broadcast(comm, len, { ...options, root });
  const n = Number((len as HostBuffer).data[0]);
  const payload = comm.alloc("uint8", n);
  const host = hostBytes(comm, name, payload);
  if (bytes) host.set(bytes);
  await broadcast(comm, payload, { ...options, root });
  return deserialize(host) as T;
}

/** torch.distributed.all_gather_object: every rank's object, in rank order, on every rank. */
export async function allGatherObject<T>(comm: Comm, obj: T, options: CollectiveOptions = {}): Promise<T[]> {
  const name = "allGatherObject";
  checkMember(comm, name);
  const bytes = serialized(comm, name, obj);
  const mine = comm.alloc("int64", 1);
  const lens = comm.alloc("int64", comm.size);
  (mine as HostBuffer).data[0] = BigInt(bytes.length);
  await allGather(comm, lens, mine, options);
  const sizes = [...((lens as HostBuffer).data as BigInt64Array)].map(Number);
  const max = maxOf(sizes, 0);
  // Pad every object to the longest, as torch does, so one fixed-size all-gather carries them.
  const padded = comm.alloc("uint8", max);
  hostBytes(comm, name, padded).set(bytes);
  const all = comm.alloc("uint8", max * comm.size);
  await allGather(comm, all, padded, options);
  const host = hostBytes(comm, name, all);
  return sizes.map((s, r) => deserialize(host.subarray(r * max, r * max + s)) as T);
}
