/**
 * Seed 000 §7.3 (Column reduce scatter): each rank's [5, 4] data has column j = rank*10 + j;
 * rank r receives the [5, 1] sum of every rank's column r. A column is strided in row-major
 * memory, so the columns are first made contiguous blocks (torch.split(dim=1) + contiguous).
 */
import { type Comm, reduceScatter, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { fromFn, numpyStr, sizeStr, splitDim1 } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const rows = 5;
  const data = fromFn("float32", [rows, size], (_, j) => rank * 10 + j);
  print(`Rank ${rank} original data (shape ${sizeStr([rows, size])}):\n${numpyStr(data, [rows, size])}`);
  const output = zeros("float32", rows);
  await reduceScatter(comm, output, splitDim1(data, rows, size, size), { op: "sum" });
  print(`Rank ${rank} after reduce_scatter (sum), output shape ${sizeStr([rows, 1])}:\n${numpyStr(output, [rows, 1])}`);
}

runIfMain(import.meta.url, main);
