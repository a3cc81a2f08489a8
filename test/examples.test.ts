/**
 * Every example in examples/ on 4 simulated ranks: each rank's printed lines are checked against
 * what its seed prints (seed 000's outputs verbatim, minus the device='cuda:N' suffix), or, where
 * the seed shows no output (seeds 001 and 003), against the values its code computes.
 */
import { describe, expect, it } from "vitest";
import { type Main, runCli, runSim } from "../examples/_run.js";
import { catDim1, fromFn, numpyStr, splitDim1, torchStr } from "../examples/_tensor.js";
import * as allGatherColumn from "../examples/all_gather_column.js";
import * as allGatherObject from "../examples/all_gather_object.js";
import * as allGatherRow from "../examples/all_gather_row.js";
import * as allReduce from "../examples/all_reduce.js";
import * as allReduce2d from "../examples/all_reduce_2d.js";
import * as allToAllColumn from "../examples/all_to_all_column.js";
import * as allToAllRow from "../examples/all_to_all_row.js";
import * as allToAllV from "../examples/all_to_all_v.js";
import * as broadcast from "../examples/broadcast.js";
import * as broadcastObject from "../examples/broadcast_object.js";
import * as deadlock from "../examples/deadlock.js";
import * as deviceMesh from "../examples/device_mesh.js";
import * as gatherColumn from "../examples/gather_column.js";
import * as gatherRow from "../examples/gather_row.js";
import * as isendIrecv from "../examples/isend_irecv.js";
import * as newGroup from "../examples/new_group.js";
import * as reduce from "../examples/reduce.js";
import * as reduceScatter from "../examples/reduce_scatter.js";
import * as reduceScatterColumn from "../examples/reduce_scatter_column.js";
import * as reduceScatterList from "../examples/reduce_scatter_list.js";
import * as ringAllReduce from "../examples/ring_all_reduce.js";
import * as scatter from "../examples/scatter.js";
import * as sendRecv from "../examples/send_recv.js";
import * as softmaxL2 from "../examples/softmax_l2.js";
import { tensor } from "../src/index.js";

const R = [0, 1, 2, 3];
const rowsOf = (n: number, row: string) => `[${Array.from({ length: n }, () => `[${row}]`).join("\n ")}]`;

async function lines(main: Main, n = 4, args: string[] = []): Promise<string[][]> {
  return runSim(main, n, args);
}

describe("examples/_tensor.ts printing", () => {
  it("prints as torch, numpy and python do", () => {
    expect(torchStr(tensor("float32", [1, 2]))).toBe("tensor([1., 2.])");
    expect(torchStr(tensor("float32", [0, 10]))).toBe("tensor([ 0., 10.])");
    expect(torchStr(tensor("int64", [0n, 12n]))).toBe("tensor([ 0, 12])");
    expect(torchStr(tensor("float32", [0.5, 1]))).toBe("tensor([0.5000, 1.0000])");
    expect(torchStr(tensor("float32", [45]), [])).toBe("tensor(45.)");
    expect(torchStr(tensor("float32", [0, 0, 1, 1]), [2, 2])).toBe("tensor([[0., 0.],\n        [1., 1.]])");
    expect(numpyStr(tensor("float32", [0, 1, 10, 11]), [2, 2])).toBe("[[ 0.  1.]\n [10. 11.]]");
  });

  it("splits and concatenates along dim 1 as inverses", () => {
    const t = fromFn("float32", [3, 4], (i, j) => 10 * i + j);
    const blocks = splitDim1(t, 3, 4, 2);
    expect([...blocks.data]).toEqual([0, 1, 10, 11, 20, 21, 2, 3, 12, 13, 22, 23]);
    expect([...catDim1(blocks, 2, 3, 2).data]).toEqual([...t.data]);
  });
});

