/**
 * Seed 000 §7.1 (Row reduce scatter with dist.reduce_scatter): each rank's [4, 5] data (row i =
 * rank*10 + i) is passed as a list of [1, 5] rows; rank r receives the sum of every rank's row r:
 * 60, 64, 68, 72 on 4 ranks. torch flattens the list into one buffer first; so does this example.
 */
import { type Comm, reduceScatter, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { cat, fromFn, numpyStr, sizeStr, slice } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const cols = 5;
  const data = fromFn("float32", [size, cols], (i) => rank * 10 + i);
  print(`Rank ${rank} original data (shape ${sizeStr([size, cols])}):\n${numpyStr(data, [size, cols])}`);
  const inputList = Array.from({ length: size }, (_, i) => slice(data, i * cols, cols));
  const output = zeros("float32", cols);
  await reduceScatter(comm, output, cat(inputList), { op: "sum" });
  print(`Rank ${rank} after reduce_scatter (sum), output shape ${sizeStr([1, cols])}:\n${numpyStr(output, [1, cols])}`);
}

runIfMain(import.meta.url, main);
