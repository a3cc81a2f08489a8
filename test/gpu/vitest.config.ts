import { defineConfig } from "vitest/config";

// npm run test:gpu: the nccl backend on real GPUs. Its files end in .gpu.ts so the normal suite
// (test/**/*.test.ts) never picks them up; without a GPU and NCCL every test skips, saying why.
export default defineConfig({
  test: {
    include: ["test/gpu/**/*.gpu.ts"],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: false,
  },
});