describe("seed 000 examples reproduce the seed's printed output", () => {
  it("row gather", async () => {
    const out = await lines(gatherRow.main);
    expect(out[0]).toEqual([
      "Rank 0 gathered tensor shape: torch.Size([4, 5])",
      "Gathered tensor:\n tensor([[0., 0., 0., 0., 0.],\n        [1., 1., 1., 1., 1.],\n        [2., 2., 2., 2., 2.],\n        [3., 3., 3., 3., 3.]])",
    ]);
    for (const r of [1, 2, 3])
      expect(out[r]).toEqual([`Rank ${r} has sent its data, no local copy of gathered tensor.`]);
  });

  it("column gather", async () => {
    const out = await lines(gatherColumn.main);
    for (const r of R) {
      expect(out[r]![0]).toBe(
        `Rank ${r} local tensor (shape torch.Size([5, 2])):\n${rowsOf(5, r === 0 ? "0. 1." : `${r}0. ${r}1.`)}`,
      );
    }
    expect(out[0]![1]).toBe(
      `\nRank 0 final gathered tensor (shape torch.Size([5, 8])):\n${rowsOf(5, " 0.  1. 10. 11. 20. 21. 30. 31.")}`,
    );
    expect(out[2]![1]).toBe("Rank 2 has sent its data, no local copy of gathered tensor.\n");
  });

  it("row all-gather", async () => {
    const out = await lines(allGatherRow.main);
    const t =
      " tensor([[0., 0., 0., 0., 0.],\n        [1., 1., 1., 1., 1.],\n        [2., 2., 2., 2., 2.],\n        [3., 3., 3., 3., 3.]])";
    for (const r of R)
      expect(out[r]).toEqual([`rank ${r} after cat: torch.Size([4, 5])`, `Rank ${r} gathered tensor:\n${t}`]);
  });

  it("column all-gather", async () => {
    const out = await lines(allGatherColumn.main);
    for (const r of R) {
      expect(out[r]![1]).toBe(
        `Rank ${r} after column-wise all_gather, shape torch.Size([5, 8]):\n${rowsOf(5, " 0.  1. 10. 11. 20. 21. 30. 31.")}`,
      );
    }
  });

  it("reduce: 6 on rank 0, the others untouched", async () => {
    const out = await lines(reduce.main);
    expect(out[0]).toEqual([
      "Rank 0 before reduce: [[0.0, 0.0, 0.0, 0.0, 0.0]]",
      "Rank 0 after reduce (sum): [[6.0, 6.0, 6.0, 6.0, 6.0]]",
    ]);
    for (const r of [1, 2, 3]) {
      expect(out[r]).toEqual([
        `Rank ${r} before reduce: [[${r}.0, ${r}.0, ${r}.0, ${r}.0, ${r}.0]]`,
        `Rank ${r} after reduce (tensor content undefined): [[${r}.0, ${r}.0, ${r}.0, ${r}.0, ${r}.0]]`,
      ]);
    }
  });

  it("all-reduce, 1-D and 2-D: 6 everywhere", async () => {
    const out = await lines(allReduce.main);
    for (const r of R) {
      expect(out[r]).toEqual([
        `Rank ${r} before all_reduce: [[${r}.0, ${r}.0, ${r}.0, ${r}.0, ${r}.0]]`,
        `Rank ${r} after all_reduce (sum): [[6.0, 6.0, 6.0, 6.0, 6.0]]`,
      ]);
    }
    const out2 = await lines(allReduce2d.main);
    for (const r of R) {
      expect(out2[r]).toEqual([
        `Rank ${r} before all_reduce:\n${rowsOf(2, `${r}. ${r}. ${r}. ${r}. ${r}.`)}`,
        `Rank ${r} after all_reduce (sum):\n${rowsOf(2, "6. 6. 6. 6. 6.")}`,
      ]);
    }
  });

  it("scatter: rank i receives row i", async () => {
    const out = await lines(scatter.main);
    expect(out[0]!.slice(0, 2)).toEqual([
      "Rank 0: Original data to scatter:\n[[0. 0. 0. 0. 0.]\n [1. 1. 1. 1. 1.]\n [2. 2. 2. 2. 2.]\n [3. 3. 3. 3. 3.]]",
      "Rank 0: Scatter list shapes: [torch.Size([5]), torch.Size([5]), torch.Size([5]), torch.Size([5])]",
    ]);
    for (const r of R) {
      expect(out[r]!.at(-1)).toBe(
        `Rank ${r} received tensor of shape torch.Size([5]):\n[${r}. ${r}. ${r}. ${r}. ${r}.]`,
      );
    }
  });

  it("reduce-scatter (list, single tensor, column): 60, 64, 68, 72", async () => {
    const sums = [60, 64, 68, 72];
    const list = await lines(reduceScatterList.main);
    const single = await lines(reduceScatter.main);
    const column = await lines(reduceScatterColumn.main);
    for (const r of R) {
      const s = sums[r]!;
      const row = `[[${s}. ${s}. ${s}. ${s}. ${s}.]]`;
      expect(list[r]![0]).toBe(
        `Rank ${r} original data (shape torch.Size([4, 5])):\n${[0, 1, 2, 3].map((i) => `${i === 0 ? "[" : " "}[${`${r * 10 + i}. `.repeat(5).trim()}]`).join("\n")}]`,
      );
      expect(list[r]![1]).toBe(`Rank ${r} after reduce_scatter (sum), output shape torch.Size([1, 5]):\n${row}`);
      expect(single[r]![1]).toBe(
        `Rank ${r} after reduce_scatter_tensor (sum), output shape torch.Size([1, 5]):\n${row}`,
      );
      expect(column[r]![1]).toBe(
        `Rank ${r} after reduce_scatter (sum), output shape torch.Size([5, 1]):\n${rowsOf(5, `${s}.`)}`,
      );
    }
  });

  it("row and column all-to-all: rank d gets every rank's block d", async () => {
    const row = await lines(allToAllRow.main);
    expect(row[0]![1]).toBe("\nRank 0 recv_tensor (after alltoall):\n[[ 0.  0.]\n [10. 10.]\n [20. 20.]\n [30. 30.]]");
    expect(row[3]![1]).toBe("\nRank 3 recv_tensor (after alltoall):\n[[ 3.  3.]\n [13. 13.]\n [23. 23.]\n [33. 33.]]");
    const col = await lines(allToAllColumn.main);
    for (const r of R) {
      expect(col[r]![1]).toBe(
        `Rank ${r} after column-wise all_to_all (shape torch.Size([5, 4])):\n${rowsOf(5, [0, 1, 2, 3].map((s) => `${s * 10 + r}.`.padStart(3)).join(" "))}`,
      );
    }
  });

  it("broadcast: rank 0's ones everywhere", async () => {
    const out = await lines(broadcast.main);
    expect(out[0]![0]).toBe(`Rank 0 before broadcast:\n${rowsOf(5, "1. 1.")}`);
    expect(out[2]![0]).toBe(`Rank 2 before broadcast (initial zeros):\n${rowsOf(5, "0. 0.")}`);
    for (const r of R) expect(out[r]![1]).toBe(`Rank ${r} after broadcast:\n${rowsOf(5, "1. 1.")}`);
  });
});

