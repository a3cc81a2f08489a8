/** `cclab demo` prints the seed 003 chain, the explained send-send deadlock and its three fixes. */
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demo, formatTensor } from "../src/cli/demo.js";
import { tensor } from "../src/core/buffer.js";

afterEach(() => vi.restoreAllMocks());

describe("cclab demo", () => {
  it("formats tensors as torch prints them", () => {
    expect(formatTensor(tensor("float32", [1, 2]))).toBe("tensor([1., 2.])");
    expect(formatTensor(tensor("float64", [0.5]))).toBe("tensor([0.5000])");
  });

  it("prints the chain, the deadlock with its explanation, and three working fixes", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      lines.push(...args.map(String).join(" ").split("\n"));
    });
    await demo();
    const out = lines.join("\n");
    for (const l of [
      "rank 0 sent tensor([1., 1.]) to rank 1",
      "rank 1 received tensor([1., 1.]) from rank 0",
      "rank 2 sent tensor([4., 4.]) to rank 3",
      "rank 3 ends with tensor([7., 7.])",
      "rank 0 caught DeadlockError in send(to 1)",
      "rank 1 caught DeadlockError in send(to 0)",
    ]) {
      expect(lines).toContain(l);
    }
    expect(out).toContain(
      "rank 0 waits in send(to 1, 2 x float32, 'exchange') -> rank 1 waits in send(to 0, 2 x float32, 'exchange') -> rank 0",
    );
    const ok0 = "rank 0 sent tensor([10., 10.]) to rank 1 and received tensor([20., 20.]) from rank 1";
    const ok1 = "rank 1 sent tensor([20., 20.]) to rank 0 and received tensor([10., 10.]) from rank 0";
    // Once under 'buffered', once per fix.
    expect(lines.filter((l) => l === ok0)).toHaveLength(4);
    expect(lines.filter((l) => l === ok1)).toHaveLength(4);
    // Deterministic: the same seed prints the same lines.
    const first = [...lines];
    lines.length = 0;
    await demo();
    expect(lines).toEqual(first);
  });
});

describe("npm start (the README's quick start)", () => {
  it("runs the demo, then verifies every algorithm, and exits 0", () => {
    const r = spawnSync("npm", ["start"], { encoding: "utf8", timeout: 110_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    expect(r.status, out).toBe(0);
    expect(out).toContain("deadlock");
    expect(out).toMatch(/(\d+) of \1 algorithms verified in/);
  });
});
