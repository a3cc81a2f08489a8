/** Seed 000 §6 (scatter): rank 0's [4, 5] tensor, row i full of i, is split so rank i receives row i. */
import { type Comm, scatter, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { fromFn, numpyStr, sizeStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const cols = 5;
  const recv = zeros("float32", cols);
  let data: ReturnType<typeof zeros> | undefined;
  if (rank === 0) {
    data = fromFn("float32", [size, cols], (i) => i);
    print(`Rank ${rank}: Original data to scatter:\n${numpyStr(data, [size, cols])}`);
    // torch's scatter_list is the rows; here they are the contiguous chunks of one buffer.
    const shapes = Array.from({ length: size }, () => sizeStr([cols]));
    print(`Rank ${rank}: Scatter list shapes: [${shapes.join(", ")}]`);
  }
  await scatter(comm, recv, { root: 0, input: data });
  print(`Rank ${rank} received tensor of shape ${sizeStr([cols])}:\n${numpyStr(recv)}`);
}

runIfMain(import.meta.url, main);
