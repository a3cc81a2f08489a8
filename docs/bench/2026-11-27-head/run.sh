#!/bin/sh
# Issue 26's command on the compiled package (npm run build first) at 3e46d21, the session's last
# code (the same schedules as 23b7797's set, docs/bench/2026-11-27-recv): the set with bench's
# default (-a 1), then with -a 3 into a3/.
CCLAB="node dist/src/cli/cclab.js" sh docs/bench/issue26.sh docs/bench/2026-11-27-head
CCLAB="node dist/src/cli/cclab.js" BENCH_FLAGS="-a 3" sh docs/bench/issue26.sh docs/bench/2026-11-27-head/a3
