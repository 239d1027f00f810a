#!/usr/bin/env bash
# make bench's placement section: each SGEMM module's median at several
# placements of its result, to show whether the rate depends on where the
# caller's buffers lie (issue 17: "the same rate (±10%) whatever the
# alignment of the caller's buffers").
#
#   bash bench/placement.sh BUILD OUT WORKLOADS [ROUNDS]    (make bench runs it)
#
# WORKLOADS holds make bench's lines (name|module|floor|work|...); the gemm_
# ones are measured. Each runs build/bench/run_bench, one thread, pinned,
# writing into caller-owned memory (axle_executable_run_into) placed:
#   +0 +16 +32 +48   that many bytes past a 4 KiB boundary (a cache line's
#                    start, and the three other offsets malloc's 16-byte
#                    alignment allows)
#   B+0 B+16         at the same offset in its 4 KiB page as argument 1 (B):
#                    C's rows then fall into the L1 sets of B's rows and its
#                    stores share their low 12 address bits (4 KiB aliasing)
#   A+0              the same, against argument 0 (A)
#   B+2K             2 KiB past B's offset: half a page from aliasing it
# The arguments are axle's own buffers (64-byte aligned, as axle_buffer_create
# makes them). The placements run interleaved, ROUNDS times (default 2). A
# placement's figure is its fastest sample over the rounds (run_bench's
# min_ms, each sample the mean of a batch of runs): what a placement costs,
# every run at it pays, so its fastest sample still shows it, while on a
# shared machine the medians move by tens of percent with the neighbours'
# load (on these machines a busy sibling hyperthread halves the FMA rate:
# 128 x 3072 x 768 measured 5.3 or 9.4 ms per sample, at every placement).
# spread is the slowest placement's figure over the fastest's; the target
# is met when it is at most 1.10. Printed as a table and written to
# OUT/placement.csv.
set -u
BUILD=$1 out=$2 workloads=$3 rounds=${4:-2}
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
names=("+0" "+16" "+32" "+48" "B+0" "B+16" "A+0" "B+2K")
flags=("--result-offset 0" "--result-offset 16" "--result-offset 32" "--result-offset 48"
       "--result-near-argument 1" "--result-near-argument 1 --result-offset 16"
       "--result-near-argument 0" "--result-near-argument 1 --result-offset 2048")
raw=$out/placement_rounds.txt; : >"$raw"
grep '^gemm_' "$workloads" | while IFS='|' read -r name module _ work _; do
  # Samples of about 1 ms of runs (at 150 GFLOP/s), shorter than a time
  # slice of the scheduler, so that some fall between a neighbour's: 15 of
  # them, or 5 of one run from 1 ms a run, 3 from 20 ms (2048^3: 0.1 s).
  per_run_ms=$(awk -v w="$work" 'BEGIN {print w / 150e6}')
  batch=$(awk -v t="$per_run_ms" 'BEGIN {b = int(1 / t); print b < 1 ? 1 : b}')
  samples=$(awk -v t="$per_run_ms" 'BEGIN {print (t > 20 ? 3 : t > 1 ? 5 : 15)}')
  echo "  placements: $name" >&2
  for _ in $(seq "$rounds"); do
    for p in "${!names[@]}"; do
      ms=$("${pin[@]}" "$BUILD/bench/run_bench" "$module" --samples "$samples" --batch "$batch" ${flags[$p]} 2>&1 |
           sed -n 's/^median_ms=[^ ]* min_ms=\([^ ]*\).*/\1/p')
      echo "$name|${names[$p]}|${ms:--}" >>"$raw"
    done
  done
done
awk -F'|' -v csv="$out/placement.csv" -v list="${names[*]}" '
function fastest(s,   n, v, i, best) {
  n = split(s, v, " ")
  for (i = 1; i <= n; i++) if (i == 1 || v[i] + 0 < best + 0) best = v[i]
  return n == 0 ? "" : best
}
{ if (!($1 in seen)) { seen[$1] = 1; order[++nw] = $1 }
  if ($3 != "-") times[$1, $2] = times[$1, $2] " " $3 }
END {
  np = split(list, place, " ")
  header = sprintf("%-26s %-4s", "workload", "thr"); csv_header = "workload,threads"
  for (p = 1; p <= np; p++) { header = header sprintf(" %-9s", place[p]); csv_header = csv_header ",min_ms_at_" place[p] }
  print header sprintf(" %-7s %s", "spread", "target")
  print csv_header ",spread,target" > csv
  for (i = 1; i <= nw; i++) {
    w = order[i]; lo = ""; hi = ""; line = sprintf("%-26s %-4s", w, 1); csv_line = w ",1"
    for (p = 1; p <= np; p++) {
      m = fastest(times[w, place[p]])
      line = line sprintf(" %-9s", m == "" ? "failed" : sprintf("%.4g", m)); csv_line = csv_line "," m
      if (m != "" && (lo == "" || m + 0 < lo + 0)) lo = m
      if (m != "" && (hi == "" || m + 0 > hi + 0)) hi = m
    }
    spread = lo == "" ? "" : sprintf("%.2f", hi / lo)
    verdict = spread == "" ? "no time" : (spread + 0 <= 1.10 ? "+-10%: met" : "+-10%: missed")
    print line sprintf(" %-7s %s", spread == "" ? "-" : spread "x", verdict)
    print csv_line "," spread "," verdict > csv
  }
}' "$raw"
