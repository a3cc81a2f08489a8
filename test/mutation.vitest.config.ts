/**
 * Vitest configuration for mutation testing (npm run test:mutation, stryker.config.json): the
 * tests that hold algorithms/ to their contract, on a smaller matrix so each mutant runs fast.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/algorithms.check.test.ts",
      "test/algorithms.property.test.ts",
      "test/headers.test.ts",
      "test/trees.test.ts",
      "test/pat.test.ts",
      "test/swing.test.ts",
      "test/swing-torus.test.ts",
      "test/bine.test.ts",
      "test/hierarchical.test.ts",
      "test/double-binary-tree.test.ts",
      "test/exchange.test.ts",
      "test/dsl-chunks.test.ts",
      "test/ring-buffers.test.ts",
    ],
    env: { CCLAB_CHECK_MAX_SIZE: "12", CCLAB_PROPERTY_RUNS: "12", CCLAB_MUTATION: "1" },
    testTimeout: 120_000,
    pool: "forks",
  },
});
