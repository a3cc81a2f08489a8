/**
 * Point-to-point and local-operation semantics of the nccl backend, as cases every rank runs in
 * order. The same cases run on the fake engine in the normal suite (test/nccl.test.ts) and on
 * real GPUs under cclab run (test/gpu/p2p.ts, from test/gpu/nccl.gpu.ts).
 */
import { NcclComm, readDevice, toDevice, writeDevice } from "../../src/backends/nccl/index.js";
import type { Comm } from "../../src/comm.js";
import { tensor, view, zeros } from "../../src/core/buffer.js";
import { DTYPES, dtypeInfo, fromValues, toValues } from "../../src/core/dtype.js";
import { AbortError, InvalidArgumentError, TimeoutError } from "../../src/core/errors.js";
import { reduceArrays, scaleArrays } from "../../src/core/op.js";
import { ownKey } from "../../src/kvstore.js";
import { findLayer } from "../../src/runtime/guard.js";
import { check, expectReject } from "../support/check.js";

const eq = (a: unknown, b: unknown, msg: string) =>
  check(
    JSON.stringify(a, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) ===
      JSON.stringify(b, (_, v) => (typeof v === "bigint" ? `${v}n` : v)),
    `${msg}: got ${JSON.stringify(a, (_, v) => String(v))}, expected ${JSON.stringify(b, (_, v) => String(v))}`,
  );

const values = async (_comm: Comm, b: ReturnType<Comm["alloc"]>) =>
  toValues(b.dtype, await readDevice(view(b))).map((v) => (typeof v === "bigint" ? Number(v) : v));

export const P2P_CASES: [string, (c: Comm) => Promise<void>][] = [
  [
    "blocking ring",
    async (c) => {
      const next = (c.rank + 1) % c.size;
      const prev = (c.rank - 1 + c.size) % c.size;
      const out = await toDevice(c, tensor("int32", [c.rank, c.rank * 10]));
      const inb = c.alloc("int32", 2);
      if (c.rank % 2 === 0) {
        await c.send(view(out), next);
        await c.recv(view(inb), prev);
      } else {
        await c.recv(view(inb), prev);
        await c.send(view(out), next);
      }
      eq(await values(c, inb), [prev, prev * 10], "ring");
    },
  ],
  [
    "isend/irecv to both neighbours, batched at the wait",
    async (c) => {
      const next = (c.rank + 1) % c.size;
      const prev = (c.rank - 1 + c.size) % c.size;
      const a = await toDevice(c, tensor("float32", [c.rank + 0.5]));
      const fromPrev = c.alloc("float32", 1);
      const fromNext = c.alloc("float32", 1);
      // Every rank sends before it receives: unbatched, NCCL could deadlock here.
      const w = [
        c.isend(view(a), next),
        c.isend(view(a), prev),
        c.irecv(view(fromPrev), prev),
        c.irecv(view(fromNext), next),
      ];
      await Promise.all(w.map((x) => x.wait()));
      await c.synchronize();
      check(
        w.every((x) => x.test()),
        "every work is complete after synchronize",
      );
      eq(await values(c, fromPrev), [prev + 0.5], "from prev");
      eq(await values(c, fromNext), [next + 0.5], "from next");
    },
  ],
  [
    "non-overtaking between a pair",
    async (c) => {
      const n = 12;
      const next = (c.rank + 1) % c.size;
      const prev = (c.rank - 1 + c.size) % c.size;
      const sends = await Promise.all(Array.from({ length: n }, (_, i) => toDevice(c, tensor("int64", [i, -i]))));
      const recvs = Array.from({ length: n }, () => c.alloc("int64", 2));
      const works = [...sends.map((s) => c.isend(view(s), next)), ...recvs.map((r) => c.irecv(view(r), prev))];
      for (const w of works) await w.wait();
      for (let i = 0; i < n; i++) eq(await values(c, recvs[i]!), [i, -i], `message ${i}`);
    },
  ],
  [
    "group of sends and receives",
    async (c) => {
      const bufs = await Promise.all(
        Array.from({ length: c.size }, (_, p) => toDevice(c, tensor("bfloat16", [c.rank * 4 + p]))),
      );
      const got = Array.from({ length: c.size }, () => c.alloc("bfloat16", 1));
      const ops = [];
      for (let p = 0; p < c.size; p++) {
        if (p === c.rank) continue;
        ops.push({ kind: "send" as const, peer: p, view: view(bufs[p]!) });
        ops.push({ kind: "recv" as const, peer: p, view: view(got[p]!) });
      }
      await c.group(ops, { label: "all-to-all by hand" });
      for (let p = 0; p < c.size; p++) {
        if (p !== c.rank) eq(await values(c, got[p]!), [p * 4 + c.rank], `from ${p}`);
      }
    },
  ],
  [
    "local copy, reduceInto and scale on the device equal the host reference",
    async (c) => {
      for (const dtype of DTYPES) {
        const info = dtypeInfo(dtype);
        const xs = [3, -2, 7, 0, 5, 1, -4, 2].map((v) => (dtype.startsWith("uint") ? Math.abs(v) : v));
        const ys = [1, 4, -3, 6, 2, 2, 1, -1].map((v) => (dtype.startsWith("uint") ? Math.abs(v) : v));
        const hx = fromValues(dtype, xs);
        const hy = fromValues(dtype, ys);
        const dx = c.alloc(dtype, 8);
        const dy = c.alloc(dtype, 8);
        const dz = c.alloc(dtype, 8);
        await writeDevice(view(dx), hx);
        await writeDevice(view(dy), hy);
        const combines =
          info.kind === "int"
            ? (["sum", "prod", "min", "max", "band", "bor", "bxor"] as const)
            : (["sum", "prod", "min", "max"] as const);
        for (const op of combines) {
          c.copy(view(dz), view(dx));
          c.reduceInto(view(dz, 2, 6), view(dy, 1, 6), { name: op });
          const want = hx.slice();
          reduceArrays(dtype, op, want, 2, hy, 1, 6);
          eq(toValues(dtype, await readDevice(view(dz))), toValues(dtype, want), `${dtype} ${op}`);
        }
        c.scale(view(dz), view(dx), 3, 2);
        const want = new info.array(8);
        scaleArrays(dtype, want, 0, hx, 0, 8, 3, 2);
        eq(toValues(dtype, await readDevice(view(dz))), toValues(dtype, want), `${dtype} scale 3/2`);
      }
    },
  ],
  [
    "host memory is refused, naming the argument",
    async (c) => {
      const host = zeros("float32", 2);
      await expectReject(
        c.send(view(host), (c.rank + 1) % c.size),
        InvalidArgumentError,
        /argument 'view': the nccl backend works on device memory/,
        "host send",
      );
    },
  ],
  [
    "builtin collectives (the oracle)",
    async (c) => {
      const nccl = findLayer(c, (x): x is NcclComm => x instanceof NcclComm);
      check(nccl, "an NcclComm underneath");
      const b = nccl.builtin;
      const x = await toDevice(c, tensor("float16", [c.rank, 1]));
      const out = c.alloc("float16", 2);
      await b.allreduce(view(x), view(out), "sum");
      eq(await values(c, out), [(c.size * (c.size - 1)) / 2, c.size], "allreduce sum");
      const y = await toDevice(c, tensor("int32", [c.rank * 2 + 1]));
      await b.allreduce(null, view(y), "avg");
      eq(await values(c, y), [Math.trunc(c.size)], "allreduce avg in place (truncating)");
      const g = c.alloc("int32", c.size);
      await b.allgather(view(await toDevice(c, tensor("int32", [c.rank * 3]))), view(g), 1);
      eq(
        await values(c, g),
        Array.from({ length: c.size }, (_, r) => r * 3),
        "allgather",
      );
      const bc = await toDevice(c, tensor("uint8", c.rank === 0 ? [7, 8, 9] : [0, 0, 0]));
      await b.bcast(view(bc), 0);
      eq(await values(c, bc), [7, 8, 9], "bcast");
      await expectReject(b.allreduce(view(y), view(y), "bxor"), InvalidArgumentError, /no bitwise reductions/, "bxor");
      await b.barrier();
    },
  ],
  [
    "split: members get a new communicator, others rank -1",
    async (c) => {
      const evens = Array.from({ length: c.size }, (_, r) => r).filter((r) => r % 2 === 0);
      const sub = await c.split(evens);
      if (c.rank % 2 === 1) {
        eq(sub.rank, -1, "non-member rank");
        let threw = false;
        try {
          sub.alloc("int32", 1);
        } catch (e) {
          threw = e instanceof InvalidArgumentError && /not a member of group/.test(e.message);
        }
        check(threw, "a non-member's calls throw, naming the group");
        return;
      }
      eq(sub.rank, evens.indexOf(c.rank), "member rank");
      eq(sub.size, evens.length, "member size");
      const nccl = findLayer(sub, (x): x is NcclComm => x instanceof NcclComm);
      check(nccl, "the subgroup is an NcclComm");
      const v = await toDevice(sub, tensor("int64", [c.rank]));
      await nccl.builtin.allreduce(null, view(v), "sum");
      eq(await values(sub, v), [evens.reduce((a, r) => a + r, 0)], "sum over the evens");
      sub.destroy();
    },
  ],
];

