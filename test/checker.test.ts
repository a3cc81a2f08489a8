/**
 * The static checker must fail where a schedule is wrong: each case here breaks a correct
 * algorithm in one way (a dropped step, a copy for a reduction, a short receive, a racing step,
 * a write to the caller's input, a wrong cost formula, a send-send pair, a lazy barrier, a
 * dataflow dependency the steps order hides, channels out of order) and asserts the checker's
 * message names what broke, where.
 */
import { describe, expect, it } from "vitest";
import { ring as allgatherRing } from "../algorithms/allgather/ring.js";
import { ring as allreduceRing } from "../algorithms/allreduce/ring.js";
import { dissemination } from "../algorithms/barrier/dissemination.js";
import { binomial as reduceBinomial } from "../algorithms/reduce/binomial.js";
import { checkAlgorithm } from "../src/schedule/check.js";
import {
  type Algorithm,
  copy,
  f,
  type LocalOp,
  type Memory,
  recv,
  reduce,
  region,
  type Step,
  send,
  step,
  sub,
} from "../src/schedule/dsl.js";
import { cellText } from "../src/schedule/results.js";
import { makeCall } from "../src/specs/index.js";
import type { CollectiveCall } from "../src/specs/types.js";
import { broken, shortReceive } from "./support/mutants.js";

const call = (alg: Algorithm, c: Partial<CollectiveCall> & { size: number }) =>
  makeCall({ collective: alg.collective, segment: 1, ...c });
const errorsOf = (alg: Algorithm, c: Partial<CollectiveCall> & { size: number }, skipCost = false) =>
  checkAlgorithm(alg, call(alg, c), { skipCost }).errors;

describe("the checker accepts what is right", () => {
  it("ring all-reduce, n = 4, count 6, out of place and in place", () => {
    expect(errorsOf(allreduceRing, { size: 4, count: 6 })).toEqual([]);
    expect(errorsOf(allreduceRing, { size: 4, count: 6, inPlace: true })).toEqual([]);
  });
});

