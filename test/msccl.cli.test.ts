/**
 * `cclab import msccl`, `cclab export msccl` and `--algorithm-file algo.xml` through the CLI, as
 * docs/msccl.md walks through them: a program msccl-tools emitted is proved, a published wrong
 * one fails with its counterexample and a non-zero exit, an exported file reads back, verify and
 * explain take the XML, and a call outside the program's domain is refused with the reason.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FIX = "test/fixtures/msccl";

function cclab(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("cclab import / export msccl", () => {
  it("import proves a program msccl-tools emitted and says what it is", () => {
    const r = cclab(["import", "msccl", `${FIX}/xml/allreduce_ring_8_2ch_oop.xml`]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("allreduce on 8 GPUs, 'allreduce_ring_8_2ch_oop'");
    expect(r.out).toContain("8 chunks per loop, 24 threadblocks on 2 channel(s), Simple, out of place");
    expect(r.out).toMatch(/proved: 8 calls .* it is allreduce/);
  });

  it("import rejects a published example that is wrong, with the counterexample and exit 1", () => {
    const r = cclab(["import", "msccl", `${FIX}/published/allreduce_a100_pcie_hierarchical_4.xml`]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/AlgorithmFileError: .*: the program is not allreduce/);
    expect(r.out).toContain("output[0] holds [0+1+1] but allreduce needs [0+1+2+3]");
  });

  it("export writes a file that import reads back; bad options are named", () => {
    const out = join(mkdtempSync(join(tmpdir(), "cclab-msccl-")), "rs.xml");
    const e = cclab([
      "export",
      "msccl",
      "--collective",
      "reducescatter",
      "--algorithm",
      "ring",
      "-n",
      "5",
      "--proto",
      "LL",
      "-o",
      out,
    ]);
    expect(e.code, e.out).toBe(0);
    expect(e.out).toContain("sends the same messages as the schedule");
    expect(readFileSync(out, "utf8")).toMatch(/^<algo name="reducescatter_ring_5" proto="LL" /);
    const i = cclab(["import", "msccl", out]);
    expect(i.code, i.out).toBe(0);
    expect(i.out).toContain("it is reducescatter");
    const bad = cclab([
      "export",
      "msccl",
      "--collective",
      "allreduce",
      "--algorithm",
      "ring",
      "-n",
      "4",
      "--proto",
      "LL64",
      "-o",
      out,
    ]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain("argument '--proto': expected Simple, LL, LL128, got 'LL64'");
  });

  it("verify and explain take the XML; a call outside its domain is refused with the reason", () => {
    const file = `${FIX}/xml/alltoall_allpairs_4_2ch_ip.xml`;
    const v = cclab(["verify", "--algorithm-file", file, "--runs", "5", "--seed", "3"]);
    expect(v.code, v.out).toBe(0);
    expect(v.out).toMatch(/│ alltoall\s+│ alltoall_allpairs_4_2ch_ip\s+│ 8\s+│ 5\s+│ ok/);
    const x = cclab(["explain", "alltoall", "--algorithm-file", file, "-n", "4"]);
    expect(x.code, x.out).toBe(0);
    expect(x.out).toMatch(/tb\d+\.\d+ s/);
    const wrong = cclab(["explain", "alltoall", "--algorithm-file", file, "-n", "3"]);
    expect(wrong.out).toContain("n = 3 is outside it: an MSCCL program for 4 GPUs, 4 chunks per loop (n = 4)");
  });
});
