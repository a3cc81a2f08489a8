/**
 * Seed 003 (isend and irecv): the send/recv chain with non-blocking calls: each rank posts its
 * operation, says it is free to do other work, and waits on the handle before touching the buffer.
 * Then seed 001 §3's p2p_async.py: rank 0 posts ten isends (0..9) to rank 2, which sums them (45).
 */
import { type Comm, tensor, view, type Work, zeros } from "../src/index.js";
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
      print("Rank 0 preparing to send...");
      const req = comm.isend(view(t), 1);
      print("Rank 0 started the asynchronous send");
      // Until wait() returns, t must not be modified: the transfer may still be reading it.
      print("Rank 0 is working on something else...");
      await req.wait();
      print("Rank 0 confirmed the send is complete");
    }
  } else {
    const t = zeros("float32", 2);
    print(`Rank ${rank} preparing to receive...`);
    const req = comm.irecv(view(t), rank - 1);
    print(`Rank ${rank} started the asynchronous receive`);
    print(`Rank ${rank} is working on something else...`);
    await req.wait();
    if (rank < last) {
      print(`Rank ${rank} receive complete, data: ${torchStr(t)}`);
      setNums(
        t,
        nums(t).map((x) => x * 2),
      );
      print(`Rank ${rank} data after processing: ${torchStr(t)}`);
      print(`Rank ${rank} preparing to send to Rank ${rank + 1}...`);
      const send = comm.isend(view(t), rank + 1);
      print(`Rank ${rank} started the asynchronous send`);
      print(`Rank ${rank} is working on something else...`);
      await send.wait();
      print(`Rank ${rank} confirmed the send is complete`);
    } else {
      print(`Rank ${rank} receive complete, final data: ${torchStr(t)}`);
      print("\n=== transfer complete ===");
    }
  }

  // Seed 001 §3 (p2p_async.py): rank 0 -> rank 2, ten messages, all waited at the end.
  if (size < 3) return;
  let acc = zeros("float32", 1);
  if (rank === 0) {
    const reqs: Work[] = [];
    for (let i = 0; i < 10; i++) {
      // A fresh tensor per message: each send owns its buffer until waited.
      acc = tensor("float32", [i]);
      reqs.push(comm.isend(view(acc), 2));
    }
    for (const req of reqs) await req.wait();
  } else if (rank === 2) {
    for (let i = 0; i < 10; i++) {
      const tmp = zeros("float32", 1);
      await comm.irecv(view(tmp), 0).wait();
      setNums(acc, [nums(acc)[0]! + nums(tmp)[0]!]);
    }
  }
  print("Rank", rank, "has data", torchStr(acc, []));
}

runIfMain(import.meta.url, main);
