/**
 * Seed 001 §8 (Ring-AllReduce), hand-rolled on blocking send/recv as the seed teaches it: the
 * buffer (2 * size ones, int64) is cut into `size` chunks; a reduce-scatter ring of size-1 steps
 * leaves rank r with the full sum of chunk (r+1) % size, and an all-gather ring of size-1 steps
 * passes the finished chunks round. Blocking sends wait for their receive (NCCL semantics), so
 * if every rank sent first the ring would deadlock: even ranks send then receive, odd ranks
 * receive then send, as the seed's text says (its code makes only rank 0 send first; either works).
 * cclab's own ring is algorithms/allreduce; this is the teaching version.
 */
import { barrier, type Comm, view, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { full, slice, torchStr } from "./_tensor.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const chunk = 2;
  const batch = full("int64", [chunk * size], 1);
  // micro_batch: views of batch, chunk i = elements [2i, 2i + 2).
  const micro = Array.from({ length: size }, (_, i) => view(batch, i * chunk, chunk));
  const tmp = zeros("int64", chunk);
  const next = (rank + 1) % size;
  const prev = (rank - 1 + size) % size;
  const sendFirst = rank % 2 === 0;

  const exchange = async (sendIdx: number) => {
    if (sendFirst) {
      await comm.send(micro[sendIdx]!, next);
      await comm.recv(view(tmp), prev);
    } else {
      await comm.recv(view(tmp), prev);
      await comm.send(micro[sendIdx]!, next);
    }
  };
  const show = () => `[${micro.map((v) => torchStr(slice(batch, v.offset, chunk))).join(", ")}]`;

  // Stage 1: reduce-scatter. Step i sends chunk (r - i) and adds the received one into chunk (r - i - 1).
  for (let i = 0; i < size - 1; i++) {
    const cur = (((rank - i) % size) + size) % size;
    const recvIdx = (((rank - i - 1) % size) + size) % size;
    await exchange(cur);
    comm.reduceInto(micro[recvIdx]!, view(tmp), { name: "sum" });
  }
  await barrier(comm);
  if (rank === 0) print("Stage 1 (ReduceScatter) complete");
  print("Rank", rank, "after ReduceScatter:", show());
  await barrier(comm);

  // Stage 2: all-gather. Step i sends the finished chunk (r + 1 + i) and stores chunk (r + i + 2).
  for (let i = 0; i < size - 1; i++) {
    const cur = (i + rank + 1) % size;
    const recvIdx = (cur + 1) % size;
    await exchange(cur);
    // A copy, not the seed's `micro_batch[next_idx] = tmp_tensor`, which aliases every slot to tmp.
    comm.copy(micro[recvIdx]!, view(tmp));
  }
  await barrier(comm);
  if (rank === 0) print("Stage 2 (AllGather) complete");
  print("Rank", rank, "after AllGather:", show());
  await barrier(comm);
}

runIfMain(import.meta.url, main);
