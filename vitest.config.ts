import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two cores in CI: forks keep MPI/native tests isolated from each other.
    pool: "forks",
  },
});