describe("the checker rejects what is wrong", () => {
  it("a rank that skips its last step leaves its peer waiting: deadlock, naming rank and step", () => {
    const alg = broken(allreduceRing, (c, steps) => (c.rank === 2 ? steps.slice(0, -1) : steps));
    const errors = errorsOf(alg, { size: 4, count: 8 });
    expect(errors.join("\n")).toMatch(
      /^allreduce\/ring-broken \(n=4, count=8\): deadlock under rendezvous semantics: .*rank 3, step 5 \('recvCopySend chunk 0'\) waits in send\(to 0, out\[2:4\]\), recv\(from 2, out\[0:2\]\)/,
    );
  });

  it("a copy where a reduction belongs loses contributions, and the message lists which", () => {
    let done = false;
    const alg = broken(allreduceRing, (c, steps) =>
      steps.map((s) => {
        const r = s.local.find((l) => l.kind === "reduce");
        if (c.rank !== 1 || done || !r || r.kind !== "reduce") return s;
        done = true;
        return { ...s, local: [copy(r.dst, r.src)] };
      }),
    );
    const errors = errorsOf(alg, { size: 4, count: 4 }).join("\n");
    expect(errors).toMatch(/output\[\d\] holds \[[0-9+]+\] but allreduce needs \[0\+1\+2\+3\]/);
    expect(errors).toMatch(/missing/);
  });

  it("a reduction done twice counts a contribution twice", () => {
    let done = false;
    const alg = broken(allreduceRing, (c, steps) =>
      steps.map((s) => {
        const r = s.local.find((l) => l.kind === "reduce");
        if (c.rank !== 0 || done || !r || r.kind !== "reduce") return s;
        done = true;
        // Reduce the received chunk into the result a second time: the ring receives it where
        // the sum goes, so that adds the partial sum (rank 3's and rank 0's elements) again.
        return { ...s, local: [...s.local, { kind: "reduce" as const, dst: r.dst, src: r.src }] };
      }),
    );
    expect(errorsOf(alg, { size: 4, count: 4 }).join("\n")).toContain(
      "rank 0: output[2] holds [0+0+1+2+3+3] but allreduce needs [0+1+2+3] (rank 0's element 2 counted 2 times; rank 3's element 2 counted 2 times)",
    );
  });

  it("a receive shorter than the matching send is a size mismatch naming both ranks and sizes", () => {
    const alg = shortReceive(allreduceRing);
    const errors = errorsOf(alg, { size: 4, count: 8 }).join("\n");
    expect(errors).toMatch(/rank 0, step \d+ .* sends \S+ \(2 elements\) to rank 1, which receives \S+ \(1 elements\)/);
  });

  it("the same short receive at 64 ranks: the reads it leaves unwritten, on rank after rank, do not crowd out the size mismatch that causes them", () => {
    const alg = shortReceive(allreduceRing);
    const errors = errorsOf(alg, { size: 64, count: 67 });
    expect(errors.filter((e) => /reads an unwritten element/.test(e)).length).toBeGreaterThan(0);
    expect(errors.join("\n")).toMatch(
      /rank 0, step \d+ .* sends \S+ \((\d+) elements\) to rank 1, which receives \S+ \((?!\1)\d+ elements\)/,
    );
  });

  it("a receive into memory the same step sends from is a race", () => {
    const alg = broken(allreduceRing, (c, steps) =>
      steps.map((s, i) => {
        const snd = s.transfers.find((t) => t.kind === "send");
        if (c.rank !== 0 || i !== 1 || !snd) return s;
        return { ...s, transfers: s.transfers.map((t) => (t.kind === "recv" ? { ...t, region: snd.region } : t)) };
      }),
    );
    expect(errorsOf(alg, { size: 4, count: 8 }).join("\n")).toMatch(/rank 0, step 1 .*race: send out\[\S+\] and recv/);
  });

  it("a send after a receive into the same memory in one step is a race too (the order within a step is no order)", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      name: "swap-in-place",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        yield step("copy input", [], [copy(mem.output, mem.input)]);
        yield step("swap", [recv(peer, mem.output), send(peer, mem.output)]);
      },
    };
    expect(errorsOf(alg, { size: 2, count: 2 }, true).slice(0, 2)).toEqual([
      "allreduce/swap-in-place (n=2, count=2): rank 0, step 1 ('swap'): race: recv out[0:2] and send out[0:2] in one step share memory",
      "allreduce/swap-in-place (n=2, count=2): rank 1, step 1 ('swap'): race: recv out[0:2] and send out[0:2] in one step share memory",
    ]);
  });

  it("a receive races with a send that is the plan's very first operation", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      name: "first-race",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        yield step("swap", [send(peer, mem.input), recv(peer, mem.input)]);
      },
    };
    expect(errorsOf(alg, { size: 2, count: 2 }, true)[0]).toBe(
      "allreduce/first-race (n=2, count=2): rank 0, step 0 ('swap'): race: send in[0:2] and recv in[0:2] in one step share memory",
    );
  });

  it("a receive is held against the furthest region before it, and two receives race too; sends alone never do", () => {
    const steps = (c: { rank: number; size: number }, mem: Memory): Step[] => {
      const next = (c.rank + 1) % c.size;
      const prev = (c.rank + c.size - 1) % c.size;
      return [
        step("copy input", [], [copy(mem.output, mem.input)]),
        // out[0:4] is sent whole and in part; the receive into out[3:4] overlaps only the first.
        step("overlap", [
          send(next, sub(mem.output, 0, 4)),
          send(next, sub(mem.output, 1, 1)),
          recv(prev, sub(mem.output, 3, 1)),
        ]),
      ];
    };
    const furthest: Algorithm = {
      ...allreduceRing,
      name: "furthest",
      *schedule(c, mem) {
        yield* steps(c, mem);
      },
    };
    // The peers' counts do not pair (5 elements sent, 1 received): only the lint's findings matter here.
    const lint = (alg: Algorithm, size: number, count: number) =>
      errorsOf(alg, { size, count }, true).filter((e) => / race: /.test(e));
    expect(lint(furthest, 2, 4)).toEqual([
      "allreduce/furthest (n=2, count=4): rank 0, step 1 ('overlap'): race: send out[0:4] and recv out[3] in one step share memory",
      "allreduce/furthest (n=2, count=4): rank 1, step 1 ('overlap'): race: send out[0:4] and recv out[3] in one step share memory",
    ]);
    const twoRecvs: Algorithm = {
      ...allreduceRing,
      name: "two-receives",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        yield step("both", [
          send(peer, mem.input),
          send(peer, mem.input),
          recv(peer, sub(mem.output, 0, 2)),
          recv(peer, sub(mem.output, 1, 2)),
        ]);
      },
    };
    expect(lint(twoRecvs, 2, 3)[0]).toBe(
      "allreduce/two-receives (n=2, count=3): rank 0, step 0 ('both'): race: recv out[0:2] and recv out[1:3] in one step share memory",
    );
    // A receive placed before the send it overlaps: named in program order, on the later one.
    const backwards: Algorithm = {
      ...allreduceRing,
      name: "backwards",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        yield step("copy input", [], [copy(mem.output, mem.input)]);
        yield step("late", [send(peer, sub(mem.output, 2, 2)), recv(peer, sub(mem.output, 0, 3))]);
      },
    };
    expect(lint(backwards, 2, 4)[0]).toBe(
      "allreduce/backwards (n=2, count=4): rank 0, step 1 ('late'): race: send out[2:4] and recv out[0:3] in one step share memory",
    );
    // Two sends of one region beside a receive elsewhere: reads do not race.
    const reads: Algorithm = {
      ...allreduceRing,
      name: "reads",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        yield step("copy input", [], [copy(mem.output, mem.input)]);
        yield step("twice", [send(peer, mem.input), send(peer, mem.input), recv(peer, sub(mem.output, 0, 1))]);
      },
    };
    expect(lint(reads, 2, 2)).toEqual([]);
  });

  it("in a step of several transfers, exactly the racing pairs are named, the later one's first, and nothing else", () => {
    /** Every rank runs `transfers(peer, mem)` as one step after copying its input to its output. */
    const oneStep = (name: string, transfers: (peer: number, mem: Memory) => Step["transfers"]): Algorithm => ({
      ...allreduceRing,
      name,
      *schedule(c, mem) {
        yield step("copy input", [], [copy(mem.output, mem.input)]);
        yield step("many", transfers(1 - c.rank, mem));
      },
    });
    const races = (alg: Algorithm, count: number) =>
      errorsOf(alg, { size: 2, count }, true)
        .filter((e) => / race: /.test(e) && /rank 0,/.test(e))
        .map((e) => e.replace(/^.*race: /, ""));
    const at = (mem: Memory, from: number, count: number) => sub(mem.output, from, count);
    // A send elsewhere beside a racing pair: only the pair (a receive is held against the furthest
    // end before it, a region that merely touches another does not overlap it).
    expect(
      races(
        oneStep("beside", (p, m) => [
          send(p, at(m, 0, 4)),
          send(p, at(m, 5, 1)),
          recv(p, at(m, 4, 1)),
          recv(p, at(m, 3, 1)),
        ]),
        8,
      ),
    ).toEqual(["send out[0:4] and recv out[3] in one step share memory"]);
    // The furthest end moves on to a later, longer region: the receive overlaps only that one.
    expect(
      races(
        oneStep("further", (p, m) => [send(p, at(m, 0, 2)), send(p, at(m, 1, 4)), recv(p, at(m, 4, 1))]),
        8,
      ),
    ).toEqual(["send out[1:5] and recv out[4] in one step share memory"]);
    // A send after a receive it does not reach, then one it does.
    expect(
      races(
        oneStep("after", (p, m) => [recv(p, at(m, 0, 1)), send(p, at(m, 5, 1)), send(p, at(m, 0, 1))]),
        8,
      ),
    ).toEqual(["recv out[0] and send out[0] in one step share memory"]);
    // Two races: named in the order of their later transfer.
    expect(
      races(
        oneStep("two", (p, m) => [
          recv(p, at(m, 0, 2)),
          recv(p, at(m, 10, 2)),
          send(p, at(m, 11, 1)),
          send(p, at(m, 1, 1)),
        ]),
        12,
      ),
    ).toEqual([
      "recv out[10:12] and send out[11] in one step share memory",
      "recv out[0:2] and send out[1] in one step share memory",
    ]);
    // A step past the pairwise shortcut's reach (more than 16 transfers) is swept.
    expect(
      races(
        oneStep("wide", (p, m) => [
          ...Array.from({ length: 17 }, () => send(p, sub(m.input, 0, 1))),
          recv(p, at(m, 0, 2)),
          send(p, at(m, 1, 1)),
        ]),
        4,
      ),
    ).toEqual(["recv out[0:2] and send out[1] in one step share memory"]);
    // The same offsets in the input and the output are different memory: only the output's pair races.
    expect(
      races(
        oneStep("memories", (p, m) => [send(p, sub(m.input, 0, 2)), recv(p, at(m, 0, 2)), send(p, at(m, 0, 1))]),
        4,
      ),
    ).toEqual(["recv out[0:2] and send out[0] in one step share memory"]);
  });

  it("a step without a label at all (a schedule in plain JavaScript) is refused, not a crash", () => {
    const alg = broken(
      allreduceRing,
      (_c, steps) => steps.map(({ label: _, ...rest }) => rest as unknown as Step),
      "unnamed",
    );
    expect(errorsOf(alg, { size: 2, count: 2 })[0]).toBe(
      "allreduce/unnamed (n=2, count=2): rank 0, step 0 (''): the step has no label",
    );
  });

  it("a channel past 2^31 - 1 is refused (it would wrap onto another)", () => {
    const alg = broken(
      allreduceRing,
      (_c, steps) => steps.map((s) => ({ ...s, transfers: s.transfers.map((t) => ({ ...t, channel: 2 ** 32 })) })),
      "wide",
    );
    expect(errorsOf(alg, { size: 2, count: 2 })).toEqual([
      expect.stringMatching(
        /^allreduce\/wide, rank 0, step \d+ \('[^']+'\): send channel 4294967296 is not an integer from 0 to 2147483647$/,
      ),
    ]);
  });

  it("out of place, writing the caller's input is refused", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      name: "scribbler",
      *schedule(c, mem) {
        yield* allreduceRing.schedule(c, mem);
        if (c.rank === 3) yield step("scribble", [], [copy({ ...mem.input, count: 1 }, { ...mem.output, count: 1 })]);
      },
    };
    expect(errorsOf(alg, { size: 4, count: 4 }).join("\n")).toMatch(
      /rank 3, step \d+ \('scribble'\): writes in\[0\], which is the caller's input/,
    );
  });

  it("a header cost that does not match the schedule fails, quoting the formula", () => {
    const alg: Algorithm = { ...allreduceRing, cost: { ...allreduceRing.cost, steps: f("n-1", (n) => n - 1) } };
    expect(errorsOf(alg, { size: 4, count: 8 })).toEqual([
      "allreduce/ring (n=4, count=8): cost: header says n-1 = 3 steps, the schedule has 6",
    ]);
  });

  it("where the formulas are only bounds, a schedule above them still fails", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      cost: { ...allreduceRing.cost, sent: f("count", (_n, count) => count), exact: () => false },
    };
    expect(errorsOf(alg, { size: 4, count: 8 }).join("\n")).toMatch(
      /cost: header says count = 8 elements sent per rank \(max\) at most, the schedule sends 12/,
    );
  });

  it("send-send on two ranks (seed 003's deadlock) deadlocks under rendezvous semantics", () => {
    const sendSend: Algorithm = {
      ...allreduceRing,
      name: "send-send",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        yield step("send first", [send(peer, mem.input)]);
        yield step("then recv", [recv(peer, mem.output)]);
      },
    };
    const errors = errorsOf(sendSend, { size: 2, count: 1 }).join("\n");
    expect(errors).toContain("deadlock under rendezvous semantics");
    expect(errors).toContain("rank 0, step 0 ('send first') waits in send(to 1, in[0])");
    expect(errors).toContain("rank 1, step 0 ('send first') waits in send(to 0, in[0])");
  });

  it("an output nobody writes is reported as never written", () => {
    const idle: Algorithm = { ...allreduceRing, name: "idle", *schedule() {} };
    expect(errorsOf(idle, { size: 2, count: 2 }, true).join("\n")).toMatch(
      /rank 0: output\[0\] was never written; it should hold \[0\+1\]/,
    );
  });

  it("a barrier that skips its last round leaves ranks that have not heard from everyone", () => {
    const alg = broken(dissemination, (_c, steps) => steps.slice(0, -1));
    expect(errorsOf(alg, { size: 8 }).join("\n")).toMatch(
      /rank \d: leaves the barrier without having heard from rank\(s\) [\d, ]+/,
    );
  });

  it("a barrier whose signals do not wait for what was heard passes in steps order but not as dataflow", () => {
    // Each round's token goes out from a fixed slot: in steps order the rounds still follow one
    // another, but nothing makes round k's send wait for round k-1's receive.
    const lazy: Algorithm = {
      ...dissemination,
      name: "lazy",
      *schedule({ rank, size }, mem) {
        const token = mem.scratch(1);
        const heard = mem.scratch(1);
        for (let d = 1; d < size; d <<= 1) {
          yield step(`signal ${(rank + d) % size}`, [
            send((rank + d) % size, token),
            recv((rank - d + size) % size, heard),
          ]);
        }
      },
    };
    expect(errorsOf(lazy, { size: 6 }).join("\n")).toMatch(
      /dataflow: rank \d: leaves the barrier without having heard from rank\(s\)/,
    );
  });

  it("sends and receives whose channels come in different orders between two ranks are refused", () => {
    const alg = broken(allreduceRing, (c, steps) =>
      steps.map((s, i) =>
        c.rank === 0 && i === 0
          ? { ...s, transfers: s.transfers.map((t) => (t.kind === "send" ? { ...t, channel: 1 } : t)) }
          : s,
      ),
    );
    expect(errorsOf(alg, { size: 2, count: 2 }).join("\n")).toMatch(
      /rank 0's message 0 to rank 1 is on channel 1, but rank 1's receive 0 from rank 0 is on channel 0/,
    );
    // The receive's side alone on another channel: refused by the same rule, not left to deadlock.
    const recvSide = broken(allreduceRing, (c, steps) =>
      steps.map((s, i) =>
        c.rank === 1 && i === 0
          ? { ...s, transfers: s.transfers.map((t) => (t.kind === "recv" ? { ...t, channel: 1 } : t)) }
          : s,
      ),
    );
    expect(errorsOf(recvSide, { size: 2, count: 2 })[0]).toMatch(
      /rank 0's message 0 to rank 1 is on channel 0, but rank 1's receive 0 from rank 0 is on channel 1: an engine that keeps one order per pair would pair them wrongly$/,
    );
  });

  it("a step without a label is refused (labels are what traces and deadlock messages show)", () => {
    const alg = broken(allreduceRing, (c, steps) =>
      steps.map((s, i) => (c.rank === 2 && i === 1 ? { ...s, label: "" } : s)),
    );
    expect(errorsOf(alg, { size: 4, count: 4 }).join("\n")).toMatch(/rank 2, step 1 \(''\): the step has no label/);
  });

  it("in place, copying the input onto itself is flagged as a wasted copy", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      name: "self-copy",
      *schedule(c, mem) {
        yield step("copy input", [], [copy(mem.output, mem.input)]);
        yield* allreduceRing.schedule(c, mem);
      },
    };
    expect(errorsOf(alg, { size: 2, count: 2, inPlace: true }).join("\n")).toMatch(
      /rank 0, step 0 \('copy input'\): copy out\[0:2\] <- out\[0:2\] copies memory onto itself/,
    );
  });

  it("a copy whose source and destination overlap (in place, through the aliasing) is refused", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      name: "shifted-copy",
      *schedule(c, mem) {
        // In place, input and output are one memory: in[0:3] -> out[1:4] overlaps at [1:3].
        yield step("shift", [], [copy(region("output", 1, 3), region("input", 0, 3))]);
        yield* allreduceRing.schedule(c, mem);
      },
    };
    expect(errorsOf(alg, { size: 2, count: 4, inPlace: true }).join("\n")).toMatch(
      /rank 0, step 0 \('shift'\): copy out\[1:4\] <- in\[0:3\] overlaps itself/,
    );
  });

  it("a byte formula that gives NaN is an error outside alltoallv", () => {
    const alg: Algorithm = { ...allreduceRing, cost: { ...allreduceRing.cost, sent: f("?", () => Number.NaN) } };
    expect(errorsOf(alg, { size: 3, count: 3 })).toEqual([
      "allreduce/ring (n=3, count=3): cost: header's ? gives no number (NaN) for n=3, count=3",
    ]);
  });
});

