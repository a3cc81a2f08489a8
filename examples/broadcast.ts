/** Seed 000 §9 (broadcast): rank 0's [5, 2] tensor of ones overwrites every other rank's zeros. */
import { broadcast, type Comm } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, numpyStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank } = comm;
  const shape = [5, 2];
  const t = full("float32", shape, rank === 0 ? 1 : 0);
  if (rank === 0) print(`Rank ${rank} before broadcast:\n${numpyStr(t, shape)}`);
  else print(`Rank ${rank} before broadcast (initial zeros):\n${numpyStr(t, shape)}`);
  await broadcast(comm, t, { root: 0 });
  print(`Rank ${rank} after broadcast:\n${numpyStr(t, shape)}`);
}

runIfMain(import.meta.url, main);
