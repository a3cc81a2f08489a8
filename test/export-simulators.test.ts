/**
 * GOAL and Chakra export (src/export, `cclab export goal|chakra`): every registered algorithm's
 * schedule, written and read back, is the same schedule (the same operations per rank in order,
 * the same dependencies, every send met by one receive of its size) at n up to 64; the readers
 * refuse files that are not a cclab schedule, naming the file and the line or node; a file changed
 * by one tag, size or dependency reads back as a different schedule. May write only under a
 * temporary directory of its own.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseChakra, toChakra } from "../src/export/chakra.js";
import { parseGoal, toGoal } from "../src/export/goal.js";
import { checkMatching, exportCall, type Program, programDiff, programOf } from "../src/export/program.js";
import { allAlgorithms, findAlgorithm } from "../src/schedule/registry.js";

const SIZES = [1, 2, 3, 4, 5, 7, 8, 12, 16, 33, 64];
const dir = mkdtempSync(join(tmpdir(), "cclab-export-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function programFor(collective: string, name: string, n: number, bytes: number, gamma = 0): Program {
  const alg = findAlgorithm(collective, name, { op: "test" });
  const { call } = exportCall(alg, n, bytes);
  return programOf(alg, call, { gamma });
}

const chakraBack = (p: Program): Program => ({
  ...p,
  ranks: p.ranks.map((_, r) => parseChakra(toChakra(p, r), `t.${r}.et`, r).ops),
});

describe("every registered algorithm reads back to the same schedule", () => {
  it.each(allAlgorithms().map((a) => [`${a.collective}/${a.name}`, a.collective, a.name] as const))(
    "%s",
    (_id, collective, name) => {
      let checked = 0;
      for (const n of SIZES) {
        // 3 KiB + 4 B: chunks of unequal, non-empty sizes at every n here; gamma gives calc a time.
        let p: Program;
        try {
          p = programFor(collective, name, n, 3 * 1024 + 4 * n, 0.0007);
        } catch (e) {
          // An algorithm outside its domain at this n (a power-of-two-only schedule, say) says so.
          expect((e as Error).message).toMatch(/rank|power|domain|size|n =/i);
          continue;
        }
        checkMatching(p, "schedule");
        const goal = parseGoal(toGoal(p), "t.goal");
        expect(programDiff(p, goal, "t.goal", false)).toBeUndefined();
        checkMatching(goal, "t.goal");
        expect(programDiff(p, chakraBack(p), "t.*.et")).toBeUndefined();
        checked++;
      }
      expect(checked).toBeGreaterThan(3);
    },
  );
});

describe("a changed file is a different schedule", () => {
  const p = programFor("allreduce", "ring", 4, 1024, 0.001);
  const text = toGoal(p);
  it("a tag", () => {
    const changed = text.replace("send 256b to 1 tag 1\n", "send 256b to 1 tag 9\n");
    expect(changed).not.toBe(text);
    const back = parseGoal(changed, "x.goal");
    expect(programDiff(p, back, "x.goal", false)).toMatch(/rank 0, operation \d+: x.goal has send 256 B to 1 tag 9/);
    expect(() => checkMatching(back, "x.goal")).toThrow(/rank 1 receives tag 1 from rank 0, which never sends it/);
  });
  it("a size", () => {
    const back = parseGoal(text.replace("recv 256b from 3 tag 0", "recv 255b from 3 tag 0"), "x.goal");
    expect(programDiff(p, back, "x.goal", false)).toMatch(/rank 0, operation 2: x.goal has recv 255 B from 3 tag 0/);
    expect(() => checkMatching(back, "x.goal")).toThrow(
      /rank 0 receives 255 B with tag 0 from rank 3, which sends 256 B/,
    );
  });
  it("a dependency", () => {
    const back = parseGoal(text.replace("l3 requires l2\n", ""), "x.goal");
    expect(programDiff(p, back, "x.goal", false)).toMatch(
      /rank 0, operation 3: x.goal waits for \[\], the schedule for \[1\]/,
    );
  });
  it("a calc time", () => {
    expect(text).toMatch(/calc 256\n/); // 256 B at 0.001 us/B
    const back = parseGoal(text.replace(/calc 256\n/, "calc 1\n"), "x.goal");
    expect(programDiff(p, back, "x.goal", false)).toMatch(/x.goal has calc 1 ns/);
  });
  it("a Chakra node's size", () => {
    const q = {
      ...p,
      ranks: p.ranks.map((ops, r) => (r === 2 ? ops.map((o, i) => (i === 0 ? { ...o, bytes: 1 } : o)) : ops)),
    };
    const back = { ...p, ranks: p.ranks.map((_, r) => parseChakra(toChakra(q, r), `t.${r}.et`, r).ops) };
    expect(programDiff(p, back, "t.*.et")).toMatch(/rank 2, operation 1: t.\*.et has send 1 B to 3 tag 0/);
  });
});

describe("the GOAL reader refuses what no cclab schedule is", () => {
  const bad: [string, string, RegExp][] = [
    ["no num_ranks", "rank 0 {\n}\n", /x.goal:1: 'rank' before 'num_ranks'/],
    [
      "an undefined label",
      "num_ranks 1\nrank 0 {\nl1: calc 0\nl1 requires l2\n}\n",
      /x.goal:4: label l2 is not defined/,
    ],
    ["irequires", "num_ranks 1\nrank 0 {\nl1: calc 0\nl2: calc 0\nl2 irequires l1\n}\n", /x.goal:5: 'irequires'/],
    ["any source", "num_ranks 2\nrank 0 {\nl1: recv 8b from -1 tag 0\n}\n", /x.goal:3: a receive from any source/],
    ["a peer outside", "num_ranks 2\nrank 0 {\nl1: send 8b to 2 tag 0\n}\n", /x.goal:3: peer 2 is outside num_ranks 2/],
    ["send from", "num_ranks 2\nrank 0 {\nl1: send 8b from 1 tag 0\n}\n", /x.goal:3: 'send' takes 'to'/],
    ["an open rank", "num_ranks 1\nrank 0 {\nl1: calc 0\n", /x.goal: rank 0's '\{' is never closed/],
    [
      "a stray line",
      "num_ranks 1\nrank 0 {\nl1: exec 5\n}\n",
      /x.goal:3: not a GOAL operation or dependency: 'l1: exec 5'/,
    ],
    ["escape bytes", "num_ranks 1\nrank 0 {\n\u001b]0;x\u0007\n}\n", /x.goal:3: not a GOAL .*\\x1b\]0;x\\x07/],
  ];
  it.each(bad)("%s", (_what, text, message) => {
    expect(() => parseGoal(text, "x.goal")).toThrow(message);
  });
  it("reads LogGOPSim's comments and options (cpu, nic) as txt2bin does", () => {
    const p = parseGoal(
      "/* two ranks */\nnum_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3 cpu 0 nic 0 // a comment\n}\nrank 1 {\nl1: recv 8b from 0 tag 3\nl2: calc 100 cpu 1\nl2 requires l1\n}\n",
      "y.goal",
    );
    checkMatching(p, "y.goal");
    expect(p.ranks[1]?.[1]).toMatchObject({ kind: "calc", ns: 100, deps: [0] });
  });
});

