/**
 * The cclab programs the fault catalogue runs (test/faults/table.ts): `scenario.ts <name> [args]`
 * does one fault or bad input on the ranks the name says, and every computing scenario checks its
 * result against the sequential oracle and prints `ok <name>` only if every element is right, so a
 * row can tell right data from wrong data with exit 0.
 */
import { createHash } from "node:crypto";
import { connect, type Socket } from "node:net";
import { allReduce, barrier, broadcast } from "../../../src/collectives/api.js";
import { broadcastObject } from "../../../src/collectives/objects.js";
import type { Comm } from "../../../src/comm.js";
import { HostBuffer, tensor, view, zeros } from "../../../src/core/buffer.js";
import type { KVStore } from "../../../src/kvstore.js";

// The store's modules are imported where a scenario needs them, so this program also loads
// against older versions of cclab (to show a row failing before its fix).
const storeModule = () => import("../../../src/runtime/store/index.js");

type Scenario = (comm: Comm, args: string[]) => Promise<void>;

/** allReduce(sum) of [rank + 1, ...] over float32 and the check that every element is right. */
async function sumCheck(comm: Comm, n = 8): Promise<void> {
  const buf = tensor(
    "float32",
    Array.from({ length: n }, (_, i) => comm.rank + 1 + i),
  );
  await allReduce(comm, buf, { algorithm: "ring" });
  const s = (comm.size * (comm.size + 1)) / 2;
  buf.values().forEach((v, i) => {
    if (v !== s + comm.size * i)
      throw new Error(`wrong data on rank ${comm.rank}: element ${i} is ${v}, not ${s + comm.size * i}`);
  });
}

function ring(comm: Comm, rounds: number): Promise<void> {
  const next = (comm.rank + 1) % comm.size;
  const prev = (comm.rank - 1 + comm.size) % comm.size;
  const v = view(zeros("int32", 1));
  return (async () => {
    for (let i = 0; i < rounds; i++) {
      if (comm.rank === 0) {
        await comm.send(v, next, { label: `ring round ${i} send` });
        await comm.recv(v, prev, { label: `ring round ${i} recv` });
      } else {
        await comm.recv(v, prev, { label: `ring round ${i} recv` });
        await comm.send(v, next, { label: `ring round ${i} send` });
      }
    }
  })();
}

/**
 * The job's store, as the runtime's guard layer holds it (the rank's own connection); before the
 * store had rank-bound connections, cclab kept it in src/runtime/registry.ts (so the rows of issue
 * 14 item 1 can be shown failing against that code).
 */
async function store(comm: Comm): Promise<KVStore> {
  for (let c: Comm | undefined = comm; c; c = (c as { inner?: Comm }).inner) {
    const s = (c as { store?: KVStore | null }).store;
    if (s) return s;
  }
  const old = "../../../src/runtime/registry.js";
  const registry = (await import(old).catch(() => null)) as { runtimeOf?: (c: Comm) => { store?: KVStore } } | null;
  const s = registry?.runtimeOf?.(comm)?.store;
  if (s) return s;
  throw new Error("this scenario needs the job's store");
}

/** Opens a raw connection to the job's store, sends bytes, resolves with what came back when it closed. */
function rawStore(bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    const s = connect(Number(process.env.MASTER_PORT), process.env.MASTER_ADDR ?? "127.0.0.1", () => s.write(bytes));
    s.on("data", (d) => got.push(d));
    s.on("error", () => {});
    s.on("close", () => resolve(Buffer.concat(got).toString("latin1")));
  });
}

