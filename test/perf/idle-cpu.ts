/**
 * What a rank waiting on an absent peer costs (issue 26): rank 0 starts a ring all-reduce while
 * rank 1 sleeps for `seconds` before joining; rank 0 prints the CPU time its process used during
 * the wait (user + system), and how many times its event loop ran a timer meanwhile (a 10 ms
 * interval: the loop must keep turning while the wait goes on). Not a test: run it by hand.
 *   mpirun -np 2 node --import tsx test/perf/idle-cpu.ts [seconds = 3]
 */
import { initMpi } from "../../src/backends/mpi/index.js";
import { allReduce } from "../../src/collectives/api.js";

const comm = await initMpi();
const seconds = Number(process.argv[2] ?? 3);
const buf = new Float32Array(256).fill(1);
await allReduce(comm, buf, { algorithm: "ring" });
comm.builtin.barrier();
if (comm.rank === 1) {
  // Blocks this process (Atomics.wait on a private buffer): the peer is simply not there.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
  await allReduce(comm, buf, { algorithm: "ring" });
} else {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await allReduce(comm, buf, { algorithm: "ring" });
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(timer);
  const ms = (cpu.user + cpu.system) / 1000;
  console.log(
    `rank 0 waited ${wall.toFixed(0)} ms for its peer: ${ms.toFixed(0)} ms of CPU (${((100 * ms) / wall).toFixed(1)}% of a core), ` +
      `the event loop ran a 10 ms timer ${ticks} times meanwhile`,
  );
}
comm.destroy();
