/**
 * One size, one meaning: `--bytes S`, `-b S -e S` and bench's sizes are nccl-tests' bytes in every
 * command, so for every collective a single `cclab model --bytes S`, a one-point sweep over N
 * (--sweep-n), a one-point sweep over sizes (-b S -e S), the same two on a topology, and
 * `cclab bench --backend sim -b S -e S` all give the same time, and the headers say the size the
 * same way. Commands run in-process through the commander program.
 */
import { describe, expect, it, vi } from "vitest";
import { buildProgram } from "../src/cli/main.js";
import { algorithmsOf } from "../src/schedule/registry.js";
import { COLLECTIVES } from "../src/specs/index.js";

async function cclab(...args: string[]): Promise<string> {
  const out: string[] = [];
  const write = vi.spyOn(process.stdout, "write").mockImplementation((s) => out.push(String(s)) > 0);
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => {
    out.push(`${a.join(" ")}\n`);
  });
  try {
    await buildProgram().parseAsync(["node", "cclab", ...args]);
  } finally {
    write.mockRestore();
    log.mockRestore();
  }
  return out.join("");
}

// biome-ignore lint/suspicious/noExplicitAny: the commands' JSON documents, read field by field.
const json = async (...args: string[]): Promise<any> => JSON.parse(await cclab(...args, "--json"));

const S = "64K";
const n = "4";

describe("--bytes means nccl-tests' bytes everywhere", () => {
  for (const collective of COLLECTIVES.filter((c) => c !== "barrier" && c !== "alltoallv")) {
    const alg = algorithmsOf(collective)[0]?.name as string;
    it(`${collective}/${alg}: a single call, one-point sweeps and bench agree`, async () => {
      const one = await json("model", collective, "--algorithm", alg, "-n", n, "--bytes", S);
      const overN = await json("model", collective, "--algorithms", alg, "--sweep-n", n, "--bytes", S);
      const overS = await json("model", collective, "--algorithm", alg, "-n", n, "-b", S, "-e", S);
      expect(overN.rows[0].modelUs[0]).toBeCloseTo(one.modelUs, 6);
      expect(overS.rows[0].results[0].time).toBeCloseTo(one.modelUs, 6);
      expect(overS.rows[0].count).toBe(one.count);
      const bench = await json("bench", collective, "--algorithm", alg, "--backend", "sim", "-n", n, "-b", S, "-e", S);
      expect(bench.rows[0].count).toBe(one.count);
      expect(bench.rows[0].outOfPlace.timeUs).toBeCloseTo(one.modelUs, 6);

      const topo = ["--topology", "ring:4"];
      const netOne = await json("model", collective, "--algorithm", alg, "-n", n, "--bytes", S, ...topo);
      const netS = await json("model", collective, "--algorithm", alg, "-n", n, "-b", S, "-e", S, ...topo);
      expect(netOne.count).toBe(one.count);
      expect(netS.rows[0].results[0].time).toBeCloseTo(netOne.timeUs, 6);

      // The headers say it one way: S, nccl-tests' bytes, the count and whether it is per rank.
      const said = /S = 64 KiB \(nccl-tests' bytes; \d+ x \w+( per rank)?\)/;
      const text = await cclab("model", collective, "--algorithm", alg, "-n", n, "--bytes", S);
      const netText = await cclab("model", collective, "--algorithm", alg, "-n", n, "--bytes", S, ...topo);
      expect(said.exec(text)?.[0]).toBe(said.exec(netText)?.[0]);
    });
  }

  it("alltoallv, whose counts differ per peer, is refused with a reason, not an internal error", async () => {
    await expect(cclab("model", "alltoallv", "--algorithm", "pairwise", "-n", n, "--bytes", S)).rejects.toThrow(
      /model alltoall .*with --bytes/,
    );
  });
});
