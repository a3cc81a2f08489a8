#!/bin/sh
# The model held to real runs (docs/simulators.md, "The model against real runs"): calibrate this
# machine, bench every all-reduce algorithm on MPI at n = 2 and 4 from 1 KiB to 32 MiB, then the
# alpha-beta model's predictions beside the measured per-call medians. Output into the directory
# given; run from the repository root.
set -eu
out=${1:?usage: sh docs/bench/model-vs-bench.sh OUTPUT_DIRECTORY}
cclab=${CCLAB:-node src/cli/bin.js}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
uptime > "$out/load.txt"
$cclab calibrate -o "$out/machine.json" > "$out/calibrate.txt"
algs=$($cclab list --json | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const c=JSON.parse(s).collectives.find(x=>x.name==='allreduce');console.log(c.algorithms.map(a=>a.name).join(','))})")
for n in 2 4; do
  $cclab bench --backend mpi -n $n --algorithm "$algs" -b 1K -e 32M -f 8 --iters 50 --no-progress -o "$out/bench-n$n.json" > "$out/bench-n$n.txt"
done
uptime >> "$out/load.txt"
npx tsx test/perf/model-vs-bench.ts "$out/machine.json" "$out/bench-n2.json" "$out/bench-n4.json" | tee "$out/table.md"
