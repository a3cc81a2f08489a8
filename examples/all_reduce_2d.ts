/** Seed 000 §5 (all reduce, the 2-D variant): a [2, 5] tensor full of the rank, summed on every rank. */
import { allReduce, type Comm } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, numpyStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank } = comm;
  const shape = [2, 5];
  // A 2-D tensor is row-major memory: the all-reduce is over its 10 elements, shape is only for printing.
  const t = full("float32", shape, rank);
  print(`Rank ${rank} before all_reduce:\n${numpyStr(t, shape)}`);
  await allReduce(comm, t, { op: "sum" });
  print(`Rank ${rank} after all_reduce (sum):\n${numpyStr(t, shape)}`);
}

runIfMain(import.meta.url, main);
