#!/bin/sh
# The all-reduce measurements of docs/performance.md's "Results": bench on MPI at n = 2 and n = 4,
# 200 and 2,000 calls, twice each, one after another, every output with the time and `uptime`
# before and after, written into the directory given; `python3 docs/bench/summarise.py DIR` prints
# the tables. Run from the repository root (a dated directory's run.sh records the exact
# invocation of a kept set). The 2,000-call runs stop at 512 KiB (-e 512K):
# to 32 MiB they would take 17 - 30 min each here (13 calls of every size per timed call, 2,000
# times, at 30 - 100 ms a call), and per-call timing is about small messages (OSU times small
# messages over many iterations and large ones over few, as the 2026-11-23 runs did).
# CCLAB names the command (default: node src/cli/bin.js, the clone's sources through tsx); with
# CCLAB="node dist/src/cli/cclab.js" (after npm run build) the ranks run the compiled package, as an
# installed cclab does, without tsx's module-hooks thread beside each rank. BENCH_FLAGS adds flags
# to every bench command (e.g. BENCH_FLAGS="-a 3": each time the maximum over ranks, the default is nccl-tests' -a 1, the mean).
set -u
out=${1:?usage: sh docs/bench/allreduce-mpi.sh OUTPUT_DIRECTORY}
cclab=${CCLAB:-node src/cli/bin.js}
flags=${BENCH_FLAGS:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {
  name=$1
  shift
  {
    echo "# $(date -u +%H:%M:%S) UTC; uptime: $(uptime)"
    echo "# $*"
    "$@" 2>&1
    echo "# $(date -u +%H:%M:%S) UTC; uptime: $(uptime)"
  } >"$out/$name.txt"
}
algs=ring,segmented_ring,recursive_doubling
for r in 1 2; do
  for n in 2 4; do
    run "n$n-200-run$r" $cclab bench --backend mpi -n $n --algorithm $algs -b 1K -e 32M -f 8 --iters 200 --floors --no-progress $flags -o "$out/n$n-200-run$r.json"
    run "n$n-2000-run$r" $cclab bench --backend mpi -n $n --algorithm $algs -b 1K -e 512K -f 8 --iters 2000 --no-progress $flags
  done
done
