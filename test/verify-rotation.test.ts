/**
 * The proof by rotation (src/schedule/rotation.ts), which proves calls past 1,024 ranks: at
 * small n it must agree with the full proof (check.ts) on every call it takes, prove the ring's
 * calls it is meant for, and reject every broken schedule the full proof rejects: symmetric
 * mutants (every rank broken alike, which the turn check lets through to the walk) with the same
 * kind of message, and a rank's own mistake as a rank whose steps are not rank 0's turned.
 * Then the same at n = 1,100 through checkAlgorithm, as `cclab verify -n` runs it.
 * Pure: compiles and walks in memory.
 */
import { describe, expect, it } from "vitest";
import { ring as allreduceRing } from "../algorithms/allreduce/ring.js";
import { checkAlgorithm } from "../src/schedule/check.js";
import type { Algorithm, Step, Transfer } from "../src/schedule/dsl.js";
import { allAlgorithms } from "../src/schedule/registry.js";
import { checkRotation, ROTATION_FROM, relabel, turnRanks, turnsIn, unturnedResult } from "../src/schedule/rotation.js";
import { Pieces } from "../src/schedule/runs.js";
import type { Turn } from "../src/schedule/turns.js";
import { makeCall, specOf } from "../src/specs/index.js";
import type { CollectiveCall, RankCall } from "../src/specs/types.js";
import { joinParts, tasksOf } from "../src/verify/proofs.js";
import { broken, shortReceive } from "./support/mutants.js";

const find = (collective: string, name: string): Algorithm => {
  const a = allAlgorithms().find((x) => x.collective === collective && x.name === name);
  if (!a) throw new Error(`${collective}/${name} is not registered`);
  return a;
};

/** Calls the rotation can take at n: counts that split into n equal chunks (all-reduce), any (reduce-scatter). */
function calls(collective: string, n: number): CollectiveCall[] {
  const counts = collective === "allreduce" ? [0, n, 2 * n, 3 * n] : [0, 1, 2, 5];
  const out: CollectiveCall[] = [];
  for (const count of counts)
    for (const inPlace of [false, true])
      for (const op of ["sum", "avg", "max"] as const)
        for (const segment of [1, 2])
          out.push(makeCall({ collective, size: n, count, segment, inPlace, op: { name: op } }));
  return out;
}

const SIZES = [1, 2, 3, 4, 5, 7, 8, 12, 16, 33];

