#!/bin/sh
# docs/performance.md's Results, 2026-11-27, on a fresh clone (npm install, npm run build), the
# compiled package, nothing else running: the set with bench's default (-a 1), then with -a 3 into a3/.
# The per-call JSON series of these runs are not kept (each ~160 KB); the .txt outputs are.
CCLAB="node dist/src/cli/cclab.js" sh docs/bench/allreduce-mpi.sh docs/bench/2026-11-27-fresh
CCLAB="node dist/src/cli/cclab.js" BENCH_FLAGS="-a 3" sh docs/bench/allreduce-mpi.sh docs/bench/2026-11-27-fresh/a3
