/**
 * `cclab demo [-n N]`: the tutorial's point-to-point lesson on 4 (or N) simulated ranks, printed per
 * rank as the torch tutorials do: a send/recv chain, the send-send deadlock caught and explained,
 * and its three fixes. Every case is its own spawn, so one case's failure cannot leak into the
 * next. With --json, the same lines come back grouped by section.
 */

import type { Comm } from "../comm.js";
import { type HostBuffer, tensor, view, zeros } from "../core/buffer.js";
import { DeadlockError } from "../core/errors.js";
import { type SimOptions, spawn } from "../sim/index.js";

/** Where the demo's lines go: the console, or (--json) the section being collected. */
let emit = (line: string) => console.log(line);

/** torch's print form: tensor([1., 2.]) for whole floats, tensor([0.5000]) otherwise. */
export function formatTensor(t: HostBuffer): string {
  const vs = t.values().map((v) => {
    const x = Number(v);
    return Number.isInteger(x) ? `${x}.` : x.toFixed(4);
  });
  return `tensor([${vs.join(", ")}])`;
}

const say = (c: Comm, line: string) => emit(`rank ${c.rank} ${line}`);

/** The tutorial's chain, one rank longer: rank 0 -> 1 -> 2 -> 3, each adding its own rank. */
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

/** The tutorial's wrong example: ranks 0 and 1 both send first, then receive. */
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

export interface DemoSection {
  readonly title: string;
  readonly lines: string[];
}

/** Runs the demo on `world` ranks (at least 2); prints it, or with `json` returns its sections. */
export async function demo(world = 4, json = false): Promise<DemoSection[]> {
  const sections: DemoSection[] = [];
  const section = (title: string) => {
    const s: DemoSection = { title, lines: [] };
    sections.push(s);
    emit = json ? (line) => s.lines.push(line) : (line) => console.log(line);
    if (!json) console.log(sections.length > 1 ? `\n${title}` : title);
  };
  const nccl: SimOptions = { semantics: "nccl" };
  const chainText = Array.from({ length: world }, (_, r) => r).join(" -> ");
  section(`== 1. send/recv chain on ${world} simulated ranks: ${chainText}, each rank adds its rank ==`);
  await spawn(world, chain, nccl);

  section("== 2. ranks 0 and 1 both send first, then receive (semantics 'nccl') ==");
  const messages = await spawn(world, sendSend, nccl);
  const message = messages.find((m) => m !== undefined);
  if (message) emit(message.replace(/^/gm, "    "));
  emit("  the same code under 'buffered' (sends never block, as gloo's often appear to):");
  await spawn(world, sendSend, { semantics: "buffered" });

  section("== 3. three fixes, each under 'nccl' ==");
  for (const [i, [what, fix]] of FIXES.entries()) {
    emit(`  fix ${String.fromCharCode(97 + i)}: ${what}`);
    await spawn(world, runFix(fix), nccl);
  }
  emit = (line) => console.log(line);
  return sections;
}
