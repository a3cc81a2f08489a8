/**
 * Seed 001 §10 (DeviceMesh): the ranks arranged as a dp x tp mesh (2 x 2 on 4 ranks, the seed's
 * 2 x 3 with -n 6), rank = d * tp + t. Each mesh row is a tp group and each column a dp group,
 * made with new_group (comm.split) by every rank, as init_device_mesh does. Each rank then
 * all-reduces its rank over its tp group and over its dp group. `--dp N` sets the dp size.
 */
import { allReduce, type Comm, InvalidArgumentError, tensor } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { nums } from "./_tensor.js";

export async function main(comm: Comm, args: string[] = []): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const at = args.indexOf("--dp");
  const dp = at >= 0 ? Number(args[at + 1]) : 2;
  if (!Number.isInteger(dp) || dp < 1 || size % dp !== 0) {
    throw new InvalidArgumentError(
      { rank, op: "device_mesh example", arg: "--dp" },
      `${args[at + 1]} does not divide the ${size} ranks`,
    );
  }
  const tp = size / dp;
  const mesh = Array.from({ length: dp }, (_, d) => Array.from({ length: tp }, (_, t) => d * tp + t));
  if (rank === 0) print(`mesh (dp=${dp}, tp=${tp}): [${mesh.map((row) => `[${row.join(", ")}]`).join(", ")}]`);

  // Every rank takes part in creating every group (same calls, same order); it keeps its own.
  let tpGroup: Comm | undefined;
  let dpGroup: Comm | undefined;
  for (const row of mesh) {
    const g = await comm.split(row);
    if (g.rank >= 0) tpGroup = g;
  }
  for (let t = 0; t < tp; t++) {
    const g = await comm.split(mesh.map((row) => row[t]!));
    if (g.rank >= 0) dpGroup = g;
  }
  const [d, t] = [Math.floor(rank / tp), rank % tp];
  const overTp = tensor("float32", [rank]);
  await allReduce(tpGroup!, overTp, { op: "sum" });
  const overDp = tensor("float32", [rank]);
  await allReduce(dpGroup!, overDp, { op: "sum" });
  print(
    `Rank ${rank}: coordinate (dp=${d}, tp=${t}); tp group [${tpGroup!.worldRanks.join(", ")}], ` +
      `dp group [${dpGroup!.worldRanks.join(", ")}]; sum of ranks over tp ${nums(overTp)[0]}, over dp ${nums(overDp)[0]}`,
  );
}

runIfMain(import.meta.url, main);
