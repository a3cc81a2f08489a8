/**
 * The static checker must fail where a schedule is wrong: each case here breaks a correct
 * algorithm in one way (a dropped step, a copy for a reduction, a short receive, a racing step,
 * a write to the caller's input, a wrong cost formula, a send-send pair, a lazy barrier) and
 * asserts the checker's message names what broke, where.
 */
import { describe, expect, it } from "vitest";
import { allreduceRing } from "../algorithms/allreduce/ring.js";
import { dissemination } from "../algorithms/barrier/dissemination.js";
import { copy, recv, region, send, step } from "../src/schedule/build.js";
import { checkAlgorithm } from "../src/schedule/check.js";
import type { Algorithm, ScheduleContext, Step } from "../src/schedule/types.js";

/** `alg` with each rank's materialised steps passed through `edit` (rank, steps) -> steps. */
function broken(alg: Algorithm, edit: (ctx: ScheduleContext, steps: Step[]) => Step[]): Algorithm {
  return {
    ...alg,
    name: `${alg.name}-broken`,
    *schedule(ctx) {
      yield* edit(ctx, [...alg.schedule(ctx)]);
    },
  };
}

const errorsOf = (alg: Algorithm, args: Parameters<typeof checkAlgorithm>[1]) => checkAlgorithm(alg, args).errors;

describe("the checker accepts what is right", () => {
  it("ring all-reduce, n = 4, count 6, out of place and in place", () => {
    expect(errorsOf(allreduceRing, { size: 4, count: 6 })).toEqual([]);
    expect(errorsOf(allreduceRing, { size: 4, count: 6, inPlace: true })).toEqual([]);
  });
});

