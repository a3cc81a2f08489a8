/**
 * Vitest configuration for mutation testing the static checker itself (npm run
 * test:mutation:checker, test/stryker.checker.config.json): the tests that hold the proof to rejecting
 * what is wrong (broken schedules, mutants, MSCCL's broken controls, runs against cells) and to
 * accepting what is right (every registered algorithm), on the mutation run's smaller matrix.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/checker.test.ts",
      "test/verify-runs.test.ts",
      "test/verify-walk.test.ts",
      "test/verify-rotation.test.ts",
      "test/verify-cases.test.ts",
      "test/msccl.broken.test.ts",
      "test/algorithms.check.test.ts",
    ],
    env: { CCLAB_CHECK_MAX_SIZE: "12", CCLAB_PROPERTY_RUNS: "12", CCLAB_MUTATION: "1" },
    testTimeout: 120_000,
    pool: "forks",
  },
});
