#!/usr/bin/env bash
# cclab on a GPU machine lent through the device tool: builds the addon with CUDA, runs
# `cclab verify --backend nccl` at 2, 3 and 4 ranks, `cclab bench --backend nccl` for all-reduce,
# all-gather, reduce-scatter, broadcast and all-to-all from 1K to 256M, and the GPU suite, and
# writes what docs/gpu.md records. First, on the development machine, in the repository root:
#   bash test/gpu/device-prep.sh     # node and the production node_modules into .device/ (git-ignored)
# then, for a whole loan in one call (15 minutes of device time, starts included):
#   run(carry=[".device"], timeout_s=600, command="OUT=$OUT bash test/gpu/device-loan.sh")
# or single phases, one device-tool call each:
#   run(carry=[".device"], timeout_s=600, command="bash test/gpu/device-run.sh setup verify")
# A warm machine keeps node, node_modules and the build between calls; a fresh one sets up again.
#
# Phases, run in the order given (default: setup verify bench); each starts only with enough of
# the call's time left (CCLAB_DEVICE_CALL_S, default 570 s) and is cut off at what is left:
#   setup   unpacks node (with xz, or Python's lzma where xz is missing) and node_modules, builds
#           the addon for this GPU's architecture with CCLAB_NO_MPI=1 (an MPI on the image must not
#           break the build), fails loudly where a GPU is present but the addon has no CUDA, and
#           records the date, GPU, driver, CUDA and NCCL. Every other phase runs it first.
#   verify  cclab verify --backend nccl -n N for N in 2 3 4, one launch each (CCLAB_VERIFY_S cap)
#   bench   cclab bench --backend nccl -n 2, 1K..256M (CCLAB_BENCH_MAX, factor CCLAB_BENCH_FACTOR),
#           hand-rolled beside NCCL's own (CCLAB_BENCH_S cap each)
#   enqueue host time per enqueued step (test/gpu/enqueue-cost.ts)
#   suite   test/gpu/run.ts: the npm run test:gpu checks without vitest
# NCCL_DEBUG=WARN (unless set) puts NCCL's own reasons in the logs.
# Back in $OUT (the tool returns at most 8 files): summary.txt (every step, its command and exit
# status), record.md (the section to paste into docs/gpu.md: environment, commands, verify
# tables, bench tables), build.txt, verify.txt, bench.txt, enqueue.txt, gpu.txt. Without $OUT: .device/out.
# Exit status: 0 if every step passed, else the last failing step's (3: addon without CUDA).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-.device/out}"
mkdir -p "$out"
call_s="${CCLAB_DEVICE_CALL_S:-570}"
status=0
export CCLAB_NO_MPI=1 NCCL_DEBUG="${NCCL_DEBUG:-WARN}" CCLAB_TIMEOUT="${CCLAB_TIMEOUT:-120}"

log() { echo "== $*" | tee -a "$out/summary.txt"; }
md() { printf '%s\n' "$@" >> "$out/record.md"; }
left() { echo $((call_s - SECONDS)); }

# Every process below $1 (cclab run starts its ranks detached, in their own sessions, so a
# process-group kill would miss them).
descendants() {
  awk -v root="$1" '
    { s = $0; sub(/.*\) /, "", s); split(s, f, " "); pid = FILENAME; gsub(/[^0-9]/, "", pid); parent[pid] = f[2] }
    END {
      tree[root] = 1
      for (grew = 1; grew;) { grew = 0; for (p in parent) if (!(p in tree) && (parent[p] in tree)) { tree[p] = 1; grew = 1 } }
      for (p in tree) if (p != root) print p
    }' /proc/[0-9]*/stat 2> /dev/null
}

any_alive() {
  local p
  for p in "$@"; do kill -0 "$p" 2> /dev/null && return 0; done
  return 1
}

