/**
 * Seed 001 §4 (Broadcast): broadcast_object_list of ["foo", 12, {1: 2}] from rank 0, a tensor
 * broadcast, a broadcast inside the subgroup [0, 1] from its rank 1 (new_group), and the seed's
 * hand-rolled version where rank 0 sends to every other rank.
 */
import { broadcast, broadcastObject, type Comm, view, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, pyRepr, setNums, torchStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;

  // A Map keeps the seed's integer key: {1: 2}.
  const mine = rank === 0 ? ["foo", 12, new Map([[1, 2]])] : [null, null, null];
  const objects = await broadcastObject(comm, mine, { root: 0 });
  print("Rank", rank, "has data", pyRepr(objects));

  let t = zeros("float32", 2);
  if (rank === 0) setNums(t, [100, 100]);
  await broadcast(comm, t, { root: 0 });
  print("Rank", rank, "has data", torchStr(t));

  // Every rank creates the group; only members take part, the others keep their tensor.
  t = full("float32", [2], rank * 2);
  const group = await comm.split([0, 1]);
  if (group.rank >= 0) await broadcast(group, t, { root: 1 });
  print("Rank", rank, "has data", torchStr(t));

  // p2p_broadcast: rank 0 sends to every other rank in turn.
  const p = zeros("float32", 2);
  if (rank === 0) {
    setNums(p, [100, 100]);
    for (let r = 1; r < size; r++) await comm.send(view(p), r);
  } else {
    await comm.recv(view(p), 0);
  }
  print("Rank", rank, "p2p broadcast has data", torchStr(p));
}

runIfMain(import.meta.url, main);
