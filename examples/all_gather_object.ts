/**
 * Seed 001 §6 (Gather): all_gather into a list of int64 tensors and into one tensor
 * (arange(2) + 1 + 2*rank on each rank), then all_gather_object of the seed's objects, one per rank.
 */
import { allGather, allGatherObject, type Comm, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { arange, pyRepr, slice, torchStr } from "./_tensor.js";

const GATHER_OBJECTS: unknown[] = ["foo", 12, new Map([[1, 2]]), "xiaodongguaAIGC"];

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const t = arange("int64", 2, 1 + 2 * rank);
  const all = zeros("int64", 2 * size);
  await allGather(comm, all, t);
  // all_gather's tensor_list is the same data cut into per-rank pieces.
  const list = Array.from({ length: size }, (_, r) => torchStr(slice(all, 2 * r, 2)));
  print("Rank", rank, "all_gather:", `[${list.join(", ")}]`);
  const into = zeros("int64", 2 * size);
  await allGather(comm, into, arange("int64", 2, 1 + 2 * rank));
  print("Rank", rank, "all_gather_into_tensor:", torchStr(into));

  const output = await allGatherObject(comm, GATHER_OBJECTS[rank % GATHER_OBJECTS.length]);
  print(`rank:${rank}`, pyRepr(output));
}

runIfMain(import.meta.url, main);
