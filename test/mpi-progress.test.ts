/**
 * The mpi backend's one progress loop (src/backends/mpi/progress.ts, issue 26): a young wait
 * never sleeps, a long one sleeps in growing steps capped at 1 ms, the event loop keeps its turns
 * while a wait goes on, a completion makes the wait young again, a turn scheduled before a
 * restart drives nothing, and an idle timeout stops the loop. Driven by a stand-in for the native
 * call, so it needs no MPI.
 */
import { describe, expect, it } from "vitest";
import {
  BUDGET_US,
  type Driven,
  MAX_SLEEP_US,
  ProgressLoop,
  ranksOutnumberCores,
  SPIN_US,
  sleepFor,
} from "../src/backends/mpi/progress.js";
import { underLoad } from "./support/load.js";

describe("sleepFor: how long a wait sleeps between tests", () => {
  it("not at all for the first 2 ms, then 1/16 of the time waited, 50 µs to 1 ms", () => {
    expect(sleepFor(0)).toBe(0);
    expect(sleepFor(SPIN_US - 1)).toBe(0);
    expect(sleepFor(SPIN_US)).toBe(SPIN_US / 16);
    expect(sleepFor(4000)).toBe(250);
    expect(sleepFor(16_000)).toBe(MAX_SLEEP_US);
    expect(sleepFor(3_600_000_000)).toBe(MAX_SLEEP_US);
  });
});

describe("ranksOutnumberCores", () => {
  it("reads mpirun's local size before the comm's size", () => {
    expect(ranksOutnumberCores(2, { OMPI_COMM_WORLD_LOCAL_SIZE: "100000" })).toBe(true);
    expect(ranksOutnumberCores(100000, { OMPI_COMM_WORLD_LOCAL_SIZE: "1" })).toBe(false);
    expect(ranksOutnumberCores(100000, {})).toBe(true);
    expect(ranksOutnumberCores(1, {})).toBe(false);
  });
});

/** One pump's arguments and how long the wait had been idle then, ms. */
interface Pumped {
  readonly at: number;
  readonly budgetUs: number;
  readonly yieldCpu: boolean;
  readonly sleepUs: number;
}

/** A Driven whose transfers complete at the given times (ms after start); records every pump. */
class Scripted implements Driven {
  readonly pumps: Pumped[] = [];
  readonly t0 = performance.now();
  failed: unknown;
  timedOut = false;
  private next = 0;
  constructor(
    private readonly completeAt: readonly number[],
    private readonly timeoutMs = 60_000,
    readonly onDone: () => void = () => {},
  ) {}
  pump(budgetUs: number, yieldCpu: boolean, sleepUs: number): number {
    const at = performance.now() - this.t0;
    this.pumps.push({ at, budgetUs, yieldCpu, sleepUs });
    if (this.next === this.completeAt.length) {
      this.onDone();
      return -1;
    }
    if (at < (this.completeAt[this.next] as number)) return 0;
    this.next++;
    return 1;
  }
  idle(idleMs: number): boolean {
    if (idleMs <= this.timeoutMs) return false;
    this.timedOut = true;
    this.onDone();
    return true;
  }
  fail(e: unknown): void {
    this.failed = e;
    this.onDone();
  }
}

function drive(completeAt: readonly number[], yieldCpu = false, timeoutMs?: number) {
  return new Promise<Scripted>((resolve) => {
    const d: Scripted = new Scripted(completeAt, timeoutMs, () => resolve(d));
    new ProgressLoop(d, yieldCpu).start();
  });
}

describe("ProgressLoop", () => {
  it("a wait spins its first 2 ms with the short budget, then sleeps, never more than 1 ms at a time", async () => {
    const end = underLoad(30);
    const d = await drive([end]);
    // The wait's age is the loop's: from the end of its first turn, which ends right after the
    // first pump unless the process is descheduled there (a loaded machine), so the window of an
    // old wait starts that much later (test/support/load.ts).
    const first = d.pumps[0]?.at ?? 0;
    const young = d.pumps.filter((p) => p.at < 1.9);
    const old = d.pumps.filter((p) => p.at > first + underLoad(4) && p.at < end - 1);
    expect(young.length).toBeGreaterThan(0);
    for (const p of young) expect(p).toMatchObject({ budgetUs: BUDGET_US, sleepUs: 0 });
    expect(old.length).toBeGreaterThan(0);
    for (const p of old) {
      expect(p.sleepUs).toBeGreaterThan(0);
      expect(p.sleepUs).toBeLessThanOrEqual(MAX_SLEEP_US);
      // 1/16 of the wait so far, read a little before this pump.
      expect(p.sleepUs).toBeLessThanOrEqual(Math.max(50, (p.at * 1000) / 16));
    }
  });

  it("a completion makes the wait young again: no sleep right after one", async () => {
    // Completions late enough that the wait is old by then, even where the first turn ran late.
    const at = underLoad(5);
    const d = await drive([at, at + 0.01]);
    const after = d.pumps.find((p) => p.at >= at);
    const next = d.pumps[d.pumps.indexOf(after as Pumped) + 1];
    expect(after?.sleepUs).toBeGreaterThan(0);
    expect(next?.sleepUs).toBe(0);
  });

  it("where ranks outnumber cores, a wait yields once it has spun one budget, not before", async () => {
    const d = await drive([3], true);
    expect(d.pumps[0]?.yieldCpu).toBe(false);
    expect(d.pumps.some((p) => p.yieldCpu)).toBe(true);
  });

  it("the event loop keeps its turns while a wait goes on", async () => {
    let timerAt = -1;
    const t0 = performance.now();
    setTimeout(() => {
      timerAt = performance.now() - t0;
    }, 2);
    const d = await drive([underLoad(20)]);
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(d.pumps[d.pumps.length - 1]?.at ?? 0);
  });

  it("an idle timeout stops the loop: no pump after it", async () => {
    const d = await drive([1e9], false, 5);
    expect(d.timedOut).toBe(true);
    const n = d.pumps.length;
    await new Promise((r) => setTimeout(r, 10));
    expect(d.pumps.length).toBe(n);
  });

  it("a turn scheduled before a restart drives nothing; a throw fails what is driven", async () => {
    let pumps = 0;
    let failed: unknown;
    const driven: Driven = {
      pump: () => {
        pumps++;
        if (pumps === 3) throw new Error("engine broke");
        return 0;
      },
      idle: () => false,
      fail: (e) => {
        failed = e;
      },
    };
    const loop = new ProgressLoop(driven, false);
    loop.start(); // pump 1, then a turn is scheduled
    loop.start(); // pump 2; the first start's turn is now stale
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // Only the second start's turn ran (pump 3, which threw): the stale one added nothing.
    expect(pumps).toBe(3);
    expect((failed as Error).message).toBe("engine broke");
  });
});
