#!/bin/sh
# The same set again at 87efbcc (718b683 + docs), for a second reading: issue 26 command on the compiled package (npm run build first) (a comm keeps probes
# for its last 8 call shapes, so the first call of a round no longer makes its call anew): the set
# with bench's default (-a 1), then with -a 3 into a3/.
CCLAB="node dist/src/cli/cclab.js" sh docs/bench/issue26.sh docs/bench/2026-11-27-probes2
CCLAB="node dist/src/cli/cclab.js" BENCH_FLAGS="-a 3" sh docs/bench/issue26.sh docs/bench/2026-11-27-probes2/a3