describe("seed 001 examples", () => {
  it("all-to-all single and with the seed's variable splits", async () => {
    const out = await lines(allToAllV.main);
    expect(out[0]![0]).toBe("Rank 0 input: tensor([0, 1, 2, 3]) → output: tensor([ 0,  4,  8, 12])");
    expect(out[3]![0]).toBe("Rank 3 input: tensor([12, 13, 14, 15]) → output: tensor([ 3,  7, 11, 15])");
    expect(out.map((l) => l[1])).toEqual([
      "Rank 0 variable output: tensor([ 0,  1, 10, 11, 12, 20, 21, 30, 31])",
      "Rank 1 variable output: tensor([ 2,  3, 13, 14, 22, 32, 33])",
      "Rank 2 variable output: tensor([ 4, 15, 16, 23, 34, 35])",
      "Rank 3 variable output: tensor([ 5, 17, 18, 24, 36])",
    ]);
  });

  it("object, tensor, subgroup and hand-rolled broadcasts", async () => {
    const out = await lines(broadcastObject.main);
    for (const r of R) {
      expect(out[r]).toEqual([
        `Rank ${r} has data ['foo', 12, {1: 2}]`,
        `Rank ${r} has data tensor([100., 100.])`,
        // Group [0, 1] takes its rank 1's [2, 2]; non-members keep rank * 2.
        `Rank ${r} has data ${r < 2 ? "tensor([2., 2.])" : `tensor([${2 * r}., ${2 * r}.])`}`,
        `Rank ${r} p2p broadcast has data tensor([100., 100.])`,
      ]);
    }
  });

  it("all-gather of tensors and of objects", async () => {
    const out = await lines(allGatherObject.main);
    for (const r of R) {
      expect(out[r]).toEqual([
        `Rank ${r} all_gather: [tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), tensor([7, 8])]`,
        `Rank ${r} all_gather_into_tensor: tensor([1, 2, 3, 4, 5, 6, 7, 8])`,
        `rank:${r} ['foo', 12, {1: 2}, 'xiaodongguaAIGC']`,
      ]);
    }
  });

  it("hand-rolled ring all-reduce: partial sums after reduce-scatter, 4 everywhere after all-gather", async () => {
    const out = await lines(ringAllReduce.main);
    expect(out[0]![0]).toBe("Stage 1 (ReduceScatter) complete");
    for (const r of R) {
      // Chunk (r - j) mod 4 has been summed over j + 1 ranks; chunk r + 1 is complete.
      const partial = R.map((c) => ((r - c + 4) % 4) + 1).map((v) => `tensor([${v}, ${v}])`);
      const rest = out[r]!.filter((l) => l.startsWith("Rank"));
      expect(rest).toEqual([
        `Rank ${r} after ReduceScatter: [${partial.join(", ")}]`,
        `Rank ${r} after AllGather: [${R.map(() => "tensor([4, 4])").join(", ")}]`,
      ]);
    }
    // Any ring size works, odd ones included (the even/odd order cannot form an all-send cycle).
    const five = await lines(ringAllReduce.main, 5);
    for (const l of five) expect(l.at(-1)).toMatch(/after AllGather: \[(tensor\(\[5, 5\]\)(, )?){5}\]$/);
  });

  it("device mesh: dp x tp groups and their sums", async () => {
    const out = await lines(deviceMesh.main);
    expect(out[0]![0]).toBe("mesh (dp=2, tp=2): [[0, 1], [2, 3]]");
    expect(out[3]!.at(-1)).toBe(
      "Rank 3: coordinate (dp=1, tp=1); tp group [2, 3], dp group [1, 3]; sum of ranks over tp 5, over dp 4",
    );
    const six = await lines(deviceMesh.main, 6);
    expect(six[4]!.at(-1)).toBe(
      "Rank 4: coordinate (dp=1, tp=1); tp group [3, 4, 5], dp group [1, 4]; sum of ranks over tp 12, over dp 5",
    );
  });
});