// The result check compares each output run's value with the spec, not only that it was written:
// one rank's output ends with a local step that puts a well-formed but wrong value somewhere.
describe("the checker compares every output value with the spec", () => {
  const ending = (alg: Algorithm, rank: number, ...local: LocalOp[]) =>
    broken(alg, (c, steps) => (c.rank === rank ? [...steps, step("tamper", [], local)] : steps));
  const out = (offset: number, count: number) => region("output", offset, count);

  it("an all-gather chunk holding another rank's chunk", () => {
    // n = 4, count 2: rank r's chunk is out[2r : 2r+2]; rank 0 overwrites rank 2's with rank 1's.
    const alg = ending(allgatherRing, 0, copy(out(4, 2), out(2, 2)));
    expect(errorsOf(alg, { size: 4, count: 2 }, true)).toEqual([
      "allgather/ring-broken (n=4, count=2): rank 0: output[4] holds [1] but allgather needs [2] (rank 1's element 0 does not belong; rank 2's element 0 is missing)",
    ]);
  });

  it("an all-gather chunk holding its own rank's elements one place along", () => {
    const alg = ending(allgatherRing, 3, copy(out(2, 1), out(3, 1)));
    expect(errorsOf(alg, { size: 4, count: 2 }, true)).toEqual([
      "allgather/ring-broken (n=4, count=2): rank 3: output[2] holds [1:1] but allgather needs [1] (rank 1's element 1 does not belong; rank 1's element 0 is missing)",
    ]);
  });

  it("an all-gather element holding a reduction, even one seen at the offset its leaf would have", () => {
    // Rank 1's chunk out[2:4] becomes its join with rank 3's (a value of no one rank: id -1, one
    // run of two elements); out[0] then takes the join's element at offset 1, where a leaf of
    // id -1 would be contribution -1 + 1 = 0, rank 0's element 0.
    const alg = ending(allgatherRing, 0, reduce(out(2, 2), out(6, 2)), copy(out(0, 1), out(3, 1)));
    expect(errorsOf(alg, { size: 4, count: 2 }, true).join("\n")).toContain(
      "rank 0: output[0] holds [1:1+3:1] but allgather needs [0] (rank 1's element 1 does not belong; rank 3's element 1 does not belong; rank 0's element 0 is missing)",
    );
  });

  it("an all-reduce element holding the full sum of another index", () => {
    const alg = ending(allreduceRing, 2, copy(out(0, 1), out(1, 1)));
    expect(errorsOf(alg, { size: 4, count: 4 }, true)).toEqual([
      "allreduce/ring-broken (n=4, count=4): rank 2: output[0] holds [0:1+1:1+2:1+3:1] but allreduce needs [0+1+2+3] (rank 0's element 1 does not belong; rank 1's element 1 does not belong; rank 2's element 1 does not belong; rank 3's element 1 does not belong; rank 0's element 0 is missing; rank 1's element 0 is missing; and 2 more)",
    ]);
  });

  it("an all-reduce result missing the first rank's contribution, or the last one's", () => {
    const two = (name: string, edit: (peer: number) => Step): Algorithm => ({
      ...allreduceRing,
      name,
      *schedule(c) {
        yield edit(1 - c.rank);
      },
    });
    // Each rank receives its peer's input as the result: rank 0 holds ranks 1..1, not 0..1.
    const peerOnly = two("peer-only", (peer) =>
      step("swap", [send(peer, region("input", 0, 2)), recv(peer, out(0, 2))]),
    );
    expect(errorsOf(peerOnly, { size: 2, count: 2 }, true)).toEqual([
      "allreduce/peer-only (n=2, count=2): rank 0: output[0] holds [1] but allreduce needs [0+1] (rank 0's element 0 is missing)",
    ]);
    // Each rank keeps its own input: rank 0 holds ranks 0..0, not 0..1.
    const ownOnly = two("own-only", () => step("keep", [], [copy(out(0, 2), region("input", 0, 2))]));
    expect(errorsOf(ownOnly, { size: 2, count: 2 }, true)).toEqual([
      "allreduce/own-only (n=2, count=2): rank 0: output[0] holds [0] but allreduce needs [0+1] (rank 1's element 0 is missing)",
    ]);
  });
});

