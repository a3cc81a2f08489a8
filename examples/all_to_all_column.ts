/**
 * Seed 000 §8.2 (Column alltoall): rank r's [5, 4] tensor has column c = r*10 + c; column c goes
 * to rank c, and each rank concatenates what it receives along dim 1. The columns travel as
 * contiguous [5, 1] blocks, as the seed's .contiguous() list does.
 */
import { allToAll, type Comm, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { catDim1, fromFn, numpyStr, sizeStr, splitDim1 } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const rows = 5;
  const shape = [rows, size];
  const local = fromFn("float32", shape, (_, c) => rank * 10 + c);
  print(`Rank ${rank} local tensor (shape ${sizeStr(shape)}):\n${numpyStr(local, shape)}`);
  const output = zeros("float32", rows * size);
  await allToAll(comm, output, splitDim1(local, rows, size, size));
  const result = catDim1(output, size, rows, 1);
  print(`Rank ${rank} after column-wise all_to_all (shape ${sizeStr(shape)}):\n${numpyStr(result, shape)}`);
}

runIfMain(import.meta.url, main);
