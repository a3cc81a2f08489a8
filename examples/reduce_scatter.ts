/**
 * Seed 000 §7.2 (Row reduce scatter with reduce_scatter_tensor): one [4, 5] input per rank
 * (row i = rank*10 + i), cut along dim 0; rank r gets the sum of row r: 60, 64, 68, 72 on 4 ranks.
 */
import { type Comm, reduceScatter, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { fromFn, numpyStr, sizeStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const cols = 5;
  const input = fromFn("float32", [size, cols], (i) => rank * 10 + i);
  print(`Rank ${rank} input_tensor (shape ${sizeStr([size, cols])}):\n${numpyStr(input, [size, cols])}`);
  const output = zeros("float32", cols);
  await reduceScatter(comm, output, input, { op: "sum" });
  print(
    `Rank ${rank} after reduce_scatter_tensor (sum), output shape ${sizeStr([1, cols])}:\n${numpyStr(output, [1, cols])}`,
  );
}

runIfMain(import.meta.url, main);