describe("the checker's report and the text of its messages", () => {
  it("reports the communication steps and elements sent, per rank and at most: ring all-reduce, n = 4, count 8", () => {
    const r = checkAlgorithm(allreduceRing, call(allreduceRing, { size: 4, count: 8 }));
    expect(r).toMatchObject({ algorithm: "allreduce/ring", errors: [], steps: 6, sent: 12 });
    expect(r.perRank).toEqual(Array.from({ length: 4 }, () => ({ steps: 6, sent: 12 })));
  });

  it("keeps the first 8 findings of a check: 8 ranks whose 14 steps have no label give 8 messages", () => {
    const alg = broken(allreduceRing, (_c, steps) => steps.map((s) => ({ ...s, label: "" })), "unlabelled");
    const errors = errorsOf(alg, { size: 8, count: 8 });
    expect(errors).toHaveLength(8);
    expect(errors[0]).toBe("allreduce/unlabelled (n=8, count=8): rank 0, step 0 (''): the step has no label");
    expect(errors[7]).toBe("allreduce/unlabelled (n=8, count=8): rank 0, step 7 (''): the step has no label");
  });

  it("names the root and in place in every message", () => {
    const alg: Algorithm = { ...reduceBinomial, cost: { ...reduceBinomial.cost, steps: f("0", () => 0) } };
    expect(errorsOf(alg, { size: 4, count: 4, root: 2, inPlace: true })).toEqual([
      "reduce/binomial (n=4, count=4, root=2, in place): cost: header says 0 = 0 steps, the schedule has 2",
    ]);
  });

  it("where the formulas are exact, a header above the schedule fails too; skipCost and n = 1 leave the header alone", () => {
    const alg: Algorithm = { ...allreduceRing, cost: { ...allreduceRing.cost, steps: f("2n", (n) => 2 * n) } };
    expect(errorsOf(alg, { size: 4, count: 8 })).toEqual([
      "allreduce/ring (n=4, count=8): cost: header says 2n = 8 steps, the schedule has 6",
    ]);
    expect(errorsOf(alg, { size: 4, count: 8 }, true)).toEqual([]);
    expect(errorsOf(alg, { size: 1, count: 8 })).toEqual([]);
  });

  it("a deadlock of more ranks than the message lists ends the list with '...'", () => {
    // Every rank sends to the next before it receives from the one before: all 8 wait in send.
    const chain: Algorithm = {
      ...allreduceRing,
      name: "send-first",
      *schedule(c, mem) {
        yield step("send on", [send((c.rank + 1) % c.size, mem.input)]);
        yield step("receive", [recv((c.rank + c.size - 1) % c.size, mem.output)]);
      },
    };
    const [error] = errorsOf(chain, { size: 8, count: 1 }, true);
    expect(error).toMatch(/^allreduce\/send-first \(n=8, count=1\): deadlock under rendezvous semantics: /);
    expect(error?.split("; ")).toHaveLength(7);
    expect(error).toMatch(/rank 5, step 0 \('send on'\) waits in send\(to 6, in\[0\]\); \.\.\.$/);
    // Six stuck ranks are all listed, and nothing is left to elide.
    const [six] = errorsOf(chain, { size: 6, count: 1 }, true);
    expect(six?.split("; ")).toHaveLength(6);
    expect(six).toMatch(/rank 5, step 0 \('send on'\) waits in send\(to 0, in\[0\]\)$/);
    const [two] = errorsOf(chain, { size: 2, count: 1 }, true);
    expect(two).toMatch(/rank 1, step 0 \('send on'\) waits in send\(to 0, in\[0\]\)$/);
  });
});

