/**
 * The DSL's step verbs (src/schedule/dsl.ts: recvReduceSend, recvCopySend, directRecv, NCCL's
 * primitives): a step's label is its verb, named by the transfers the step really makes; parts
 * passed as undefined are left out and the others keep their order; a verb refuses a step that is
 * not what it says. The ring and tree routines are built with them (algorithms/lib/ring.ts,
 * lib/tree.ts), and their labels come out as the verbs say.
 */
import { describe, expect, it } from "vitest";
import { directRecv, recv, recvCopySend, recvReduceSend, reduce, region, send } from "../src/schedule/dsl.js";
import { compile } from "../src/schedule/plan.js";
import { findAlgorithm } from "../src/schedule/registry.js";
import { makeCall, rankCall } from "../src/specs/index.js";

const out = region("output", 0, 4);
const tmp = region("scratch", 0, 4);
const mine = region("input", 0, 4);

describe("recvReduceSend", () => {
  it("with all its parts: the verb, the transfers in the order given, the reductions", () => {
    const s = recvReduceSend("chunk 2", [send(1, out), recv(3, tmp)], [reduce(out, tmp, mine)]);
    expect(s.label).toBe("recvReduceSend chunk 2");
    expect(s.transfers).toEqual([send(1, out), recv(3, tmp)]);
    expect(s.local).toEqual([reduce(out, tmp, mine)]);
  });
  it("without its send it is a recvReduce; without its receive a send", () => {
    const noSend = recvReduceSend("seg 3 up", [recv(2, tmp), undefined], [reduce(out, tmp)]);
    expect(noSend.label).toBe("recvReduce seg 3 up");
    expect(noSend.transfers).toEqual([recv(2, tmp)]);
    const noRecv = recvReduceSend("seg 2 up", [send(0, out)], [undefined]);
    expect(noRecv).toEqual({ label: "send seg 2 up", transfers: [send(0, out)], local: [] });
  });
  it("refuses a reduction of something the step does not receive", () => {
    expect(() => recvReduceSend("chunk 1", [send(1, out), recv(3, tmp)], [reduce(out, mine)])).toThrow(
      "recvReduceSend chunk 1: reduce of in[0:4] reduces nothing this step receives",
    );
  });
});

describe("recvCopySend and directRecv", () => {
  it("recvCopySend names what it does: forward, receive into the caller's buffer, or into scratch", () => {
    expect(recvCopySend("seg 1 down", [recv(0, out), send(1, out), send(3, out)]).label).toBe(
      "recvCopySend seg 1 down",
    );
    expect(recvCopySend("seg 0 down", [recv(0, out), undefined]).label).toBe("directRecv seg 0 down");
    expect(recvCopySend("block 2", [recv(0, tmp)]).label).toBe("recv block 2");
    expect(recvCopySend("seg 4 down", [undefined, send(1, out)]).label).toBe("send seg 4 down");
  });
  it("directRecv receives straight into the input or output, never scratch", () => {
    expect(directRecv("chunk 0", recv(2, out))).toEqual({
      label: "directRecv chunk 0",
      transfers: [recv(2, out)],
      local: [],
    });
    expect(() => directRecv("chunk 0", recv(2, tmp))).toThrow(/directRecv chunk 0: recv of tmp\[0:4\]/);
    expect(() => directRecv("chunk 0", send(2, out))).toThrow(/is not a receive/);
  });
});

describe("the ring and tree routines label their steps by verb", () => {
  const labels = (collective: string, name: string, n: number, count: number, segment: number, rank: number) =>
    compile(
      findAlgorithm(collective, name, { op: "test" }),
      rankCall(makeCall({ collective, size: n, count, segment }), rank),
    ).steps.map((s) => s.label);

  it("ring all-reduce: n-1 recvReduceSend steps, then n-1 recvCopySend steps", () => {
    expect(labels("allreduce", "ring", 4, 4, 1, 0)).toEqual([
      "recvReduceSend chunk 2",
      "recvReduceSend chunk 1",
      "recvReduceSend chunk 0",
      // All-gather step k receives chunk rank-k-1.
      "recvCopySend chunk 3",
      "recvCopySend chunk 2",
      "recvCopySend chunk 1",
    ]);
  });
  it("binary tree: an inner rank's recvReduceSend up and recvCopySend down, a leaf's send and directRecv", () => {
    // n = 4: rank 2 is inner (children 1 and 3, parent 0), rank 1 a leaf; two segments.
    const inner = labels("allreduce", "binary_tree", 4, 2, 1, 2);
    expect(inner).toContain("recvReduceSend seg 1 up");
    expect(inner).toContain("recvCopySend seg 1 down");
    const leaf = labels("allreduce", "binary_tree", 4, 2, 1, 1);
    expect(leaf).toEqual(["send seg 0 up", "send seg 1 up", "directRecv seg 0 down", "directRecv seg 1 down"]);
  });
});
