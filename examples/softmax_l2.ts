/**
 * Seed 003 (all_reduce building softmax): each rank holds [rank+1, rank+2, rank+3]; all-reduce
 * gives a weighted sum, then a softmax across ranks (max all-reduce for stability, exp, sum
 * all-reduce, divide) and an L2 normalisation (sum of squares all-reduce, sqrt, divide). Element k
 * of every rank's result is one entry of a softmax (or unit vector) over the ranks.
 */
import { allReduce, type Comm, tensor } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { nums, torchStr } from "./_tensor.js";

const f32 = (xs: number[]) => tensor("float32", xs);

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank } = comm;
  const log = (...parts: unknown[]) => {
    if (rank === 0) print(...parts);
  };
  const x = [rank + 1, rank + 2, rank + 3];
  log(`\ninitial tensor (rank ${rank}): ${torchStr(f32(x))}`);

  // 1. Weighted sum: weights applied locally, then summed over ranks.
  const weights = [0.3, 0.3, 0.4];
  const weighted = f32(x.map((v, k) => v * weights[k]!));
  await allReduce(comm, weighted, { op: "sum" });
  log("\n=== weighted sum ===");
  log(`weighted tensor: ${torchStr(weighted)}`);

  // 2. Softmax over the ranks: subtract the max first so exp cannot overflow.
  const max = f32(x);
  log(`max_tensor before all_reduce: ${torchStr(max)}`);
  await allReduce(comm, max, { op: "max" });
  log(`max_tensor after all_reduce: ${torchStr(max)}`);
  const exp = nums(max).map((m, k) => Math.exp(x[k]! - m));
  const sumExp = f32(exp);
  log(`sum_exp before all_reduce: ${torchStr(sumExp)}`);
  await allReduce(comm, sumExp, { op: "sum" });
  log(`sum_exp after all_reduce: ${torchStr(sumExp)}`);
  const softmax = f32(exp.map((e, k) => e / nums(sumExp)[k]!));
  log("\n=== distributed softmax ===");
  print(`Rank ${rank} softmax result: ${torchStr(softmax)}`);

  // 3. L2 normalisation over the ranks.
  const sumSquared = f32(x.map((v) => v * v));
  log(`sum_squared before all_reduce: ${torchStr(sumSquared)}`);
  await allReduce(comm, sumSquared, { op: "sum" });
  log(`sum_squared after all_reduce: ${torchStr(sumSquared)}`);
  const normalized = f32(x.map((v, k) => v / Math.sqrt(nums(sumSquared)[k]!)));
  log("\n=== distributed L2 normalisation ===");
  print(`Rank ${rank} normalized result: ${torchStr(normalized)}`);
}

runIfMain(import.meta.url, main);
