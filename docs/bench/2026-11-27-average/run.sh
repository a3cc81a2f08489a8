#!/bin/sh
# Issue 26's command on the compiled package (npm run build first) after bench -a: the set as the
# issue gives it (bench's default, nccl-tests' -a 1: each time the mean over ranks), then the same
# set with -a 3 (each time the maximum over ranks, bench's figure before -a) into a3/.
CCLAB="node dist/src/cli/cclab.js" sh docs/bench/issue26.sh docs/bench/2026-11-27-average
CCLAB="node dist/src/cli/cclab.js" BENCH_FLAGS="-a 3" sh docs/bench/issue26.sh docs/bench/2026-11-27-average/a3