describe("cclab export goal|chakra", () => {
  const cli = (args: string[]) =>
    execFileSync(process.execPath, ["src/cli/bin.js", "export", ...args], { encoding: "utf8", stdio: "pipe" });
  it("writes GOAL, reads it back and says so", () => {
    const out = join(dir, "pat.goal");
    const said = cli(["goal", "allgather", "--algorithm", "pat", "-n", "8", "--bytes", "64K", "-o", out]);
    expect(said).toMatch(
      /allgather\/pat on 8 ranks, 64 KiB \(nccl-tests' bytes\), \d+ operations, \d+ messages; read back: the same schedule/,
    );
    const text = readFileSync(out, "utf8");
    expect(text).toMatch(/^\/\/ cclab allgather\/pat, 8 ranks/);
    expect(text).toMatch(/\nnum_ranks 8\n/);
  });
  it("writes one Chakra trace per rank, named as ASTRA-sim reads them", () => {
    const prefix = join(dir, "dbt");
    const said = cli([
      "chakra",
      "allreduce",
      "--algorithm",
      "double_binary_tree",
      "-n",
      "6",
      "--bytes",
      "1M",
      "--json",
      "-o",
      prefix,
    ]);
    const r = JSON.parse(said);
    expect(r.files).toEqual([0, 1, 2, 3, 4, 5].map((k) => `${prefix}.${k}.et`));
    expect(r.sameSchedule).toBe(true);
    const p = programFor("allreduce", "double_binary_tree", 6, 1024 * 1024);
    expect(parseChakra(readFileSync(`${prefix}.3.et`), "3.et", 3).ops).toHaveLength(p.ranks[3]?.length as number);
  });
  it("refuses MSCCL's options for GOAL, and an unknown format", () => {
    const run = (args: string[]) => {
      try {
        cli(args);
        return "";
      } catch (e) {
        return String((e as { stderr: string }).stderr);
      }
    };
    expect(
      run(["goal", "allreduce", "--algorithm", "ring", "-n", "4", "--proto", "LL", "-o", join(dir, "a.goal")]),
    ).toMatch(/export goal: argument '--proto': applies to msccl only/);
    expect(run(["ns3", "allreduce", "-n", "4", "-o", join(dir, "a")])).toMatch(
      /unknown format 'ns3'; cclab writes msccl, goal, chakra/,
    );
    expect(run(["goal", "allreduce", "--algorithm", "ring", "-n", "4", "-o", join(dir, "none", "a.goal")])).toMatch(
      /export goal: argument '-o': .*none is not a directory/,
    );
  });
  it("a file that is not a trace is named", () => {
    const f = join(dir, "junk.0.et");
    writeFileSync(f, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    expect(() => parseChakra(readFileSync(f), f, 0)).toThrow(/junk.0.et: not a Chakra trace/);
  });
});
