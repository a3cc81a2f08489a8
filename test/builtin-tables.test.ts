/**
 * The engines' own collectives as cclab calls them: one table per engine (MPI_BUILTINS,
 * NCCL_BUILTINS) into one native collective() entry per engine. Here: the C++ entries know
 * exactly the C functions src/native/types.ts names, and MPI's names over NCCL's table
 * (comm.builtin.reduceScatterBlock(null, ...), scatter with a null recv, ...) keep MPI's in-place
 * conventions, with NCCL's own collectives and with the grouped send/recv that stand in for them.
 * The tables themselves are checked against the oracle by the differential tests
 * (mpi-differential.test.ts, nccl.test.ts).
 */
import { describe, expect, it } from "vitest";
import { readDevice, toDevice } from "../src/backends/nccl/index.js";
import { tensor, view } from "../src/core/buffer.js";
import { InvalidArgumentError } from "../src/core/errors.js";
import { loadNative } from "../src/native/load.js";
import { MPI_COLLECTIVES, NCCL_COLLECTIVES } from "../src/native/types.js";
import { runFakeRanks } from "./support/nccl-fake.js";

const loaded = loadNative();
const addon = loaded.ok ? loaded.addon : undefined;

/** The message a native call throws (it must throw: no communicator 999 exists). */
function thrown(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  throw new Error("expected the call to throw");
}

describe("one native entry per engine, naming the C function", () => {
  it.skipIf(!addon?.mpi)("mpi.cc's collective() takes every MpiCollective and nothing else", () => {
    const mpi = addon!.mpi!;
    const call = (fn: string) => () => mpi.collective(fn as never, null, 0, null, 0, 0, "int32", "sum", 0, 999);
    for (const fn of MPI_COLLECTIVES) expect(thrown(call(fn)), fn).toMatch(/invalid or freed communicator handle 999/);
    for (const fn of ["MPI_Alltoallv", "MPI_Allreduce_typo", "allreduce"]) {
      expect(thrown(call(fn)), fn).toMatch(/no MPI collective/);
    }
  });

  it.skipIf(!addon?.nccl?.cuda)("nccl.cc's collective() takes every NcclCollective and nothing else", () => {
    const nccl = addon!.nccl!;
    const call = (fn: string) => () => nccl.collective(fn as never, 0n, 0, 0n, 0, 0, "int32", "sum", 0, 999, 999);
    for (const fn of NCCL_COLLECTIVES) expect(thrown(call(fn)), fn).not.toMatch(/no NCCL collective/);
    for (const fn of ["ncclSend", "ncclAllreduce", "allReduce"]) {
      expect(thrown(call(fn)), fn).toMatch(/no NCCL collective/);
    }
  });
});

describe("MPI's names over NCCL's table keep MPI's conventions (fake engine)", () => {
  for (const nccl228 of [true, false]) {
    it(`in place and out of place, 3 ranks${nccl228 ? "" : ", NCCL < 2.28 (grouped send/recv)"}`, async () => {
      const n = 3;
      await runFakeRanks(
        n,
        async (c) => {
          const b = c.builtin;
          const r = c.rank;
          const dev = (xs: number[]) => toDevice(c, tensor("int32", xs));
          const values = async (buf: Awaited<ReturnType<typeof dev>>) => [...(await readDevice(view(buf)))];

          // reduce_scatter_block in place: MPI leaves the result at the start of the buffer.
          const rs = await dev([r, 10 * r, 100 * r, 1, 2, 3]);
          await b.reduceScatterBlock(null, view(rs), 2, "sum");
          const sums = [3, 30, 300, 3, 6, 9];
          expect((await values(rs)).slice(0, 2), "reduceScatterBlock in place").toEqual(sums.slice(2 * r, 2 * r + 2));
          const rsOut = c.alloc("int32", 2);
          await b.reduceScatterBlock(view(await dev([r, 10 * r, 100 * r, 1, 2, 3])), view(rsOut), 2, "sum");
          expect(await values(rsOut), "reduceScatterBlock").toEqual(sums.slice(2 * r, 2 * r + 2));

          // scatter in place at the root (a null recv): its own block stays in send.
          const root = 1;
          const sc = await dev([7, 8, 9]);
          const scOut = c.alloc("int32", 1);
          await b.scatter(r === root ? view(sc) : null, r === root ? null : view(scOut), 1, root);
          if (r === root) expect(await values(sc), "scatter root, in place").toEqual([7, 8, 9]);
          else expect(await values(scOut), "scatter").toEqual([7 + r]);

          // gather in place at the root (a null send): its own block already in recv.
          const ga = await dev(r === root ? [0, 51, 0] : [50 + r]);
          await b.gather(r === root ? null : view(ga), r === root ? view(ga) : null, 1, root);
          if (r === root) expect(await values(ga), "gather root, in place").toEqual([50, 51, 52]);

          // all-to-all in place (NCCL has none: a copy of the input is sent).
          const aa = await dev([3 * r, 3 * r + 1, 3 * r + 2]);
          await b.alltoall(null, view(aa), 1);
          expect(await values(aa), "alltoall in place").toEqual([r, 3 + r, 6 + r]);

          // reduce in place at the root, and an allgather in place.
          const rd = await dev([r + 1, 2]);
          await b.reduce(r === 0 ? null : view(rd), r === 0 ? view(rd) : null, "max", 0);
          if (r === 0) expect(await values(rd), "reduce root, in place").toEqual([3, 2]);
          const ag = await dev([0, 0, 0].map((_, i) => (i === r ? 40 + r : -1)));
          await b.allgather(null, view(ag), 1);
          expect(await values(ag), "allgather in place").toEqual([40, 41, 42]);

          // What is refused before anything is enqueued rejects, as the rest of the stream-ordered API.
          const bad = b.allreduce(view(ag), view(ag), "nonsense");
          expect(bad).toBeInstanceOf(Promise);
          await expect(bad).rejects.toThrow(InvalidArgumentError);
          await expect(b.allreduce(view(ag), view(ag), "bxor")).rejects.toThrow(/no bitwise reductions/);
          await b.barrier();
        },
        { nccl228 },
      );
    });
  }
});
