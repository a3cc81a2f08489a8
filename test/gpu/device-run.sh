#!/usr/bin/env bash
# The first command of a session that has a GPU machine (after bash test/gpu/device-prep.sh here):
#   run(carry=[".device"], command="bash test/gpu/device-run.sh")
# Unpacks node and the production node_modules, builds the addon with CUDA for this GPU, then
# runs cclab verify --backend nccl and the GPU suite (test/gpu/run.ts, the same checks as
# npm run test:gpu without vitest). Logs go to $OUT (or .device/out). Exit status: the suite's.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-.device/out}"
mkdir -p "$out" /tmp/cclab-node/bin
log() { echo "== $*" | tee -a "$out/summary.txt"; }
xz -dc .device/node.xz > /tmp/cclab-node/bin/node && chmod +x /tmp/cclab-node/bin/node
export PATH="/tmp/cclab-node/bin:$PATH"
[ -d node_modules ] || tar -xJf .device/node_modules.tar.xz
log "node $(node --version); $(nvidia-smi -L 2>&1 | head -4 | tr '\n' ';')"
log "nvcc: $(command -v nvcc || echo none); cmake: $(command -v cmake || echo none); ninja: $(command -v ninja || echo none); c++: $(command -v c++ || command -v g++ || echo none)"
# Only this GPU's architecture: a quicker build (CCLAB_CUDA_ARCHITECTURES=native needs CMake >= 3.24).
arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')"
export CCLAB_CUDA_ARCHITECTURES="${CCLAB_CUDA_ARCHITECTURES:-${arch:-90}}"
node native/build.mjs --force 2>&1 | tee "$out/build.txt" | tail -5
node --import tsx --input-type=module -e '
  const { loadNative } = await import("./src/native/load.ts");
  const { ncclDiagnose } = await import("./src/backends/nccl/index.ts");
  const l = loadNative();
  console.log("addon:", l.ok ? JSON.stringify(l.addon.engines()) : l.reason);
  const d = ncclDiagnose();
  console.log("nccl:", JSON.stringify({ ok: d.ok, devices: d.devices, driver: d.driverVersion, library: d.library, problems: d.problems }, null, 1));
' 2>&1 | tee -a "$out/summary.txt"
log "cclab verify --backend nccl"
CCLAB_NCCL_NP="${CCLAB_NCCL_NP:-4}" CCLAB_TIMEOUT=120 node src/cli/bin.js verify --backend nccl --runs 4 --seed 1 \
  > "$out/verify.txt" 2>&1
echo "verify exit $?" | tee -a "$out/summary.txt"
tail -45 "$out/verify.txt"
log "test/gpu/run.ts"
CCLAB_TIMEOUT=120 node --import tsx test/gpu/run.ts "${CCLAB_GPU_RUNS:-4}" > "$out/gpu.txt" 2>&1
status=$?
grep -E '^(PASS|FAIL|test/gpu|[0-9]+ passed)' "$out/gpu.txt" | tee -a "$out/summary.txt"
echo "gpu suite exit $status" | tee -a "$out/summary.txt"
exit $status
