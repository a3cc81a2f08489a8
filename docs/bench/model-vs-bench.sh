#!/bin/sh
# The model held to real runs (docs/simulators.md, "The model against real runs"): calibrate this
# machine (alpha; beta, gamma and copy at each size the bench runs), bench every all-reduce
# algorithm on MPI at n = 2 and 4 from 1 KiB to 32 MiB, then the alpha-beta model's predictions
# beside the measured per-call medians. Output into the directory given; run from the repository
# root. ITERS (default 50) sets the bench's timed calls per size, for a machine too loaded for 50.
set -eu
out=${1:?usage: sh docs/bench/model-vs-bench.sh OUTPUT_DIRECTORY}
cclab=${CCLAB:-node src/cli/bin.js}
iters=${ITERS:-50}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
echo "calibrate: $(uptime)" > "$out/load.txt"
$cclab calibrate -o "$out/machine.json" > "$out/calibrate.txt"
algs=$($cclab list --json | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const c=JSON.parse(s).collectives.find(x=>x.name==='allreduce');console.log(c.algorithms.map(a=>a.name).join(','))})")
for n in 2 4; do
  echo "bench n = $n: $(uptime)" >> "$out/load.txt"
  $cclab bench --backend mpi -n $n --algorithm "$algs" -b 1K -e 32M -f 8 --iters "$iters" --no-progress -o "$out/bench-n$n.json" > "$out/bench-n$n.txt"
done
echo "end: $(uptime)" >> "$out/load.txt"
npx tsx test/perf/model-vs-bench.ts "$out/machine.json" "$out/bench-n2.json" "$out/bench-n4.json" | tee "$out/table.md"
