/**
 * Seed 000 §8.1 (Row alltoall, all_to_all_single): rank r's row d (= r*10 + d) goes to rank d,
 * so rank d ends with column d of the "matrix" of all inputs: 0, 10, 20, 30 on rank 0.
 */
import { allToAll, type Comm, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { fromFn, numpyStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const elementSize = 2;
  const shape = [size, elementSize];
  const send = fromFn("float32", shape, (dst) => rank * 10 + dst);
  print(`Rank ${rank} send_tensor (before alltoall):\n${numpyStr(send, shape)}`);
  const recv = zeros("float32", size * elementSize);
  await allToAll(comm, recv, send);
  print(`\nRank ${rank} recv_tensor (after alltoall):\n${numpyStr(recv, shape)}`);
}

runIfMain(import.meta.url, main);
