/**
 * Every command the README and docs/*.md show, run and held to the output the page prints
 * (src/tools/docs-check.ts: "..." lines stand for any lines; only timing is normalised). Blocks
 * marked `<!-- docs-check: slow -->` run only with CCLAB_DOCS_SLOW=1 (the script runs them all:
 * `npx tsx src/tools/docs-check.ts --slow`); `skip` blocks never run, saying why. A page that
 * drifts from what its command prints fails here; `npx tsx src/tools/docs-check.ts --write`
 * rewrites the blocks without "...". May write only in the scratch directories the checker makes.
 */
import { describe, expect, it } from "vitest";
import {
  blocksOf,
  commandTimeoutMs,
  docFiles,
  matches,
  normalise,
  PROGRESS,
  runBlock,
} from "../src/tools/docs-check.js";
import { mpiSkipReason } from "./support/mpi.js";

const slow = process.env.CCLAB_DOCS_SLOW === "1";
const noMpi = mpiSkipReason("test/docs-commands.test.ts (blocks with --backend mpi)") !== "";
const blocks = docFiles().flatMap((f) => blocksOf(f));

describe("the checker itself", () => {
  it("'...' stands for any lines, and only timing is normalised", () => {
    expect(matches(["a", "...", "d"], ["a", "b", "c", "d"])).toBe(true);
    expect(matches(["a", "...", "d"], ["a", "d"])).toBe(true);
    expect(matches(["a", "d"], ["a", "b", "d"])).toBe(false);
    expect(matches(["1 of 1 algorithm verified in 2.6 s"], ["1 of 1 algorithm verified in 11.0 s"])).toBe(true);
    expect(matches(["model:   4.77 ms  critical path"], ["model:   4.78 ms  critical path"])).toBe(false);
    expect(normalise("ok np=2 allreduce/ring: 10 cases agree (0.3 s)")).toBe(
      "ok np=2 allreduce/ring: 10 cases agree (<t> s)",
    );
    // a piped sweep's progress lines (both kinds) are timing, left out of the comparison
    expect(PROGRESS.test("cclab model allreduce: 3 of 4 points (ring n=4096 64 KiB), 3 s so far")).toBe(true);
    expect(PROGRESS.test("cclab model allreduce: modelling N = 512 (9 of 10), 104 s so far; N = 256 took 40 s")).toBe(
      true,
    );
    expect(PROGRESS.test("cclab model allreduce: ring vs tree, S = 64 MiB")).toBe(false);
  });
  it("finds the README's tour", () => {
    expect(
      blocks.some((b) => b.file.endsWith("README.md") && b.commands.some((c) => c.command.startsWith("cclab explain"))),
    ).toBe(true);
  });
});

describe("every command in the docs prints what the page says", () => {
  for (const b of blocks.filter((x) => !x.skip)) {
    const id = `${b.file.split("/").slice(-1)[0]}:${b.line} ${b.commands[0]?.command}`;
    const mpi = b.commands.some((c) => c.command.includes("--backend mpi"));
    const test = (b.slow && !slow) || (mpi && noMpi) ? it.skip : it;
    test(
      id,
      () => {
        const bad = runBlock(b).filter((o) => !o.ok);
        expect(
          bad.map((o) => `${o.command.command}: ${o.why}\n${o.actual.join("\n")}`),
          `rewrite with npx tsx src/tools/docs-check.ts --write --only ${b.file.split("/").slice(-1)[0]}`,
        ).toEqual([]);
      },
      commandTimeoutMs(b) * b.commands.length,
    );
  }
});
