/**
 * One CLI vocabulary, held on the commander definitions themselves: every subcommand takes
 * -n/--nranks and --json, docs/cli.md is exactly what the definitions generate, --version and
 * list work, torch's collective names are accepted and typos get "did you mean".
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli/main.js";
import { cliReference } from "../src/cli/reference.js";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["src/cli/bin.js", ...args], { encoding: "utf8", timeout: 60_000 });

function subcommands(c: Command): Command[] {
  return c.commands.flatMap((s) => [s, ...subcommands(s)]);
}

describe("cclab's command line", () => {
  const all = subcommands(buildProgram());

  it("every subcommand takes -n/--nranks and --json", () => {
    expect(all.length).toBeGreaterThanOrEqual(10);
    for (const c of all) {
      const flags = c.options.map((o) => o.flags);
      expect(flags, c.name()).toContain("--json");
      expect(
        c.options.some((o) => o.short === "-n" && o.long === "--nranks"),
        c.name(),
      ).toBe(true);
    }
  });

  it("docs/cli.md is what the commander definitions generate (npx tsx src/cli/reference.ts)", () => {
    expect(readFileSync("docs/cli.md", "utf8")).toBe(cliReference());
  });

  it("--version prints package.json's version; list prints collectives, algorithms and backends", () => {
    const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
    expect(execFileSync(process.execPath, ["src/cli/bin.js", "--version"], { encoding: "utf8" }).trim()).toBe(version);
    const list = JSON.parse(cli("list", "--json").stdout) as {
      collectives: { name: string; torch: string; algorithms: { name: string }[] }[];
      backends: { name: string; available: boolean }[];
    };
    expect(list.collectives.find((c) => c.name === "allreduce")?.torch).toBe("all_reduce");
    expect(list.collectives.find((c) => c.name === "allreduce")?.algorithms.map((a) => a.name)).toContain("ring");
    expect(list.backends.map((b) => b.name)).toEqual(expect.arrayContaining(["sim", "mpi", "nccl"]));
    expect(list.backends.find((b) => b.name === "sim")?.available).toBe(true);
  });

  it("torch's collective names work; a misspelt algorithm gets 'did you mean'; an unknown option is named", () => {
    const ok = cli("explain", "all_reduce", "--algorithm", "ring", "-n", "4", "--json");
    expect(ok.status, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as { collective: string }).collective).toBe("allreduce");
    const typo = cli("explain", "all_reduce", "--algorithm", "rng", "-n", "4");
    expect(typo.status).not.toBe(0);
    expect(typo.stderr).toMatch(/did you mean 'ring'\?/);
    const unknown = cli("list", "--bogus");
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toBe("InvalidArgumentError: list: unknown option '--bogus'\n");
  });
});
