/**
 * Seed 000 §2.2 (Column Gather): each rank's [5, 2] block (columns rank*10 + j) is gathered to
 * rank 0 and concatenated along dim 1 into [5, 8]. Gather delivers the blocks one after another
 * (row-major), so the root lays them side by side afterwards, as the seed's torch.cat(dim=1) does.
 */
import { type Comm, gather, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { catDim1, fromFn, numpyStr, sizeStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const rows = 5;
  const cols = 2;
  const local = fromFn("float32", [rows, cols], (_, j) => rank * 10 + j);
  print(`Rank ${rank} local tensor (shape ${sizeStr([rows, cols])}):\n${numpyStr(local, [rows, cols])}`);
  const stacked = rank === 0 ? zeros("float32", size * rows * cols) : undefined;
  await gather(comm, local, { root: 0, output: stacked });
  if (stacked) {
    const gathered = catDim1(stacked, size, rows, cols);
    const shape = [rows, size * cols];
    print(`\nRank 0 final gathered tensor (shape ${sizeStr(shape)}):\n${numpyStr(gathered, shape)}`);
  } else {
    print(`Rank ${rank} has sent its data, no local copy of gathered tensor.\n`);
  }
}

runIfMain(import.meta.url, main);
