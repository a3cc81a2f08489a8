/**
 * native/build.mjs's staleness check for engines: an addon built before MPI was installed is
 * rebuilt by the next `npm install` once CMake would find MPI (its wrapper on PATH), and only then;
 * not when the build was told to leave MPI out, not when the addon has it, and not again when the
 * last build already saw MPI and CMake could not use it.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { engineStaleReason, findableEngines } from "../native/build.mjs";

const dir = mkdtempSync(join(tmpdir(), "cclab-native-build-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("findableEngines: MPI where CMake's FindMPI would look", () => {
  it("finds MPI through mpicc on PATH, or MPI_HOME, and not on a PATH without it", () => {
    const empty = join(dir, "empty");
    const withMpi = join(dir, "mpi");
    mkdirSync(empty);
    mkdirSync(withMpi);
    writeFileSync(join(withMpi, "mpicc"), "#!/bin/sh\n");
    chmodSync(join(withMpi, "mpicc"), 0o755);
    expect(findableEngines({ PATH: empty }).mpi).toBe(false);
    expect(findableEngines({ PATH: withMpi }).mpi).toBe(true);
    expect(findableEngines({ PATH: empty, MPI_HOME: "/opt/mpi" }).mpi).toBe(true);
    expect(findableEngines({ PATH: empty, CUDACXX: "/opt/cuda/bin/nvcc" }).cuda).toBe(true);
  });
});

describe("engineStaleReason", () => {
  const none = { mpi: false, cuda: false };
  const off = { mpi: false, cuda: false };
  it("MPI installed after an addon built without it: rebuild, saying why", () => {
    expect(engineStaleReason({ findable: { mpi: true, cuda: false }, built: none, off, seen: [] })).toBe(
      "MPI is installed now but the addon was built without it",
    );
  });
  it("no reason when the addon has it, MPI is off, MPI is not there, or the last build already missed it", () => {
    const findable = { mpi: true, cuda: false };
    expect(engineStaleReason({ findable, built: { mpi: true, cuda: false }, off, seen: [] })).toBeUndefined();
    expect(engineStaleReason({ findable, built: none, off: { mpi: true, cuda: false }, seen: [] })).toBeUndefined();
    expect(engineStaleReason({ findable: none, built: none, off, seen: [] })).toBeUndefined();
    expect(engineStaleReason({ findable, built: none, off, seen: ["mpi"] })).toBeUndefined();
  });
  it("the CUDA toolkit the same way, and an addon that no longer loads", () => {
    expect(engineStaleReason({ findable: { mpi: false, cuda: true }, built: none, off, seen: [] })).toMatch(/CUDA/);
    expect(engineStaleReason({ findable: none, built: undefined, off, seen: [] })).toBe(
      "the built addon does not load",
    );
  });
});