# step NAME MIN_S CAP_S FILE CMD...: runs CMD (stdout and stderr to FILE, stdout alone also to
# $out/step.out) if MIN_S seconds are left in this call, for at most CAP_S and what is left;
# past that, CMD and everything it started get SIGTERM, then SIGKILL.
step() {
  local name="$1" min="$2" cap="$3" file="$4"
  shift 4
  local budget
  budget=$(left)
  if [ "$budget" -lt "$min" ]; then
    log "$name: SKIPPED (${budget} s left of this call; needs ${min} s): run it in another call"
    md "" "**$name: not run** (no time left in this call)"
    return 0
  fi
  [ "$budget" -gt "$cap" ] && budget="$cap"
  log "$name: $* (at most ${budget} s)"
  echo "### $name: $*" >> "$out/$file"
  local t0=$SECONDS rc pid tree
  "$@" > >(tee -a "$out/$file" > "$out/step.out") 2> >(tee -a "$out/$file" >&2) &
  pid=$!
  while kill -0 "$pid" 2> /dev/null && [ $((SECONDS - t0)) -lt "$budget" ]; do sleep 1; done
  if kill -0 "$pid" 2> /dev/null; then
    tree="$pid $(descendants "$pid" | tr '\n' ' ')"
    log "$name: TIMED OUT after ${budget} s; stopping $tree"
    kill -TERM $tree 2> /dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do any_alive $tree || break; sleep 1; done
    kill -KILL $tree 2> /dev/null
  fi
  wait "$pid"
  rc=$?
  sleep 0.2 # the tee of the last lines
  log "$name: exit $rc in $((SECONDS - t0)) s"
  [ "$rc" -ne 0 ] && status=$rc
  return "$rc"
}

unxz_to() { # unxz_to FILE.xz DEST
  if command -v xz > /dev/null; then
    xz -dc "$1" > "$2"
  else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"
  fi
}

untar_xz() { # untar_xz FILE.tar.xz (into the current directory)
  if command -v xz > /dev/null; then
    tar -xJf "$1"
  else
    python3 -c '
import sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as t:
    t.extractall(filter="tar") if hasattr(tarfile, "tar_filter") else t.extractall()' "$1"
  fi
}

setup() {
  mkdir -p /tmp/cclab-node/bin
  if [ ! -x /tmp/cclab-node/bin/node ]; then
    [ -f .device/node.xz ] || { log "setup: .device/node.xz missing: run bash test/gpu/device-prep.sh and carry .device"; exit 1; }
    unxz_to .device/node.xz /tmp/cclab-node/bin/node && chmod +x /tmp/cclab-node/bin/node
  fi
  export PATH="/tmp/cclab-node/bin:$PATH"
  [ -d node_modules/tsx ] || untar_xz .device/node_modules.tar.xz
  # nvcc where CMake looks first, whatever PATH says (CMakeLists.txt also tries /usr/local/cuda/bin).
  [ -z "${CUDACXX:-}" ] && ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ] && export CUDACXX=/usr/local/cuda/bin/nvcc
  local gpus arch stamp
  gpus="$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)"
  arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d '. ')"
  export CCLAB_CUDA_ARCHITECTURES="${CCLAB_CUDA_ARCHITECTURES:-${arch:-90}}"
  stamp="/tmp/cclab-node/built-$(cat native/* | md5sum | cut -c1-12)-$CCLAB_CUDA_ARCHITECTURES"
  if [ ! -f "$stamp" ] || [ ! -f build/Release/cclab.node ]; then
    step build 120 420 build.txt node native/build.mjs --force || { log "setup: the addon did not build (build.txt)"; exit 1; }
    touch "$stamp"
  fi
  if [ "${gpus:-0}" -gt 0 ] && ! node -e 'process.exit(require("./build/Release/cclab.node").engines().cuda ? 0 : 1)'; then
    log "FATAL: this machine has ${gpus} GPU(s) but the addon was built WITHOUT CUDA (CMake found no nvcc: see build.txt; set CUDACXX)"
    exit 3
  fi
  if [ ! -s "$out/record.md" ]; then
    local smi
    smi="$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2> /dev/null | head -1)"
    md "### $(date -u +%Y-%m-%d) ($(date -u +%H:%MZ)): ${smi:-no nvidia-smi}" ""
    md "- nvidia-smi: ${smi:-none}; $(nvidia-smi 2> /dev/null | grep -o 'CUDA Version: [0-9.]*' | head -1) (driver)"
    md "- nvcc: $(nvcc --version 2> /dev/null | grep -o 'release [0-9.]*, V[0-9.]*' || echo none); node $(node --version); CCLAB_CUDA_ARCHITECTURES=$CCLAB_CUDA_ARCHITECTURES"
    node --import tsx test/gpu/device-info.ts 2,3,4 >> "$out/record.md" 2>> "$out/summary.txt" ||
      log "setup: the nccl backend cannot run here (summary.txt says why)"
    md "- environment: CCLAB_NO_MPI=1 NCCL_DEBUG=$NCCL_DEBUG CCLAB_TIMEOUT=$CCLAB_TIMEOUT"
  fi
  cat "$out/record.md"
}

