/**
 * The soak test's program: `soak.ts <seed> <collectives>` runs that many collectives back to back,
 * each chosen by a generator seeded alike on every rank (collective, count, dtype, op, root), and
 * checks every rank's output element for element against the sequential oracle (reference.ts),
 * whose inputs every rank can compute. Prints `soak ok <k>` at the end, or `soak completed <k>`
 * before rethrowing whatever stopped it (an injected fault), so the test counts collectives run.
 */
import * as api from "../../../src/collectives/api.js";
import { reference } from "../../../src/collectives/reference.js";
import type { Comm } from "../../../src/comm.js";
import { HostBuffer } from "../../../src/core/buffer.js";
import { type DType, dtypeInfo } from "../../../src/core/dtype.js";
import type { OpName } from "../../../src/core/op.js";
import { Rng } from "../../../src/core/random.js";
import { layoutOf } from "../../../src/specs/index.js";
import type { CollectiveCall } from "../../../src/specs/types.js";

const KINDS = [
  "allreduce",
  "broadcast",
  "reduce",
  "allgather",
  "reducescatter",
  "alltoall",
  "gather",
  "scatter",
] as const;
const DTYPES: readonly DType[] = ["int32", "float64", "float32"];
const OPS: readonly OpName[] = ["sum", "max", "min"];
const COUNTS = [0, 1, 3, 8, 33, 256];

/** Small integers: every op is exact in every dtype here, so results compare with ===. */
function inputOf(seed: number, call: number, rank: number, dtype: DType, n: number): HostBuffer {
  const r = new Rng(seed * 1_000_003 + call * 1009 + rank);
  const a = new (dtypeInfo(dtype).array)(n);
  for (let i = 0; i < n; i++) (a as Int32Array)[i] = r.int(17) - 8;
  return new HostBuffer(dtype, a);
}

async function one(comm: Comm, seed: number, call: number, rng: Rng): Promise<void> {
  const collective = KINDS[rng.int(KINDS.length)]!;
  const dtype = DTYPES[rng.int(DTYPES.length)]!;
  const opName = OPS[rng.int(OPS.length)]!;
  const root = rng.int(comm.size);
  let count = COUNTS[rng.int(COUNTS.length)]!;
  if (collective === "alltoall") count -= count % comm.size;
  const size = comm.size;
  const whole: CollectiveCall = {
    collective,
    size,
    count,
    root,
    dtype,
    op: { name: opName },
    inPlace: false,
    segment: 1 << 16,
  };
  const shape = (rank: number) => layoutOf({ ...whole, rank });
  const inputs = Array.from({ length: size }, (_, r) => inputOf(seed, call, r, dtype, shape(r).inputCount));
  const want = reference(
    whole,
    inputs.map((b) => b.data),
  )[comm.rank]!;
  const me = comm.rank;
  const input = inputs[me]!;
  const output = new HostBuffer(dtype, shape(me).outputCount);
  const op = opName;
  switch (collective) {
    case "allreduce":
      await api.allReduce(comm, input, { op, output });
      break;
    case "broadcast":
      await api.broadcast(comm, me === root ? input : output, { root, output: me === root ? output : undefined });
      break;
    case "reduce":
      await api.reduce(comm, input, { op, root, output: me === root ? output : undefined });
      break;
    case "allgather":
      await api.allGather(comm, output, input);
      break;
    case "reducescatter":
      await api.reduceScatter(comm, output, input, { op });
      break;
    case "alltoall":
      await api.allToAll(comm, output, input);
      break;
    case "gather":
      await api.gather(comm, input, { root, output: me === root ? output : undefined });
      break;
    case "scatter":
      await api.scatter(comm, output, { root, input: me === root ? input : undefined });
      break;
  }
  for (let i = 0; i < want.length; i++) {
    if (output.data[i] !== want[i]) {
      throw new Error(
        `wrong data on rank ${me}: call ${call} (${collective} ${count} x ${dtype} ${op} root ${root}) element ${i} is ${output.data[i]}, not ${want[i]}`,
      );
    }
  }
}

export async function main(comm: Comm, args: string[]): Promise<void> {
  const seed = Number(args[0] ?? 1);
  const total = Number(args[1] ?? 50);
  const rng = new Rng(seed);
  let done = 0;
  try {
    for (; done < total; done++) await one(comm, seed, done, rng);
  } catch (e) {
    console.log(`soak completed ${done}`);
    throw e;
  }
  console.log(`soak ok ${done}`);
}
