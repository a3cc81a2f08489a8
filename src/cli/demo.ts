/**
 * `cclab demo`: seed 003's point-to-point lesson on 4 simulated ranks, printed per rank as the
 * torch tutorials do: a send/recv chain, the send-send deadlock caught and explained, and its
 * three fixes. Every case is its own spawn, so one case's failure cannot leak into the next.
 */

import type { Comm } from "../comm.js";
import { type HostBuffer, tensor, view, zeros } from "../core/buffer.js";
import { DeadlockError } from "../core/errors.js";
import { type SimOptions, spawn } from "../sim/index.js";

const WORLD = 4;

/** torch's print form: tensor([1., 2.]) for whole floats, tensor([0.5000]) otherwise. */
export function formatTensor(t: HostBuffer): string {
  const vs = t.values().map((v) => {
    const x = Number(v);
    return Number.isInteger(x) ? `${x}.` : x.toFixed(4);
  });
  return `tensor([${vs.join(", ")}])`;
}

const say = (c: Comm, line: string) => console.log(`rank ${c.rank} ${line}`);

/** Seed 003's chain, one rank longer: rank 0 -> 1 -> 2 -> 3, each adding its own rank. */
async function chain(c: Comm): Promise<void> {
  const t = c.rank === 0 ? tensor("float32", [1, 1]) : zeros("float32", 2);
  if (c.rank > 0) {
    await c.recv(view(t), c.rank - 1);
    say(c, `received ${formatTensor(t)} from rank ${c.rank - 1}`);
    c.reduceInto(view(t), view(tensor("float32", [c.rank, c.rank])), { name: "sum" });
  }
  if (c.rank < c.size - 1) {
    await c.send(view(t), c.rank + 1);
    say(c, `sent ${formatTensor(t)} to rank ${c.rank + 1}`);
  } else {
    say(c, `ends with ${formatTensor(t)}`);
  }
}

/** What ranks 0 and 1 exchange in the deadlock case and its fixes. */
const mine = (c: Comm) => tensor("float32", [10 * (c.rank + 1), 10 * (c.rank + 1)]);

/** Seed 003's wrong example: ranks 0 and 1 both send first, then receive. */
async function sendSend(c: Comm): Promise<string | undefined> {
  if (c.rank > 1) return undefined;
  const peer = 1 - c.rank;
  const r = zeros("float32", 2);
  try {
    await c.send(view(mine(c)), peer, { label: "exchange" });
    await c.recv(view(r), peer, { label: "exchange" });
    say(c, `sent ${formatTensor(mine(c))} to rank ${peer} and received ${formatTensor(r)} from rank ${peer}`);
    return undefined;
  } catch (e) {
    if (!(e instanceof DeadlockError)) throw e;
    say(c, `caught DeadlockError in send(to ${peer})`);
    return e.message;
  }
}

type Fix = (c: Comm, peer: number, r: HostBuffer) => Promise<void>;

const FIXES: [string, Fix][] = [
  [
    "rank 1 receives first",
    async (c, peer, r) => {
      if (c.rank === 0) {
        await c.send(view(mine(c)), peer);
        await c.recv(view(r), peer);
      } else {
        await c.recv(view(r), peer);
        await c.send(view(mine(c)), peer);
      }
    },
  ],
  [
    "send and recv posted in one group (batch_isend_irecv)",
    (c, peer, r) =>
      c.group([
        { kind: "send", peer, view: view(mine(c)) },
        { kind: "recv", peer, view: view(r) },
      ]),
  ],
  [
    "isend and irecv, then wait on both",
    async (c, peer, r) => {
      const s = c.isend(view(mine(c)), peer);
      const w = c.irecv(view(r), peer);
      await s.wait();
      await w.wait();
    },
  ],
];

function runFix(fix: Fix): (c: Comm) => Promise<void> {
  return async (c) => {
    if (c.rank > 1) return;
    const peer = 1 - c.rank;
    const r = zeros("float32", 2);
    await fix(c, peer, r);
    say(c, `sent ${formatTensor(mine(c))} to rank ${peer} and received ${formatTensor(r)} from rank ${peer}`);
  };
}

export async function demo(): Promise<void> {
  const nccl: SimOptions = { semantics: "nccl" };
  console.log(`== 1. send/recv chain on ${WORLD} simulated ranks: 0 -> 1 -> 2 -> 3, each rank adds its rank ==`);
  await spawn(WORLD, chain, nccl);

  console.log("\n== 2. ranks 0 and 1 both send first, then receive (semantics 'nccl') ==");
  const messages = await spawn(WORLD, sendSend, nccl);
  const message = messages.find((m) => m !== undefined);
  if (message) console.log(message.replace(/^/gm, "    "));
  console.log("  the same code under 'buffered' (sends never block, as gloo's often appear to):");
  await spawn(WORLD, sendSend, { semantics: "buffered" });

  console.log("\n== 3. three fixes, each under 'nccl' ==");
  for (const [i, [what, fix]] of FIXES.entries()) {
    console.log(`  fix ${String.fromCharCode(97 + i)}: ${what}`);
    await spawn(WORLD, runFix(fix), nccl);
  }
}
