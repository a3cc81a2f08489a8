#!/usr/bin/env python3
"""The tables of docs/performance.md's Results, read from the outputs of docs/bench/allreduce-mpi.sh (no packages).

    python3 docs/bench/summarise.py docs/bench/2026-11-27-fresh [more set directories]

For each set directory (n2-200-run1.txt ... n4-2000-run2.txt, as allreduce-mpi.sh writes them) it prints
the tables docs/performance.md quotes: per size, the best hand-rolled ratio by per-call median
(run 1 / run 2), each hand-rolled row's mean÷median and MPI_Allreduce's; then each "Done when"
target met or missed, and how often a row's mean÷median is over 1.3, hand-rolled rows against
MPI_Allreduce's own (one built-in row per size). With several directories it adds those counts up.
The figures are bench's own columns: time (the mean, µs), the per-call median, and the ratio from
the medians; nothing is recomputed from --json.
"""
import glob
import os
import re
import sys

ROW = re.compile(r"^\s+\d+\s+\d+\s+\w+\s+sum")
MEAN_LIMIT = 1.3


def parse(path):
    """(load before, load after, {size: [(algorithm, mean÷median, built-in mean÷median, median ratio)]})."""
    lines = open(path).read().strip().splitlines()
    load = [line.split("load average:")[1].split(",")[0].strip() for line in (lines[0], lines[-1])]
    by_size = {}
    for line in lines:
        if not ROW.match(line):
            continue
        r = line.split()
        size, mean, b_mean, median, b_median, ratio, alg = (
            int(r[0]), float(r[5]), float(r[13]), float(r[16]), float(r[19]), float(r[20]), r[22])
        by_size.setdefault(size, []).append((alg, mean / median, b_mean / b_median, ratio))
    if "Out of bounds values : 0 OK" not in "\n".join(lines):
        print(f"!! {path}: not every value was right (no 'Out of bounds values : 0 OK')")
    return load, by_size


def fmt(size):
    return f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"


def summarise(d, totals):
    mean_ok = mean_rows = 0
    misses = []
    over = [0, 0, 0, 0]  # hand-rolled rows over the limit, hand-rolled rows, built-in rows over, built-in rows
    for n in (2, 4):
        for calls in (200, 2000):
            runs = [parse(f"{d}/n{n}-{calls}-run{r}.txt") for r in (1, 2)]
            loads = "; ".join(f"{a} → {b}" for (a, b), _ in runs)
            print(f"\nn = {n}, {calls} calls a size (load {loads}):\n")
            print("| size | best by median ratio, run 1 / run 2 | hand-rolled mean÷median, run 1; run 2 "
                  "| MPI_Allreduce mean÷median, run 1 / run 2 | rows meeting the mean target |")
            print("|---|---|---|---|---|")
            for size in runs[0][1]:
                rows = [run[1][size] for run in runs]
                best = [max(v, key=lambda x: x[3]) for v in rows]
                ok = 0
                for v in rows:
                    over[2] += v[0][2] > MEAN_LIMIT
                    over[3] += 1
                    for alg, mm, b_mm, _ in v:
                        met = mm <= MEAN_LIMIT or mm <= b_mm
                        ok += met
                        over[0] += mm > MEAN_LIMIT
                        over[1] += 1
                        if not met:
                            misses.append(f"mean: n = {n}, {calls} calls, {fmt(size)} {alg} {mm:.3f} (MPI {b_mm:.3f})")
                mean_ok += ok
                mean_rows += sum(len(v) for v in rows)
                for (alg, _, _, ratio) in best:
                    need = 0.8 if n == 4 or size < 8192 else 1.0
                    if ratio < need:
                        misses.append(f"median: n = {n}, {calls} calls, {fmt(size)} best {alg} {ratio:.2f} < {need}")
                print(f"| {fmt(size)} | {best[0][0]} {best[0][3]:.2f} / {best[1][0]} {best[1][3]:.2f} | "
                      + "; ".join(" / ".join(f"{x[1]:.2f}" for x in v) for v in rows)
                      + f" | {rows[0][0][2]:.2f} / {rows[1][0][2]:.2f} | {ok} of {sum(len(v) for v in rows)} |")
    print(f"\n{d}: mean target {mean_ok} of {mean_rows} rows; "
          f"mean÷median over {MEAN_LIMIT}: hand-rolled {over[0]} of {over[1]} rows, MPI_Allreduce {over[2]} of {over[3]}")
    print("\n".join(["missed:"] + [f"  {m}" for m in misses]) if misses else "every target met")
    for i in range(4):
        totals[i] += over[i]


def main(dirs):
    if not dirs:
        sys.exit(__doc__)
    totals = [0, 0, 0, 0]
    for d in dirs:
        if not os.path.exists(f"{d}/n2-200-run1.txt"):
            sys.exit(f"{d}: no n2-200-run1.txt (a directory docs/bench/allreduce-mpi.sh wrote?)")
        print(f"\n## {d}")
        summarise(d.rstrip("/"), totals)
    if len(dirs) > 1:
        h, m = totals[0] / max(1, totals[1]), totals[2] / max(1, totals[3])
        print(f"\nall {len(dirs)} sets: mean÷median over {MEAN_LIMIT}: hand-rolled {totals[0]} of {totals[1]} rows "
              f"({100 * h:.1f}%), MPI_Allreduce {totals[2]} of {totals[3]} ({100 * m:.1f}%)")


if __name__ == "__main__":
    main(sys.argv[1:])
