/**
 * The front API's own cost per call, with no communication (issue 18 item 4): allReduce of 256
 * float32 on one simulated rank, in place, so the collective itself does nothing and what is
 * timed is argument checks, the algorithm lookup ('auto''s choice), the plan cache and the
 * executor's prologue. A named algorithm and 'auto'; the median of 9 runs of 20,000 calls after
 * 2,000 warm-up calls, in µs per call. Not a test: run it, and say the machine's load with it.
 *   npx tsx test/perf/front-api-cost.ts
 */
import { allReduce, spawn, tensor } from "../../src/index.js";

const calls = 20000;

async function perCall(algorithm: string): Promise<number> {
  const runs: number[] = [];
  await spawn(1, async (comm) => {
    const buf = tensor("float32", new Array(256).fill(1));
    for (let i = 0; i < 2000; i++) await allReduce(comm, buf, { algorithm, op: "sum" });
    for (let r = 0; r < 9; r++) {
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) await allReduce(comm, buf, { algorithm, op: "sum" });
      runs.push(((performance.now() - t0) * 1000) / calls);
    }
  });
  runs.sort((a, b) => a - b);
  return runs[4] as number;
}

const named = await perCall("ring");
const auto = await perCall("auto");
console.log(`named (ring): ${named.toFixed(2)} µs/call; auto: ${auto.toFixed(2)} µs/call`);
