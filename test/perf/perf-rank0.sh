#!/bin/sh
# Runs node under `perf record` on MPI rank 0 (and plain node on the others), for a CPU profile of
# one rank with V8's JIT frames named: perf.data lands in $PERF_OUT (default /tmp/cclab-perf.data), and
# V8's own log, which --perf-basic-prof writes, beside it (else isolate-*-v8.log in the working directory).
# Not a test. e.g. mpirun -np 2 test/perf/perf-rank0.sh --import tsx test/perf/loop-prof.ts
#   then: perf report -i /tmp/cclab-perf.data --no-children --sort sym
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then
  out=${PERF_OUT:-/tmp/cclab-perf.data}
  exec perf record -e cpu-clock -F 10000 -g -o "$out" node --perf-basic-prof --interpreted-frames-native-stack \
    --no-logfile-per-isolate --logfile="$out.v8.log" "$@"
fi
exec node "$@"
