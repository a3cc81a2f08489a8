#!/bin/sh
# Issue 26's command on a fresh clone of 7fbc087 (npm install, npm run build), the compiled
# package, nothing else running: the set with bench's default (-a 1), then with -a 3 into a3/.
CCLAB="node dist/src/cli/cclab.js" sh docs/bench/issue26.sh docs/bench/2026-11-27-fresh
CCLAB="node dist/src/cli/cclab.js" BENCH_FLAGS="-a 3" sh docs/bench/issue26.sh docs/bench/2026-11-27-fresh/a3
