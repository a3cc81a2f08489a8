/**
 * Seed 000 §3.2 (Column allgather): every rank gets every rank's [5, 2] block, concatenated along
 * dim 1 into [5, 8]: an all-gather of the contiguous blocks, then torch.cat(dim=1) locally.
 */
import { allGather, type Comm, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { catDim1, fromFn, numpyStr, sizeStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const rows = 5;
  const cols = 2;
  const local = fromFn("float32", [rows, cols], (_, j) => rank * 10 + j);
  print(`Rank ${rank} local tensor shape ${sizeStr([rows, cols])}:\n${numpyStr(local, [rows, cols])}`);
  const stacked = zeros("float32", size * rows * cols);
  await allGather(comm, stacked, local);
  const gathered = catDim1(stacked, size, rows, cols);
  const shape = [rows, size * cols];
  print(`Rank ${rank} after column-wise all_gather, shape ${sizeStr(shape)}:\n${numpyStr(gathered, shape)}`);
}

runIfMain(import.meta.url, main);
