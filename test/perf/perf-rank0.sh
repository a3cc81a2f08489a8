#!/bin/sh
# Runs node under `perf record` on MPI rank 0 (and plain node on the others), for a CPU profile of
# one rank with V8's JIT frames named: perf.data lands in $PERF_OUT (default /tmp/cclab-perf.data).
# Not a test. e.g. mpirun -np 2 test/perf/perf-rank0.sh --import tsx test/perf/loop-prof.ts
#   then: perf report -i /tmp/cclab-perf.data --no-children --sort sym
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then
  exec perf record -e cpu-clock -F 10000 -g -o "${PERF_OUT:-/tmp/cclab-perf.data}" node --perf-basic-prof --interpreted-frames-native-stack "$@"
fi
exec node "$@"
