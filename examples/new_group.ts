/**
 * Seed 003 (new_group): two groups, the lower and the upper half of the ranks. Each rank
 * all-reduces its rank inside its own group (1 and 5 on 4 ranks), then a world all-reduce with
 * MAX spreads both groups' sums to everyone: a rank's slot for the other group is still 0, and
 * max leaves the real sum (sum would count each group's result once per member, as the seed remarks).
 */
import { allReduce, type Comm, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { nums, setNums } from "./_tensor.js";

const item = (t: ReturnType<typeof zeros>) => nums(t)[0]!.toFixed(1);

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  const half = Math.floor(size / 2);
  const group1Ranks = Array.from({ length: half }, (_, i) => i);
  const group2Ranks = Array.from({ length: size - half }, (_, i) => half + i);
  const group1Sum = zeros("float32", 1);
  const group2Sum = zeros("float32", 1);
  if (rank === 0) {
    print(`group 1's initial sum: ${item(group1Sum)}`);
    print(`group 2's initial sum: ${item(group2Sum)}`);
  }
  // new_group: every rank creates every group, in the same order; members get a communicator.
  const group1 = await comm.split(group1Ranks);
  const group2 = await comm.split(group2Ranks);

  if (rank === 0) print("\nall-reduce inside each group...");
  const inGroup1 = group1.rank >= 0;
  const group = inGroup1 ? group1 : group2;
  const mine = inGroup1 ? group1Sum : group2Sum;
  setNums(mine, [rank]);
  await allReduce(group, mine, { op: "sum" });
  print(`Rank ${rank} is rank ${group.rank} of group ${inGroup1 ? 1 : 2}: group sum ${item(mine)}`);

  await allReduce(comm, group1Sum, { op: "max" });
  await allReduce(comm, group2Sum, { op: "max" });
  if (rank === 0) {
    print("\n=============== done ===============");
    print(`Group1 (ranks [${group1Ranks.join(", ")}]): sum is ${item(group1Sum)}`);
    print(`Group2 (ranks [${group2Ranks.join(", ")}]): sum is ${item(group2Sum)}`);
  }
}

runIfMain(import.meta.url, main);
