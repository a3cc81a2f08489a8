#!/bin/sh
# The ring all-reduce receiving out of place where the sum goes (allreduce/ring since 23b7797)
# beside the same ring receiving into a scratch chunk (test/perf/ring-scratch.ts, what it did
# before) and MPI_Allreduce, in the same runs; n = 2 and 4, twice each. On the compiled package
# (npm run build first), from the repository root: sh docs/bench/2026-11-27-recv-into-output/run.sh
d=docs/bench/2026-11-27-recv-into-output
for n in 2 4; do
  for run in 1 2; do
    uptime > "$d/n$n-run$run.txt"
    node dist/src/cli/cclab.js bench allreduce --backend mpi -n "$n" --algorithm-file test/perf/ring-scratch.ts \
      --algorithm ring,ring_scratch,segmented_ring -b 64K -e 32M -f 4 --iters 200 --no-progress >> "$d/n$n-run$run.txt" 2>&1
    uptime >> "$d/n$n-run$run.txt"
  done
done