describe("the checker's other findings, word for word", () => {
  it("a peer that is not a rank is a structural error, the only one reported, with an empty report", () => {
    const alg: Algorithm = {
      ...allreduceRing,
      name: "off-the-end",
      *schedule(c, mem) {
        yield step("too far", [send(c.size, mem.input)]);
      },
    };
    const r = checkAlgorithm(alg, call(alg, { size: 2, count: 2 }));
    expect(r.errors).toEqual(["allreduce/off-the-end, rank 0, step 0 ('too far'): send peer 2 is not a rank of 2"]);
    expect(r).toMatchObject({ steps: 0, sent: 0, perRank: [] });
  });

  it("a barrier that does nothing: every rank is named with every rank it has not heard from, rank 0 included", () => {
    const silent: Algorithm = { ...dissemination, name: "silent", *schedule() {} };
    expect(errorsOf(silent, { size: 3 })).toEqual([
      "barrier/silent (n=3, count=0): dataflow: rank 0: leaves the barrier without having heard from rank(s) 1, 2",
      "barrier/silent (n=3, count=0): dataflow: rank 1: leaves the barrier without having heard from rank(s) 0, 2",
      "barrier/silent (n=3, count=0): dataflow: rank 2: leaves the barrier without having heard from rank(s) 0, 1",
    ]);
  });

  it("a label of blanks is no label", () => {
    const alg = broken(allreduceRing, (_c, steps) => steps.map((s) => ({ ...s, label: "  " })), "blank");
    expect(errorsOf(alg, { size: 2, count: 2 })[0]).toBe(
      "allreduce/blank (n=2, count=2): rank 0, step 0 ('  '): the step has no label",
    );
  });

  it("an output left unwritten part way through a block names the element and what it should hold", () => {
    // An all-gather of 3 elements a rank that sends only the first 2: output[5], rank 1's element
    // 2, stays unwritten on rank 0.
    const short: Algorithm = {
      ...allgatherRing,
      name: "short",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        // (The executor's prologue has put the rank's input in its chunk of the output.)
        yield step("swap", [send(peer, { ...mem.input, count: 2 }), recv(peer, region("output", 3 * peer, 2))]);
      },
    };
    expect(errorsOf(short, { size: 2, count: 3 }, true)).toEqual([
      "allgather/short (n=2, count=3): rank 0: output[5] was never written; it should hold [1]",
    ]);
    // Two ranks, four elements: each sums only elements 0..1, so output[2] and output[3] stay unwritten.
    const half: Algorithm = {
      ...allreduceRing,
      name: "half",
      *schedule(c, mem) {
        const peer = 1 - c.rank;
        const lo = (r: typeof mem.input) => ({ ...r, count: 2 });
        const got = mem.scratch(2);
        yield step("copy input", [], [copy(lo(mem.output), lo(mem.input))]);
        yield step("swap", [send(peer, lo(mem.input)), recv(peer, got)], [reduce(lo(mem.output), got)]);
      },
    };
    expect(errorsOf(half, { size: 2, count: 4 }, true)).toEqual([
      "allreduce/half (n=2, count=4): rank 0: output[2] was never written; it should hold [0+1]",
    ]);
  });

  it("a difference of exactly six notes lists them all, without 'and 0 more'", () => {
    // An all-reduce at n = 3 whose element 0 holds element 1's full sum: 3 contributions that do
    // not belong and 3 missing.
    const alg = broken(allreduceRing, (c, steps) =>
      c.rank === 0 ? [...steps, step("tamper", [], [copy(region("output", 0, 1), region("output", 1, 1))])] : steps,
    );
    expect(errorsOf(alg, { size: 3, count: 3 }, true)).toEqual([
      "allreduce/ring-broken (n=3, count=3): rank 0: output[0] holds [0:1+1:1+2:1] but allreduce needs [0+1+2] (rank 0's element 1 does not belong; rank 1's element 1 does not belong; rank 2's element 1 does not belong; rank 0's element 0 is missing; rank 1's element 0 is missing; rank 2's element 0 is missing)",
    ]);
  });
});