describe("the proof by rotation agrees with the full proof", () => {
  for (const [collective, name, inPlaceToo] of [
    ["allreduce", "ring", true],
    ["allreduce", "segmented_ring", true],
    ["reducescatter", "ring", false],
    ["reducescatter", "pat", false],
  ] as const) {
    it(`${collective}/${name}: every call it takes is proved, as the full proof proves it`, () => {
      const alg = find(collective, name);
      let proved = 0;
      for (const n of SIZES) {
        for (const call of calls(collective, n)) {
          const full = checkAlgorithm(alg, call).errors;
          const rot = checkRotation(alg, call);
          expect(full, JSON.stringify(call)).toEqual([]);
          // Reduce-scatter in place turns its input and not its output: one memory, no turn.
          if (call.inPlace && !inPlaceToo && n > 1 && call.count > 0) {
            expect(rot.errors.join("\n")).toContain("in place the input and output are one memory");
            continue;
          }
          expect(rot.errors, JSON.stringify(call)).toEqual([]);
          // The same cost as the full proof's, for every rank.
          expect(rot.steps).toBe(checkAlgorithm(alg, call).steps);
          expect(rot.perRank.length).toBe(call.size);
          proved++;
        }
      }
      expect(proved).toBeGreaterThan(100);
    });
  }

  it("every registered all-reduce and reduce-scatter: what rotation proves, the full proof proves", () => {
    let both = 0;
    for (const alg of allAlgorithms().filter((a) => a.collective === "allreduce" || a.collective === "reducescatter")) {
      for (const n of [2, 3, 4, 6, 8]) {
        for (const call of calls(alg.collective, n)) {
          if (checkRotation(alg, call).errors.length > 0) continue;
          expect(checkAlgorithm(alg, call).errors, `${alg.name} ${JSON.stringify(call)}`).toEqual([]);
          both++;
        }
      }
    }
    expect(both).toBeGreaterThan(500);
  });

  it("a schedule whose ranks are not one another's turns is refused by name, not proved (recursive doubling)", () => {
    const alg = find("allreduce", "recursive_doubling");
    const call = makeCall({ collective: "allreduce", size: 8, count: 8, segment: 1 });
    expect(checkAlgorithm(alg, call).errors).toEqual([]);
    expect(checkRotation(alg, call).errors.join("\n")).toMatch(
      /^allreduce\/recursive_doubling \(n=8, count=8\): not proved by rotation: rank 1, step 0 \('.*'\) is not rank 0's step 0 turned by 1: send\(0, \S+\) where rank 0's send\(1, \S+\) turned is send\(2, /,
    );
  });

  it("a count that does not split into n equal chunks has no turn, and says so", () => {
    const call = makeCall({ collective: "allreduce", size: 8, count: 11, segment: 1 });
    expect(checkRotation(allreduceRing, call).errors).toEqual([
      "allreduce/ring (n=8, count=11): past 1024 ranks the proof turns rank 0's plan onto every rank, and allreduce at count 11 has no such turn (count must be a multiple of n)",
    ]);
    const gather = makeCall({ collective: "allgather", size: 8, count: 2, segment: 1 });
    expect(checkRotation(find("allgather", "ring"), gather).errors.join("")).toContain(
      "allgather at count 2 has no such turn",
    );
  });
});

/** The ring with every rank's steps edited alike by `edit`. */
const everyRank = (edit: (c: RankCall, steps: Step[]) => Step[]) => broken(allreduceRing, edit, "ring-broken");

/** What a message says is wrong, as a word: both proofs must reject a mutant for the same reason. */
const kindOf = (m: string): string =>
  /deadlock/.test(m)
    ? "deadlock"
    : /race:/.test(m)
      ? "race"
      : /was never written/.test(m)
        ? "unwritten"
        : /holds .* but \w+ needs/.test(m)
          ? "wrong value"
          : /which receives/.test(m)
            ? "sizes differ"
            : "other";

/** Mutants of the ring, every rank alike, and the reason both proofs must give. */
const SYMMETRIC: [string, Algorithm, string][] = [
  ["the last step dropped", everyRank((_c, s) => s.slice(0, -1)), "wrong value"],
  [
    "the first reduction lost",
    everyRank((_c, steps) => {
      let done = false;
      return steps.map((s) => {
        if (done || !s.local.some((l) => l.kind === "reduce")) return s;
        done = true;
        return { ...s, local: [] };
      });
    }),
    "wrong value",
  ],
  ["a receive one element short", shortReceive(allreduceRing, "ring-broken", () => true), "sizes differ"],
  [
    "each step's receive before its send, in a step of its own",
    everyRank((_c, steps) =>
      steps.flatMap((s) => [
        { ...s, transfers: s.transfers.filter((t) => t.kind === "recv") },
        { ...s, transfers: s.transfers.filter((t) => t.kind === "send"), local: [] },
      ]),
    ),
    "deadlock",
  ],
  [
    "the all-gather's receives a chunk back",
    everyRank((c, steps) =>
      steps.map((s, i) =>
        i >= c.size - 1
          ? {
              ...s,
              transfers: s.transfers.map((t) =>
                t.kind === "recv"
                  ? { ...t, region: { ...t.region, offset: (t.region.offset - t.region.count + c.count) % c.count } }
                  : t,
              ),
            }
          : s,
      ),
    ),
    "wrong value",
  ],
  [
    "a send into the chunk being received",
    everyRank((c, steps) =>
      steps.map((s, i) =>
        i === c.size
          ? {
              ...s,
              transfers: s.transfers.map((t) =>
                t.kind === "send"
                  ? { ...t, region: s.transfers.find((u) => u.kind === "recv")?.region ?? t.region }
                  : t,
              ),
            }
          : s,
      ),
    ),
    "race",
  ],
];

describe("broken schedules: rejected by rotation where the full proof rejects them", () => {
  const call = makeCall({ collective: "allreduce", size: 8, count: 16, segment: 1 });
  for (const [what, alg, kind] of SYMMETRIC) {
    it(`every rank alike, ${what}: both reject it, for the same reason (${kind})`, () => {
      const full = checkAlgorithm(alg, call).errors;
      const rot = checkRotation(alg, call).errors;
      expect(kindOf(full[0] ?? "")).toBe(kind);
      expect(rot[0] ?? "").toMatch(/^allreduce\/ring-broken \(n=8, count=16\): .*rank 0/);
      expect(kindOf(rot[0] ?? "")).toBe(kind);
    });
  }

  it("a reduction counted twice and sent on: the element named where it travels", () => {
    const alg = everyRank((_c, steps) => {
      let done = false;
      return steps.map((s) => {
        const r = s.local.find((l) => l.kind === "reduce");
        if (done || !r) return s;
        done = true;
        return { ...s, local: [...s.local, r] };
      });
    });
    expect(checkAlgorithm(alg, call).errors.join("\n")).toMatch(/counted 2 times/);
    expect(checkRotation(alg, call).errors.join("\n")).toMatch(
      /rank 0, step 1 \('.*'\): receives from rank 7 an element that holds \[.*\], a contribution twice or elements of different indices/,
    );
  });

  it("one rank's own mistake: named as the rank whose steps are not rank 0's turned", () => {
    const late = broken(allreduceRing, (c, s) => (c.rank === 5 ? s.slice(0, -1) : s), "ring-broken");
    expect(checkRotation(late, call).errors).toEqual([
      "allreduce/ring-broken (n=8, count=16): not proved by rotation: rank 5 has 13 steps, rank 0 14",
    ]);
    const peer = broken(
      allreduceRing,
      (c, s) =>
        c.rank === 3
          ? s.map((st, i) =>
              i === 4 ? { ...st, transfers: st.transfers.map((t) => ({ ...t, peer: (t.peer + 1) % 8 })) } : st,
            )
          : s,
      "ring-broken",
    );
    expect(checkRotation(peer, call).errors.join("")).toMatch(
      /not proved by rotation: rank 3, step 4 \('.*'\) is not rank 0's step 4 turned by 3: send\(5, \S+\) where rank 0's send\(1, \S+\) turned is send\(4, \S+\)/,
    );
    // A label left out on one rank, where rank 0 has them all.
    const unlabelled = broken(
      allreduceRing,
      (c, s) => (c.rank === 6 ? s.map((st) => ({ ...st, label: "" })) : s),
      "ring-broken",
    );
    expect(checkRotation(unlabelled, call).errors.join("")).toContain("rank 6, step 0 has no label");
  });
});

describe("the rotation's parts, each held to what it must find", () => {
  const call = makeCall({ collective: "allreduce", size: 8, count: 16, segment: 1 });
  const turn = (n: number, a: number, b: number, size: number): Turn => ({
    n,
    by: { input: a, output: b, scratch: 0 },
    size: { input: size, output: size, scratch: 0 },
    scaled: 0,
  });

  it("messages nobody receives, receives nobody sends, channels out of order: what the full proof finds, in the same words", () => {
    // Every rank sends one more message to next in its last step, which no rank receives.
    const extraSend = everyRank((c, steps) =>
      steps.map((s, i) =>
        i === steps.length - 1
          ? {
              ...s,
              transfers: [
                ...s.transfers,
                { ...(s.transfers[0] as Transfer), kind: "send" as const, peer: (c.rank + 1) % c.size },
              ],
            }
          : s,
      ),
    );
    expect(checkRotation(extraSend, call).errors[0]).toMatch(
      /: deadlock under rendezvous semantics: rank 0, step 13 \('.*'\) sends to rank 1 on channel 0, but rank 1 receives only 14 message\(s\) from rank 0 there \(rank 0's from rank 7, turned\)$/,
    );
    expect(kindOf(checkAlgorithm(extraSend, call).errors[0] ?? "")).toBe("deadlock");
    // Every rank receives once more from prev in its last step.
    const extraRecv = everyRank((c, steps) =>
      steps.map((s, i) =>
        i === steps.length - 1
          ? {
              ...s,
              transfers: [
                ...s.transfers,
                {
                  kind: "recv" as const,
                  peer: (c.rank + c.size - 1) % c.size,
                  region: { buf: "output" as const, offset: (2 * c.rank) % c.count, count: 1 },
                },
              ],
            }
          : s,
      ),
    );
    expect(checkRotation(extraRecv, call).errors[0]).toMatch(
      /deadlock under rendezvous semantics: rank 0, step \d+ \('.*'\) waits to receive from rank 7, whose matching send never comes; every rank takes the same steps turned, so every rank waits in step \d+/,
    );
    expect(kindOf(checkAlgorithm(extraRecv, call).errors[0] ?? "")).toMatch(/deadlock|race/);
    // Steps 0 and 1 send on channels 1 and 2 and receive on 2 and 1.
    const chan = (s: Step, send: number, recv: number): Step => ({
      ...s,
      transfers: s.transfers.map((t) => ({ ...t, channel: t.kind === "send" ? send : recv })),
    });
    const crossed = everyRank((_c, steps) =>
      steps.map((s, i) => (i === 0 ? chan(s, 1, 2) : i === 1 ? chan(s, 2, 1) : s)),
    );
    expect(checkRotation(crossed, call).errors).toEqual([
      "allreduce/ring-broken (n=8, count=16): rank 0's message 0 to rank 1 is on channel 1, but rank 1's receive 0 from rank 0 is on channel 2: an engine that keeps one order per pair would pair them wrongly",
    ]);
    expect(checkAlgorithm(crossed, call).errors[0]).toContain(
      "an engine that keeps one order per pair would pair them wrongly",
    );
  });

  it("a schedule every rank gets wrong alike at compile time, and a header whose cost is wrong: reported as the full proof does", () => {
    const noPeer = everyRank((c, steps) =>
      steps.map((s) => ({ ...s, transfers: s.transfers.map((t) => ({ ...t, peer: c.size })) })),
    );
    expect(checkRotation(noPeer, call).errors).toEqual(checkAlgorithm(noPeer, call).errors);
    const cost = {
      ...allreduceRing,
      name: "ring-broken",
      cost: { ...allreduceRing.cost, steps: { text: "2n", value: (n: number) => 2 * n } },
    };
    expect(checkRotation(cost, call).errors).toEqual([
      "allreduce/ring-broken (n=8, count=16): cost: header says 2n = 16 steps, the schedule has 14",
    ]);
    expect(checkRotation(cost, call, { skipCost: true }).errors).toEqual([]);
    const ok = checkRotation(allreduceRing, call);
    expect(ok.perRank).toEqual(checkAlgorithm(allreduceRing, call).perRank);
    expect(ok.sent).toBe(14 * 2);
  });

  it("the spec's result must turn as the buffers do: a result that does not is refused, naming the rank", () => {
    const spec = specOf("allreduce");
    const c = makeCall({ collective: "allreduce", size: 4, count: 8, segment: 1 });
    expect(unturnedResult(spec, c, turn(4, 2, 2, 8))).toBe(-1);
    // Reduce-scatter's blocks move with the input alone.
    const rs = makeCall({ collective: "reducescatter", size: 4, count: 3, segment: 1 });
    expect(
      unturnedResult(specOf("reducescatter"), rs, { ...turn(4, 3, 0, 12), size: { input: 12, output: 3, scratch: 0 } }),
    ).toBe(-1);
    expect(
      unturnedResult(specOf("reducescatter"), rs, { ...turn(4, 3, 1, 12), size: { input: 12, output: 3, scratch: 0 } }),
    ).toBe(1);
    // Turned by other amounts than its own, all-reduce's one block does not come back onto itself.
    expect(unturnedResult(spec, c, turn(4, 2, 1, 8))).toBe(1);
    // An all-gather's blocks (rank q's at q · count) turn with the output: rank r's block q is rank 0's q - r.
    const ag = makeCall({ collective: "allgather", size: 4, count: 2, segment: 1 });
    const agTurn = { ...turn(4, 0, 2, 8), size: { input: 2, output: 8, scratch: 0 } };
    expect(unturnedResult(specOf("allgather"), ag, agTurn)).toBe(-1);
    expect(unturnedResult(specOf("allgather"), ag, { ...agTurn, by: { input: 0, output: 4, scratch: 0 } })).toBe(1);
  });

  it("relabelling: a run that crosses the input's end is split there, leaves stay leaves, rank intervals wrap", () => {
    const stride = 8;
    const t = turn(4, 2, 2, 8);
    const src = new Pieces();
    // Rank 0's own input, elements 4..7 (a leaf), then ranks 2 and 3's partial sum at index 5.
    src.push(4, { id: 0, a: null, ao: 0, b: null, bo: 0, idx: 0, ranks: [0, 1] }, 4);
    src.push(1, { id: -1, a: null, ao: 0, b: null, bo: 0, idx: 5, ranks: [2, 4] }, 0);
    const out = new Pieces();
    expect(relabel(src, 1, t, stride, out)).toBeUndefined();
    // Rank 1 holds its own input 6..9, which wraps to 6, 7, then 0, 1.
    expect(
      Array.from({ length: out.size }, (_, k) => [
        out.len[k],
        out.val[k]?.id,
        out.val[k]?.idx,
        out.val[k]?.ranks,
        out.off[k],
      ]),
    ).toEqual([
      [2, 1 * stride + 6, 6, [1, 2], 0],
      [2, 1 * stride + 0, 0, [1, 2], 0],
      [1, -1, 7, [0, 1, 3, 4], 0],
    ]);
    expect(turnRanks([0, 2, 3, 4], 1, 4)).toEqual([0, 3]);
    expect(turnRanks([0, 4], 3, 4)).toEqual([0, 4]);
    expect(turnRanks([1, 2], 3, 4)).toEqual([0, 1]);
    // A value holding a contribution twice is not relabelled: its cell comes back.
    const bad = new Pieces();
    bad.push(
      1,
      {
        id: -1,
        a: { id: 0, a: null, ao: 0, b: null, bo: 0, idx: 0, ranks: [0, 1] },
        ao: 3,
        b: { id: 0, a: null, ao: 0, b: null, bo: 0, idx: 0, ranks: [0, 1] },
        bo: 3,
        idx: -1,
        ranks: [],
      },
      0,
    );
    expect(relabel(bad, 1, t, stride, out)).toEqual([3, 3]);
  });
});

describe("past 1,024 ranks: checkAlgorithm proves by rotation, and the workers' parts join to its verdict", () => {
  const n = 1100;
  it("the ring at n = 1,100 is proved; its broken twin (one rank stops early) is rejected, rank named", async () => {
    expect(n).toBeGreaterThanOrEqual(ROTATION_FROM);
    const call = makeCall({ collective: "allreduce", size: n, count: n, segment: 2 });
    const ok = checkAlgorithm(allreduceRing, call);
    expect(ok.errors).toEqual([]);
    expect(ok.steps).toBe(2 * (n - 1));
    const { ringEarlyStop } = await import("./fixtures/verify/ring_early_stop.js");
    const errors = checkAlgorithm(ringEarlyStop as Algorithm, call).errors.join("\n");
    expect(errors).toMatch(
      /^allreduce\/ring_early_stop \(n=1100, count=1100\): not proved by rotation: rank 1099 has \d+ steps, rank 0 2198/,
    );
  });

  it("split into a walk and shares of the turns, the parts give what the whole does", () => {
    const call = makeCall({ collective: "allreduce", size: n, count: n, segment: 2 });
    const tasks = tasksOf([call], [0], 3);
    expect(tasks).toEqual([0, 1, 2, 3].map((part) => ({ index: 0, part, of: 3 })));
    const late = broken(allreduceRing, (c, s) => (c.rank === 900 ? s.slice(0, -1) : s), "ring-broken");
    const share = Math.ceil((n - 1) / 3);
    const parts = [
      checkRotation(late, call, { turns: false }).errors,
      turnsIn(late, call, 1, 1 + share),
      turnsIn(late, call, 1 + share, 1 + 2 * share),
      turnsIn(late, call, 1 + 2 * share, 1 + 3 * share),
    ];
    expect(parts[0]).toEqual([]);
    expect(parts[1]).toEqual([]);
    expect(joinParts(parts)).toEqual(checkAlgorithm(late, call).errors);
    expect(joinParts([parts[0], undefined, parts[2], parts[3]])).toBeUndefined();
  });
});
