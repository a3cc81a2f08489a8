/** Seed 000 §2.1 (Row Gather): every rank's [1, 5] row of its rank lands on rank 0 as a [4, 5] tensor. */
import { type Comm, gather, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, sizeStr, torchStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const cols = 5;
  const t = full("float32", [1, cols], rank);
  // Only the root gets a receive buffer (torch's gather_list), rows in rank order.
  const gathered = rank === 0 ? zeros("float32", size * cols) : undefined;
  await gather(comm, t, { root: 0, output: gathered });
  if (gathered) {
    print(`Rank ${rank} gathered tensor shape: ${sizeStr([size, cols])}`);
    print("Gathered tensor:\n", torchStr(gathered, [size, cols]));
  } else {
    print(`Rank ${rank} has sent its data, no local copy of gathered tensor.`);
  }
}

runIfMain(import.meta.url, main);
