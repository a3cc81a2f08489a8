#!/bin/sh
# Issue 26's command on the compiled package (npm run build first) after the ring receives out of
# place where the sum goes (23b7797): the set with bench's default (-a 1, the mean over ranks),
# then with -a 3 (the maximum, bench's figure before -a) into a3/.
CCLAB="node dist/src/cli/cclab.js" sh docs/bench/issue26.sh docs/bench/2026-11-27-recv
CCLAB="node dist/src/cli/cclab.js" BENCH_FLAGS="-a 3" sh docs/bench/issue26.sh docs/bench/2026-11-27-recv/a3