const scenarios: Record<string, Scenario> = {
  /** The baseline: a ring all-reduce with every element checked. */
  allreduce: (comm) => sumCheck(comm),
  /** A token passed around the ring args[0] times. */
  ring: (comm, args) => ring(comm, Number(args[0] ?? 2)),
  /** 2(a): ranks 0,1 split([0,1]) and ranks 2,3 split([2,3]): one call, two lists. */
  "split-halves": async (comm) => {
    const sub = await comm.split(comm.rank < 2 ? [0, 1] : [2, 3]);
    await sumCheck(sub);
  },
  /** 2(a): rank 0 lists the same members in another order. */
  "split-order": async (comm) => {
    const sub = await comm.split(comm.rank === 0 ? [1, 0] : [0, 1]);
    await sumCheck(sub);
  },
  /** 2(b): two ring all-reduces in flight on one communicator. */
  "two-in-flight": async (comm) => {
    const a = tensor("float32", [comm.rank + 1, 1]);
    const b = tensor("float32", [10 * (comm.rank + 1), 2]);
    await Promise.all([allReduce(comm, a, { algorithm: "ring" }), allReduce(comm, b, { algorithm: "ring" })]);
    const s = (comm.size * (comm.size + 1)) / 2;
    if (a.values()[0] !== s || b.values()[0] !== 10 * s) throw new Error(`wrong data on rank ${comm.rank}`);
  },
  /** 2(c): rank 1's buffer was transferred away (its ArrayBuffer is detached). */
  detached: async (comm) => {
    const buf = tensor("float32", [1, 2, 3, 4]);
    if (comm.rank === 1) structuredClone(buf.data.buffer, { transfer: [buf.data.buffer as ArrayBuffer] });
    await allReduce(comm, buf, { algorithm: "ring" });
  },
  /** 2(d): rank 1 reduces with max, the others with sum. */
  "op-mismatch": async (comm) => {
    const buf = tensor("float32", [comm.rank + 1, 1, 2, 3]);
    await allReduce(comm, buf, { algorithm: "ring", op: comm.rank === 1 ? "max" : "sum" });
    const want = (comm.size * (comm.size + 1)) / 2;
    if (buf.values()[0] !== want) throw new Error(`wrong data on rank ${comm.rank}: ${buf.values()[0]}, not ${want}`);
  },
  /** 2(d): rank 1 broadcasts from root 1, the others from root 0. */
  "root-mismatch": async (comm) => {
    const root = comm.rank === 1 ? 1 : 0;
    const buf = tensor("float32", [comm.rank + 5, comm.rank + 5]);
    await broadcast(comm, buf, { root });
    // Each rank checks what its own call promised: root 1 keeps its data, the others get root 0's.
    if (buf.values()[0] !== root + 5)
      throw new Error(`wrong data on rank ${comm.rank}: ${buf.values()[0]}, not ${root + 5}`);
  },
  /** 2(d): a blocking send to this rank itself with no receive posted. */
  "self-send": async (comm) => {
    if (comm.rank === 0) await comm.send(view(tensor("int32", [7])), 0, { label: "to myself" });
  },
  /** 2(e), 4: rank 1 calls process.exit(args[0]) while rank 0 waits for its message. */
  "exit-mid": async (comm, args) => {
    if (comm.rank === 1) process.exit(Number(args[0] ?? 0));
    await comm.recv(view(zeros("int32", 1)), (comm.rank + 1) % comm.size, { label: "wait for rank 1" });
  },
  /** 8: a throw in a callback rank 1 left on a timer, while it computes (sleeps) and the others wait. */
  "stray-throw": async (comm) => {
    if (comm.rank === 1) {
      setTimeout(() => {
        throw new Error("boom in a stray callback");
      }, 10);
      await new Promise((r) => setTimeout(r, 3000));
    }
    await barrier(comm);
  },
  /** 8: a rejected promise nobody handles, on rank 1, while the others wait. */
  "stray-rejection": async (comm) => {
    if (comm.rank === 1) {
      void Promise.reject(new Error("unhandled on rank 1"));
      await new Promise((r) => setTimeout(r, 3000));
    }
    await barrier(comm);
  },
  /** 8: rank 2's main awaits a promise nothing resolves; the others wait for it. */
  "never-settles": async (comm) => {
    if (comm.rank === 2) await new Promise(() => {});
    await sumCheck(comm);
  },
  /** 9: a SharedArrayBuffer-backed buffer. */
  shared: async (comm) => {
    const data = new Float32Array(new SharedArrayBuffer(16));
    data.fill(comm.rank + 1);
    await allReduce(comm, new HostBuffer("float32", data), { algorithm: "ring" });
    if (data[0] !== (comm.size * (comm.size + 1)) / 2) throw new Error(`wrong data on rank ${comm.rank}`);
  },
  /** 9: 4 x float32 sent, 4 x int32 expected: equal sizes, different dtypes. */
  "dtype-mismatch": async (comm) => {
    if (comm.rank === 0) await comm.send(view(tensor("float32", [1, 2, 3, 4])), 1, { label: "typed" });
    if (comm.rank === 1) await comm.recv(view(zeros("int32", 4)), 0, { label: "typed" });
  },
  /** A count mismatch: 4 sent, 5 expected. */
  "count-mismatch": async (comm) => {
    if (comm.rank === 0) await comm.send(view(tensor("float32", [1, 2, 3, 4])), 1, { label: "counted" });
    if (comm.rank === 1) await comm.recv(view(zeros("float32", 5)), 0, { label: "counted" });
  },
  /** 9: an object with a function in it. */
  "object-function": async (comm) => {
    await broadcastObject(comm, { f: () => 1 });
  },
  /** 9: a symbol. */
  "object-symbol": async (comm) => {
    await broadcastObject(comm, Symbol("s"));
  },
  /** 9: root "1", a string. */
  "root-string": async (comm) => {
    await broadcast(comm, tensor("float32", [1]), { root: "1" as unknown as number });
  },
  /** A peer outside the communicator. */
  "bad-peer": async (comm) => {
    await comm.send(view(tensor("int32", [1])), comm.size + 3);
  },
  /** A view past its buffer's end. */
  "bad-view": async (comm) => {
    await comm.send({ buffer: zeros("int32", 2), offset: 1, count: 4 }, (comm.rank + 1) % comm.size);
  },
  /** split with a repeated rank. */
  "split-repeat": async (comm) => {
    await comm.split([0, 0]);
  },
  /** A collective on a non-member's communicator. */
  "non-member": async (comm) => {
    const sub = await comm.split([0]);
    if (comm.rank !== 0) await allReduce(sub, tensor("float32", [1]));
  },
  /** An op that does not fit the dtype (bitwise and on floats). */
  "op-dtype": async (comm) => {
    await allReduce(comm, tensor("float32", [1]), { op: "band" });
  },
  /** An unknown algorithm name. */
  "bad-algorithm": async (comm) => {
    await allReduce(comm, tensor("float32", [1]), { algorithm: "rign" });
  },
  /** Rank 1 passes a smaller buffer than the others. */
  "count-differs": async (comm) => {
    await allReduce(comm, zeros("float32", comm.rank === 1 ? 3 : 4), { algorithm: "ring" });
  },
  /** 7: rank 1 writes a key of rank 0. */
  "write-other": async (comm) => {
    if (comm.rank === 1) await (await store(comm)).set("rank/0/done", "1");
    await barrier(comm);
  },
  /** 7: rank 1 publishes an abort claiming to be rank 0: the store records rank 1. */
  "forge-abort": async (comm) => {
    if (comm.rank === 1) await (await store(comm)).abort(0, "rank 0 failed: forged by rank 1");
    await barrier(comm);
  },
  /** 7: rank 1 opens a second connection claiming rank 0. */
  impostor: async (comm) => {
    if (comm.rank === 1) {
      const { StoreClient } = await storeModule();
      await StoreClient.connect({
        host: process.env.MASTER_ADDR ?? "127.0.0.1",
        port: Number(process.env.MASTER_PORT),
        token: process.env.CCLAB_STORE_TOKEN ?? "",
        role: { rank: 0 },
        timeoutMs: 2000,
      });
    }
    await barrier(comm);
  },
  /** 7: a token derived from the job id (what older versions accepted) is refused. */
  "derived-token": async (comm) => {
    if (comm.rank === 1) {
      const token = createHash("sha256")
        .update(`cclab-store:${process.env.SLURM_JOB_ID ?? "1234"}.`)
        .digest("hex")
        .slice(0, 32);
      const { StoreClient } = await storeModule();
      await StoreClient.connect({
        host: process.env.MASTER_ADDR ?? "127.0.0.1",
        port: Number(process.env.MASTER_PORT),
        token,
        role: { rank: 1 },
        timeoutMs: 2000,
      });
    }
    await barrier(comm);
  },
  /**
   * 1: rank 1 writes a victim's pid where the old launcher read the pids it SIGKILLed at the end of
   * every job (pid/<r>, and a negative process group), and in its own keys; the job completes.
   */
  "pid-keys": async (comm, args) => {
    if (comm.rank === 1) {
      const s = await store(comm);
      const victim = args[0] ?? "1";
      const host = (await import("node:os")).hostname();
      for (const [k, v] of [
        ["pid/1", `${host}:${victim}`],
        ["rank/1/pid", `${host}:${victim}`],
        ["rank/1/pgid", `${host}:-${victim}`],
      ]) {
        await s.set(k as string, v as string).catch((e: Error) => console.log(`refused: ${e.message}`));
      }
    }
    await sumCheck(comm);
  },
  /**
   * 7: hostile traffic from inside the job: 40 connections that never authenticate, an oversized
   * length, a wrong token and an unknown op; the job still completes with right data.
   */
  "store-flood": async (comm) => {
    if (comm.rank === 1) {
      // Malformed traffic first (each connection gets an ERROR saying why), then the flood.
      const { encodeFrame, MAGIC, OP, VERSION } = await storeModule();
      const replies = await Promise.all([
        rawStore(Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3])),
        rawStore(encodeFrame(OP.AUTH, 1, [MAGIC, VERSION, "x".repeat(32), "rank", "1"])),
        rawStore(encodeFrame(99, 1, [])),
      ]);
      // An ERROR reply: length, status, id, then the reason as its one field.
      const reasons = replies.map((r) => r.slice(13, 113));
      // 40 connections that never authenticate: each past the store's cap evicts the oldest at once.
      const idle: Socket[] = [];
      let closed = 0;
      await new Promise<void>((done) => {
        for (let i = 0; i < 40; i++) {
          const sock = connect(Number(process.env.MASTER_PORT), process.env.MASTER_ADDR ?? "127.0.0.1");
          sock.resume(); // read, so the store's close (after its ERROR reply) is seen
          sock.on("error", () => {});
          sock.on("close", () => ++closed === 24 && done());
          idle.push(sock);
        }
      });
      const refused = closed;
      for (const sock of idle) sock.destroy();
      console.log(`flood: ${refused} of 40 evicted at once; store replies: ${reasons.join(" | ")}`);
    }
    await sumCheck(comm);
  },
  /**
   * 27.5: every rank all-reduces with a user's algorithm whose schedule() never returns (planning
   * is synchronous, so no rank comes back to its event loop and no rank's guard can time out).
   */
  "schedule-hangs": async (comm) => {
    const { registerAlgorithm } = await import("../../../src/schedule/registry.js");
    const { hang } = await import("./algorithms/hang.js");
    registerAlgorithm(hang);
    console.log(`planning on rank ${comm.rank}`);
    await allReduce(comm, tensor("float32", [1, 2]), { algorithm: "hang" });
  },
  /** 6: rank 1 computes in a busy loop (for killing the launcher meanwhile). */
  compute: async (comm) => {
    console.log(`computing on rank ${comm.rank}`);
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      /* a CPU-bound rank: no event loop turns */
    }
  },
  /** 3(b): every rank says it is ready and then waits in a ring (for a launcher stopped meanwhile). */
  "ready-ring": async (comm) => {
    console.log(`ready on rank ${comm.rank}`);
    await new Promise((r) => setTimeout(r, 500));
    await ring(comm, 2);
  },
  /** 4: rank 1 dies at start-up, before joining the job (the program is loaded before init). */
  "die-at-load": async (comm) => {
    await sumCheck(comm);
  },
  /** The store's bind address: a rank tries the master port on every non-loopback address of this machine. */
  "bind-check": async (comm) => {
    const { networkInterfaces } = await import("node:os");
    const addrs = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === "IPv4" && !a.internal)
      .map((a) => a!.address);
    for (const a of addrs) {
      const reachable = await new Promise<boolean>((resolve) => {
        const s = connect(Number(process.env.MASTER_PORT), a, () => {
          s.destroy();
          resolve(true);
        });
        s.on("error", () => resolve(false));
      });
      if (reachable) throw new Error(`rank ${comm.rank}: the store is reachable on ${a}, not only on loopback`);
    }
    console.log(`store on ${process.env.MASTER_ADDR}, unreachable on ${addrs.length} other address(es)`);
    await sumCheck(comm);
  },
};

if (process.env.CCLAB_DIE_AT_LOAD !== undefined) {
  const rank = process.env.RANK ?? process.env.OMPI_COMM_WORLD_RANK;
  if (rank === process.env.CCLAB_DIE_AT_LOAD) process.kill(process.pid, "SIGKILL");
}

export async function main(comm: Comm, args: string[]): Promise<void> {
  const [name, ...rest] = args;
  const scenario = scenarios[name ?? ""];
  if (!scenario)
    throw new Error(`unknown scenario ${JSON.stringify(name)}; expected one of ${Object.keys(scenarios).join(", ")}`);
  await scenario(comm, rest);
  console.log(`ok ${name}`);
}
