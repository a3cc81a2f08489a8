/**
 * Seed 003 (send and recv, the wrong example): ranks 0 and 1 both send first, then receive.
 * Under NCCL's semantics a send completes only when its receive is posted, so both wait forever;
 * the simulator (default semantics 'nccl') sees that no rank can progress and raises a
 * DeadlockError explaining the wait-for cycle. Then the three fixes, on the same ranks. `cclab
 * demo` tells the same story from src/cli/demo.ts; this is the version written as a cclab program.
 */
import { type Comm, DeadlockError, tensor, view, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { torchStr } from "./_tensor.js";

type Fix = (
  comm: Comm,
  peer: number,
  mine: ReturnType<typeof tensor>,
  theirs: ReturnType<typeof zeros>,
) => Promise<void>;

const FIXES: [string, Fix][] = [
  [
    "rank 1 receives first, then sends",
    async (comm, peer, mine, theirs) => {
      if (comm.rank === 0) {
        await comm.send(view(mine), peer);
        await comm.recv(view(theirs), peer);
      } else {
        await comm.recv(view(theirs), peer);
        await comm.send(view(mine), peer);
      }
    },
  ],
  [
    "send and recv posted together in one group (batch_isend_irecv)",
    (comm, peer, mine, theirs) =>
      comm.group([
        { kind: "send", peer, view: view(mine) },
        { kind: "recv", peer, view: view(theirs) },
      ]),
  ],
  [
    "isend and irecv first, then wait on both",
    async (comm, peer, mine, theirs) => {
      const s = comm.isend(view(mine), peer);
      const r = comm.irecv(view(theirs), peer);
      await s.wait();
      await r.wait();
    },
  ],
];

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank } = comm;
  // Only ranks 0 and 1 exchange; the others leave, so the simulator's verdict is about the pair.
  if (rank > 1) {
    print(`Rank ${rank} takes no part in the exchange`);
    return;
  }
  const peer = 1 - rank;
  const mine = tensor("float32", [10 * (rank + 1), 10 * (rank + 1)]);

  print(`Rank ${rank}: wrong order: send(to ${peer}) then recv(from ${peer})`);
  if (comm.backend === "sim") {
    const theirs = zeros("float32", 2);
    try {
      await comm.send(view(mine), peer, { label: "exchange" });
      await comm.recv(view(theirs), peer, { label: "exchange" });
      print(`Rank ${rank}: no deadlock under these semantics (sends were buffered); received ${torchStr(theirs)}`);
    } catch (e) {
      if (!(e instanceof DeadlockError)) throw e;
      print(`Rank ${rank}: caught DeadlockError in send(to ${peer})`);
      if (rank === 0) print(e.message.replace(/^/gm, "    "));
    }
  } else {
    // On a real backend the exchange hangs until the timeout (or passes if sends are eager).
    print(`Rank ${rank}: skipped on backend '${comm.backend}': it would hang until the timeout`);
  }

  for (const [i, [what, fix]] of FIXES.entries()) {
    const theirs = zeros("float32", 2);
    await fix(comm, peer, mine, theirs);
    print(
      `Rank ${rank}: fix ${String.fromCharCode(97 + i)} (${what}): sent ${torchStr(mine)}, received ${torchStr(theirs)}`,
    );
  }
}

runIfMain(import.meta.url, main);