/**
 * Last: it aborts every communicator of rank 0's process. The other ranks stay alive (a store
 * barrier) until rank 0 has seen its timeout: on one shared GPU every connection is NCCL's socket
 * transport, and a peer whose process exits closes it, so rank 0 would get ncclRemoteError
 * ("Connection closed by remote peer") long before its timeout.
 */
export const TIMEOUT_CASE: [string, (c: Comm, setTimeoutMs: (ms: number) => void) => Promise<void>] = [
  "a receive nobody sends to times out, naming rank, peer and label, and aborts",
  async (c, setTimeoutMs) => {
    const nccl = findLayer(c, (x): x is NcclComm => x instanceof NcclComm);
    check(nccl, "an NcclComm underneath");
    // Rank 0 releases the others; a rank writes only its own keys in the store (rank/<r>/...).
    const released = ownKey(0, `${nccl.key}/timeout-case/done`);
    if (c.rank !== 0) {
      await nccl.proc.store.get(released, 120_000);
      return;
    }
    try {
      setTimeoutMs(1500);
      const r = c.alloc("int32", 1);
      // Where NCCL still has to connect to the peer, the receive itself cannot be enqueued and times
      // out; otherwise it is enqueued and synchronize times out. Either names the receive.
      await expectReject(
        (async () => {
          await c.recv(view(r), c.size - 1, { label: "never sent" });
          await c.synchronize();
        })(),
        TimeoutError,
        new RegExp(`did not complete within 1\\.5 s.*rank 0: recv from peer ${c.size - 1} \\(never sent\\)`),
        "timeout",
      );
      await expectReject(c.send(view(r), 1 % c.size), AbortError, /aborted/, "after the abort");
    } finally {
      await nccl.proc.store.set(released, "1");
    }
  },
];
