/** Seed 000 §3.1 (Row allgather): every rank gets all the [1, 5] rows, concatenated to [4, 5]. */
import { allGather, type Comm, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, sizeStr, torchStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const cols = 5;
  const shard = full("float32", [1, cols], rank);
  // all_gather_into_tensor: the list of rows and torch.cat(dim=0) are the same memory here.
  const gathered = zeros("float32", size * cols);
  await allGather(comm, gathered, shard);
  print(`rank ${rank} after cat: ${sizeStr([size, cols])}`);
  print(`Rank ${rank} gathered tensor:\n`, torchStr(gathered, [size, cols]));
}

runIfMain(import.meta.url, main);
