#!/usr/bin/env bash
# Packs what a bare GPU machine needs to run cclab's GPU checks into .device/ (git-ignored), on
# the development machine, from the repository root:
#   bash test/gpu/device-prep.sh
# .device/node.xz               this machine's node binary (the GPU image has no Node.js)
# .device/node_modules.tar.xz   the production dependencies only (tsx, esbuild, cmake-js,
#                               node-addon-api, node-api-headers, commander, fast-check, ...)
# Then, on the GPU machine, with .device carried: bash test/gpu/device-run.sh (its header and
# docs/gpu.md say how). About 30 MB; the working tree that travels must stay under 64 MiB.
# Compresses with xz, or with Python's lzma where xz is missing (device-run.sh reads either way).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d node_modules ] || { echo "device-prep: run npm install first" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "device-prep: the GPU machines are x86-64; this is $(uname -m)" >&2; exit 1; }
mkdir -p .device
xz_to() { # xz_to LEVEL DEST < data
  if command -v xz > /dev/null; then
    xz -T0 "-$1" -c > "$2"
  else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(sys.stdin.buffer, lzma.open(sys.argv[2], "wb", preset=int(sys.argv[1])))' "$1" "$2"
  fi
}
node_bin="$(command -v node)"
if [ ! -f .device/node.xz ] || [ "$node_bin" -nt .device/node.xz ]; then
  echo "device-prep: compressing $node_bin ($(node --version))"
  xz_to 4 .device/node.xz.tmp < "$node_bin" && mv .device/node.xz.tmp .device/node.xz
fi
# Production dependencies, each directory once (nested ones only where their parent is not kept).
npm ls --omit=dev --parseable --all 2> /dev/null | sed "s#^$PWD/##" | grep '^node_modules/' | sort -u |
  awk '{ for (i in kept) if (index($0, kept[i] "/") == 1) next; kept[NR] = $0; print }' > .device/prod.txt
tar -cf - -T .device/prod.txt | xz_to 6 .device/node_modules.tar.xz
echo "device-prep: $(wc -l < .device/prod.txt) packages; .device is $(du -sh .device | cut -f1)"
