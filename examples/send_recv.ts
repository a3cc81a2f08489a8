/**
 * Seed 003 (send and recv): a blocking chain. Rank 0 sends [100, 200] to rank 1; each middle rank
 * doubles what it receives and passes it on; the last rank prints what arrives ([400, 800] on 4
 * ranks; the seed's 3 ranks end at rank 2). Then seed 001 §2's p2p.py: rank 0 sends 1 to rank 1
 * and subtracts 1 from its own copy afterwards.
 */
import { type Comm, tensor, view, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { nums, setNums, torchStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const last = size - 1;
  if (rank === 0) {
    const t = tensor("float32", [100, 200]);
    print("\n=== initial state ===");
    print(`Rank 0 initial data: ${torchStr(t)}`);
    if (size > 1) {
      await comm.send(view(t), 1);
      print("Rank 0 sent the data to Rank 1");
    }
  } else {
    // recv needs a buffer of the right size allocated beforehand.
    const t = zeros("float32", 2);
    await comm.recv(view(t), rank - 1);
    print(`Rank ${rank} received: ${torchStr(t)}`);
    if (rank < last) {
      setNums(
        t,
        nums(t).map((x) => x * 2),
      );
      print(`Rank ${rank} data after processing: ${torchStr(t)}`);
      await comm.send(view(t), rank + 1);
      print(`Rank ${rank} sent the data to Rank ${rank + 1}`);
    } else {
      print("\n=== transfer complete ===");
    }
  }

  // Seed 001 §2 (p2p.py): synchronous send/recv between ranks 0 and 1.
  const p = zeros("float32", 1);
  if (rank === 0 && size > 1) {
    setNums(p, [1]);
    await comm.send(view(p), 1);
    setNums(p, [0]);
  } else if (rank === 1) {
    await comm.recv(view(p), 0);
  }
  print("Rank", rank, "has data", torchStr(p, []));
}

runIfMain(import.meta.url, main);
