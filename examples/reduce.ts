/** Seed 000 §4 (Reduce): the sum of every rank's [1, 5] row of its rank lands on rank 0 (6 on 4 ranks). */
import { type Comm, reduce } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, listStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank } = comm;
  const shape = [1, 5];
  const t = full("float32", shape, rank);
  print(`Rank ${rank} before reduce: ${listStr(t, shape)}`);
  await reduce(comm, t, { root: 0, op: "sum" });
  if (rank === 0) print(`Rank ${rank} after reduce (sum): ${listStr(t, shape)}`);
  // torch leaves other ranks' tensors undefined; cclab never writes a non-root's input.
  else print(`Rank ${rank} after reduce (tensor content undefined): ${listStr(t, shape)}`);
}

runIfMain(import.meta.url, main);