# The table of `cclab verify` (box drawing) and its verdict lines, from the last step's stdout.
verify_table() { grep -E '^[┌│├└]|agree with NCCL|FAILED|^replay:' "$out/step.out" || echo "(no table: see verify.txt)"; }

verify() {
  local n rc
  for n in ${CCLAB_VERIFY_SIZES:-2 3 4}; do
    step "verify -n $n" 60 "${CCLAB_VERIFY_S:-170}" verify.txt \
      node src/cli/bin.js verify --backend nccl -n "$n" --runs "${CCLAB_VERIFY_RUNS:-4}" --seed 1
    rc=$?
    md "" "\`cclab verify --backend nccl -n $n --runs ${CCLAB_VERIFY_RUNS:-4} --seed 1\`: exit $rc" '```'
    verify_table >> "$out/record.md"
    md '```'
  done
}

bench() {
  local spec coll alg rc
  for spec in ${CCLAB_BENCH_SET:-allreduce:ring allgather:ring reducescatter:ring broadcast:auto alltoall:pairwise}; do
    coll="${spec%%:*}" alg="${spec#*:}"
    local cmd=(node src/cli/bin.js bench "$coll" --algorithm "$alg" --backend nccl -n "${CCLAB_BENCH_NP:-2}"
      -b 1K -e "${CCLAB_BENCH_MAX:-256M}" -f "${CCLAB_BENCH_FACTOR:-2}" --iters "${CCLAB_BENCH_ITERS:-10}" -w 2 --no-progress)
    step "bench $coll" 45 "${CCLAB_BENCH_S:-100}" bench.txt "${cmd[@]}"
    rc=$?
    md "" "\`cclab ${cmd[*]:2}\`: exit $rc" '```'
    cat "$out/step.out" >> "$out/record.md"
    md '```'
  done
}

# Host time per enqueued step (test/gpu/enqueue-cost.ts: 1 KiB all-reduces, NCCL groups counted,
# each call timed alone on an idle stream and back to back), with cclab's default non-blocking
# communicators (each group polled until NCCL has enqueued it), the same with a bounded spin on
# ncclCommGetAsyncError after ncclInProgress (the script's experiment, not the library's), and
# with CCLAB_NCCL_BLOCKING=1 (ncclGroupEnd returns once enqueued): where the host time goes.
enqueue() {
  local variant blocking spin calls="${CCLAB_ENQUEUE_CALLS:-500}"
  for variant in 0:0 0:${CCLAB_ENQUEUE_SPIN_US:-200} 1:0; do
    blocking=${variant%%:*} spin=${variant#*:}
    step "enqueue cost (CCLAB_NCCL_BLOCKING=$blocking, spin $spin us)" 30 "${CCLAB_ENQUEUE_S:-60}" enqueue.txt \
      env CCLAB_NCCL_BLOCKING=$blocking node src/cli/bin.js run -n 2 --backend nccl test/gpu/enqueue-cost.ts "$calls" "$spin"
    md "" "\`CCLAB_NCCL_BLOCKING=$blocking cclab run -n 2 --backend nccl test/gpu/enqueue-cost.ts $calls $spin\`: exit $?" '```'
    grep -E '^(\[rank 0\] )?enqueue' "$out/step.out" >> "$out/record.md"
    md '```'
  done
}

suite() {
  step "gpu suite" 120 "$(left)" gpu.txt node --import tsx test/gpu/run.ts "${CCLAB_GPU_RUNS:-4}"
  md "" "\`node --import tsx test/gpu/run.ts ${CCLAB_GPU_RUNS:-4}\` (npm run test:gpu without vitest): exit $?" '```'
  grep -E '^(PASS|FAIL|test/gpu|[0-9]+ passed|FAILED)' "$out/step.out" >> "$out/record.md"
  md '```'
}

phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(setup verify bench)
log "device-run: ${phases[*]} ($(date -u +%FT%TZ), $(nvidia-smi -L 2> /dev/null | head -4 | tr '\n' ';'))"
setup
for p in "${phases[@]}"; do
  case "$p" in
    setup) ;;
    verify | bench | enqueue | suite) "$p" ;;
    *) log "unknown phase '$p' (setup, verify, bench, enqueue, suite)"; status=2 ;;
  esac
done
rm -f "$out/step.out"
log "device-run: exit $status; record.md is the section for docs/gpu.md"
exit "$status"
