#!/usr/bin/env bash
# A whole 15-minute device loan in ONE device-tool call (the machine's start counts against the
# loan, and it stays warm only ~30 s after a call, so a second call is seldom possible):
#   bash test/gpu/device-prep.sh                                   # here, first
#   run(carry=[".device"], timeout_s=600, command="bash test/gpu/device-loan.sh")
# Runs test/gpu/device-run.sh's phases most important first, under one deadline for the whole
# call (CCLAB_LOAN_S, default 570 s), each phase cut off at what is left:
#   1. setup (build for this GPU, record the environment) and cclab verify --backend nccl -n 2
#   2. host time per enqueued step (test/gpu/enqueue-cost.ts, three variants)
#   3. the GPU suite (test/gpu/run.ts)
#   4. verify at -n 3 and 4
#   5. bench all-reduce: ring, double_binary_tree and segmented_ring beside ncclAllReduce, 1K..256M
#      (factor 4)
#   6. bench all-to-all, broadcast, all-gather, reduce-scatter (factor 16)
# Everything lands in $OUT as it goes (device-run.sh's files), so a phase cut off leaves what it
# printed. Stops after step 1 when the addon did not build or has no CUDA.
set -uo pipefail
cd "$(dirname "$0")/../.."
total="${CCLAB_LOAN_S:-570}"
status=0
phase() { # phase VAR=VALUE... -- device-run.sh ARGS...
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  local left=$((total - SECONDS))
  [ "$left" -gt 30 ] || { echo "== device-loan: no time left for $*"; return; }
  env ${vars[@]+"${vars[@]}"} CCLAB_DEVICE_CALL_S="$left" bash test/gpu/device-run.sh "$@"
  local rc=$?
  [ "$rc" -ne 0 ] && status=$rc
  return "$rc"
}
# CCLAB_LOAN_VERIFY=0 leaves verify out (a second loan, after a first that verified).
verify=verify
[ "${CCLAB_LOAN_VERIFY:-1}" = 0 ] && verify=
# Setup alone first: its failure (exit 1: no build; 3: no CUDA) stops the loan; verify's exit 1
# (a disagreement) does not.
phase -- setup
rc=$?
if [ "$rc" -ne 0 ] || [ ! -f build/Release/cclab.node ]; then
  echo "== device-loan: setup failed (exit $rc): stopping here"
  exit "$rc"
fi
[ -n "$verify" ] && phase CCLAB_VERIFY_SIZES=2 CCLAB_VERIFY_S=150 -- verify
phase CCLAB_ENQUEUE_S=60 -- enqueue
phase -- suite
[ -n "$verify" ] && phase "CCLAB_VERIFY_SIZES=3 4" CCLAB_VERIFY_S=100 -- verify
phase "CCLAB_BENCH_SET=allreduce:ring,double_binary_tree,segmented_ring" CCLAB_BENCH_FACTOR=4 CCLAB_BENCH_S=210 -- bench
phase "CCLAB_BENCH_SET=alltoall:pairwise broadcast:auto allgather:ring reducescatter:ring" CCLAB_BENCH_FACTOR=16 CCLAB_BENCH_S=45 -- bench
echo "== device-loan: exit $status after $SECONDS s"
exit "$status"