describe("seed 003 examples", () => {
  it("send/recv chain, and p2p.py", async () => {
    const out = await lines(sendRecv.main);
    expect(out[0]).toContain("Rank 0 initial data: tensor([100., 200.])");
    expect(out[1]).toContain("Rank 1 received: tensor([100., 200.])");
    expect(out[1]).toContain("Rank 1 data after processing: tensor([200., 400.])");
    expect(out[3]).toContain("Rank 3 received: tensor([400., 800.])");
    expect(out.map((l) => l.at(-1))).toEqual(
      ["tensor(0.)", "tensor(1.)", "tensor(0.)", "tensor(0.)"].map((t, r) => `Rank ${r} has data ${t}`),
    );
    // The seed's 3 ranks: rank 2 is the end of the chain.
    const three = await lines(sendRecv.main, 3);
    expect(three[2]).toContain("Rank 2 received: tensor([200., 400.])");
  });

  it("isend/irecv chain, and p2p_async.py's ten messages summed to 45", async () => {
    const out = await lines(isendIrecv.main);
    expect(out[1]).toContain("Rank 1 receive complete, data: tensor([100., 200.])");
    expect(out[3]).toContain("Rank 3 receive complete, final data: tensor([400., 800.])");
    expect(out.map((l) => l.at(-1))).toEqual(
      ["tensor(9.)", "tensor(0.)", "tensor(45.)", "tensor(0.)"].map((t, r) => `Rank ${r} has data ${t}`),
    );
  });

  it("the send-send deadlock is caught and explained, and each fix exchanges the data", async () => {
    const out = await lines(deadlock.main);
    expect(out[0]).toContain("Rank 0: caught DeadlockError in send(to 1)");
    expect(out[1]).toContain("Rank 1: caught DeadlockError in send(to 0)");
    expect(out[0]!.join("\n")).toContain(
      "rank 0 waits in send(to 1, 2 x float32, 'exchange') -> rank 1 waits in send(to 0, 2 x float32, 'exchange') -> rank 0",
    );
    for (const fix of ["a", "b", "c"]) {
      expect(
        out[0]!.some(
          (l) =>
            l.startsWith(`Rank 0: fix ${fix} `) && l.endsWith("sent tensor([10., 10.]), received tensor([20., 20.])"),
        ),
      ).toBe(true);
      expect(
        out[1]!.some(
          (l) =>
            l.startsWith(`Rank 1: fix ${fix} `) && l.endsWith("sent tensor([20., 20.]), received tensor([10., 10.])"),
        ),
      ).toBe(true);
    }
    expect(out[2]).toEqual(["Rank 2 takes no part in the exchange"]);
    // Under buffered sends the wrong order goes through: no deadlock to catch.
    const buffered = await runSim(deadlock.main, 4, [], { semantics: "buffered" });
    expect(buffered[0]![1]).toBe(
      "Rank 0: no deadlock under these semantics (sends were buffered); received tensor([20., 20.])",
    );
  });

  it("new_group: group sums 1 and 5, spread by a MAX all-reduce", async () => {
    const out = await lines(newGroup.main);
    expect(out[0]).toContain("Group1 (ranks [0, 1]): sum is 1.0");
    expect(out[0]).toContain("Group2 (ranks [2, 3]): sum is 5.0");
    expect(out[2]).toEqual(["Rank 2 is rank 0 of group 2: group sum 5.0"]);
  });

  it("softmax and L2 normalisation over the ranks", async () => {
    const out = await lines(softmaxL2.main);
    for (const l of [
      "weighted tensor: tensor([3.0000, 4.2000, 7.2000])",
      "max_tensor after all_reduce: tensor([4., 5., 6.])",
      "sum_exp after all_reduce: tensor([1.5530, 1.5530, 1.5530])",
      "Rank 0 softmax result: tensor([0.0321, 0.0321, 0.0321])",
      "sum_squared after all_reduce: tensor([30., 54., 86.])",
      "Rank 0 normalized result: tensor([0.1826, 0.2722, 0.3235])",
    ]) {
      expect(out[0]).toContain(l);
    }
    expect(out[3]).toEqual([
      "Rank 3 softmax result: tensor([0.6439, 0.6439, 0.6439])",
      "Rank 3 normalized result: tensor([0.7303, 0.6804, 0.6470])",
    ]);
  });
});

describe("examples/_run.ts", () => {
  it("sends --backend mpi outside a job to cclab run, with the right command", async () => {
    const errors: string[] = [];
    const orig = console.error;
    const saved = { ...process.env };
    console.error = (...a: unknown[]) => errors.push(a.join(" "));
    try {
      for (const k of ["RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"]) delete process.env[k];
      expect(await runCli("examples/reduce.ts", reduce.main, ["--backend", "mpi", "-n", "4"])).toBe(2);
    } finally {
      console.error = orig;
      Object.assign(process.env, saved);
    }
    expect(errors.join("\n")).toContain("npx cclab run -n 4 --backend mpi examples/reduce.ts");
  });
});