describe("cellText, a cell's contributions as messages write them", () => {
  it("writes ranks at the index asked for, rank:index elsewhere, sorted, and '.' for nothing", () => {
    expect(cellText(null, 4)).toBe(".");
    expect(cellText([9, 1, 5], 4, 1)).toBe("[0+1+2]");
    expect(cellText([6, 1], 4, 1)).toBe("[0+1:2]");
    expect(cellText([6, 1], 4)).toBe("[0+1]");
  });

  it("shortens a run of more than 8 ranks in a row at one index to lo..hi, and only such a run", () => {
    const ids = (ranks: number[]) => ranks.map((r) => r * 3 + 2);
    expect(cellText(ids([0, 1, 2, 3, 4, 5, 6, 7]), 3, 2)).toBe("[0+1+2+3+4+5+6+7]");
    expect(cellText(ids([0, 1, 2, 3, 4, 5, 6, 7, 8]), 3, 2)).toBe("[0..8]");
    expect(cellText(ids([11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12]), 3, 2)).toBe("[0..9+11+12]");
    // One stride apart is one rank apart at one index: 2 and 3 apart are not a run.
    expect(cellText([0, 2, 4, 6, 8, 10, 12, 14, 16], 3, 0)).toBe("[0+0:2+1:1+2+2:2+3:1+4+4:2+5:1]");
  });
});
