/** Seed 000 §5 (all reduce, 1-D): every rank's [1, 5] row of its rank, summed on every rank (6 on 4 ranks). */
import { allReduce, type Comm } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, listStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank } = comm;
  const shape = [1, 5];
  const t = full("float32", shape, rank);
  print(`Rank ${rank} before all_reduce: ${listStr(t, shape)}`);
  await allReduce(comm, t, { op: "sum" });
  print(`Rank ${rank} after all_reduce (sum): ${listStr(t, shape)}`);
}

runIfMain(import.meta.url, main);