describe("the checker rejects what is wrong", () => {
  it("a rank that skips its last step leaves its peer waiting: deadlock, naming rank and step", () => {
    const alg = broken(allreduceRing, (ctx, steps) => (ctx.rank === 2 ? steps.slice(0, -1) : steps));
    const errors = errorsOf(alg, { size: 4, count: 8 });
    expect(errors.join("\n")).toMatch(
      /^allreduce\/ring-broken \(n=4, count=8\): deadlock under rendezvous semantics: .*rank 3, step 6 \('recvCopySend chunk 0'\) waits in send\(to 0, out\[2:4\]\), recv\(from 2, out\[0:2\]\)/,
    );
  });

  it("a copy where a reduction belongs loses contributions, and the message lists which", () => {
    let done = false;
    const alg = broken(allreduceRing, (ctx, steps) =>
      steps.map((s) => {
        if (ctx.rank !== 1 || done || !s.local.some((l) => l.kind === "reduce")) return s;
        done = true;
        return { ...s, local: s.local.map((l) => ({ ...l, kind: "copy" as const })) };
      }),
    );
    const errors = errorsOf(alg, { size: 4, count: 4 }).join("\n");
    expect(errors).toMatch(/output\[\d\] holds \[[0-9+]+\] but allreduce needs \[0\+1\+2\+3\]/);
    expect(errors).toMatch(/missing/);
  });

  it("a reduction done twice counts a contribution twice", () => {
    let done = false;
    const alg = broken(allreduceRing, (ctx, steps) =>
      steps.map((s) => {
        const r = s.local.find((l) => l.kind === "reduce");
        if (ctx.rank !== 0 || done || !r) return s;
        done = true;
        return { ...s, local: [...s.local, r] };
      }),
    );
    expect(errorsOf(alg, { size: 4, count: 4 }).join("\n")).toContain(
      "rank 0: output[2] holds [0+1+2+3+3] but allreduce needs [0+1+2+3] (rank 3's element 2 counted 2 times)",
    );
  });

  it("a receive shorter than the matching send is a size mismatch naming both ranks and sizes", () => {
    const alg = broken(allreduceRing, (ctx, steps) =>
      steps.map((s, i) =>
        ctx.rank === 1 && i === 2
          ? {
              ...s,
              transfers: s.transfers.map((t) =>
                t.kind === "recv" ? { ...t, region: { ...t.region, count: t.region.count - 1 } } : t,
              ),
            }
          : s,
      ),
    );
    const errors = errorsOf(alg, { size: 4, count: 8 }).join("\n");
    expect(errors).toMatch(/rank 0, step \d+ .* sends \S+ \(2 elements\) to rank 1, which receives \S+ \(1 elements\)/);
  });

  it("a receive into memory the same step sends from is a race", () => {
    const alg = broken(allreduceRing, (ctx, steps) =>
      steps.map((s, i) => {
        const snd = s.transfers.find((t) => t.kind === "send");
        if (ctx.rank !== 0 || i !== 1 || !snd) return s;
        return { ...s, transfers: s.transfers.map((t) => (t.kind === "recv" ? { ...t, region: snd.region } : t)) };
      }),
    );
    expect(errorsOf(alg, { size: 4, count: 8 }).join("\n")).toMatch(/rank 0, step 1 .*race: send out\[\S+\] and recv/);
  });

  it("out of place, writing the caller's input is refused", () => {
    const alg = broken(allreduceRing, (ctx, steps) =>
      ctx.rank === 3 ? [...steps, step("scribble", [], [copy(region("input", 0, 1), region("output", 0, 1))])] : steps,
    );
    expect(errorsOf(alg, { size: 4, count: 4 }).join("\n")).toMatch(
      /rank 3, step \d+ \('scribble'\): writes in\[0\], which is the caller's input/,
    );
  });

  it("a header cost that does not match the schedule fails, quoting the formula", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      cost: { ...allreduceRing.cost, steps: (n) => n - 1, stepsFormula: "n-1" },
    };
    expect(errorsOf(alg, { size: 4, count: 8 })).toEqual([
      "allreduce/ring (n=4, count=8): cost: header says n-1 = 3 steps, the schedule has 6",
    ]);
  });

  it("send-send on two ranks (seed 003's deadlock) deadlocks under rendezvous semantics", () => {
    const sendSend: Algorithm = {
      ...allreduceRing,
      name: "send-send",
      scratch: () => 0,
      *schedule(ctx) {
        const peer = 1 - ctx.rank;
        yield step("send first", [send(peer, region("input", 0, ctx.count))]);
        yield step("then recv", [recv(peer, region("output", 0, ctx.count))]);
      },
    };
    const errors = errorsOf(sendSend, { size: 2, count: 1 }).join("\n");
    expect(errors).toContain("deadlock under rendezvous semantics");
    expect(errors).toContain("rank 0, step 0 ('send first') waits in send(to 1, in[0])");
    expect(errors).toContain("rank 1, step 0 ('send first') waits in send(to 0, in[0])");
  });

  it("an output nobody writes is reported as never written", () => {
    const idle: Algorithm = { ...allreduceRing, name: "idle", *schedule() {} };
    expect(errorsOf(idle, { size: 2, count: 2, skipCost: true } as never).join("\n")).toMatch(
      /rank 0: output\[0\] was never written; it should hold \[0\+1\]/,
    );
  });

  it("a barrier that skips its last round leaves ranks that have not heard from everyone", () => {
    const alg = broken(dissemination, (_ctx, steps) => steps.slice(0, -1));
    expect(errorsOf(alg, { size: 8, count: 0 }).join("\n")).toMatch(
      /rank \d: leaves the barrier without having heard from rank\(s\) [\d, ]+/,
    );
  });

  it("a step without a label is refused (labels are what traces and deadlock messages show)", () => {
    const alg = broken(allreduceRing, (ctx, steps) =>
      steps.map((s, i) => (ctx.rank === 2 && i === 1 ? { ...s, label: "" } : s)),
    );
    expect(errorsOf(alg, { size: 4, count: 4 }).join("\n")).toMatch(/rank 2, step 1 \(''\): the step has no label/);
  });

  it("in place, copying the input onto itself is flagged as a wasted copy", () => {
    const alg = broken(allreduceRing, (ctx, steps) =>
      ctx.inPlace
        ? [step("copy input", [], [copy(region("output", 0, ctx.count), region("input", 0, ctx.count))]), ...steps]
        : steps,
    );
    expect(errorsOf(alg, { size: 2, count: 2, inPlace: true }).join("\n")).toMatch(
      /rank 0, step 0 \('copy input'\): copy out\[0:2\] <- in\[0:2\] copies memory onto itself/,
    );
  });

  it("a byte formula that gives NaN is an error outside alltoallv", () => {
    const alg: Algorithm = { ...allreduceRing, cost: { ...allreduceRing.cost, sentElements: () => Number.NaN } };
    expect(errorsOf(alg, { size: 3, count: 3 })).toEqual([
      "allreduce/ring (n=3, count=3): cost: header's 2(n-1)/n · count · s gives no number (NaN) for n=3, count=3",
    ]);
  });
});
