#!/usr/bin/env bash
# make bench-detail: axle's own benchmarks (no peers), each printed as a median of several runs
# (these machines are shared and noisy; quote medians and ratios).
#
#   optimizer   optimize_module on generated modules of 1,000 / 10,000 /
#               30,000 instructions: the total of every pass, median of 5
#   models      the corpus's softmax, layernorm, attention and MLP training
#               step and a 1024^3 dot: the evaluator beside the CPU backend
#               (--time 20), the dot's GFLOP/s against the FMA peak
#   gemm        bench/gemm_bench.c: SGEMM GFLOP/s at 256..2048, 1 and 2
#               threads, median of 5, against the measured FMA peak
#   cpu         the CPU backend on the corpus's softmax and layer norm and
#               on bench/hlo (softmax and layer norm over f32[4096,4096], a
#               sum of f32[16M], an elementwise negate as the memory
#               bandwidth it cannot beat), at 1 and 2 threads (--time 20)
set -u
BUILD=${1:-build}
tmp=$BUILD/bench; mkdir -p "$tmp"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "== optimizer time (axle-opt --stats, total of all passes, median of 5)"
printf '%-14s %-12s %-10s %-10s\n' instructions "total_ms" fusions kernels
for n in 1000 10000 30000; do
  bench/gen_big_module.sh "$n" >"$tmp/big_$n.hlo"
  for r in 1 2 3 4 5; do
    "$BUILD/axle-opt" --stats "$tmp/big_$n.hlo" 2>"$tmp/stats_$n.txt" >/dev/null || { cat "$tmp/stats_$n.txt"; exit 1; }
    awk '$1 == "total" {print $2}' "$tmp/stats_$n.txt"
  done | median >"$tmp/total_$n"
  printf '%-14s %-12s %-10s %-10s\n' "$(awk '/instructions:/ {print $2}' "$tmp/stats_$n.txt")" \
    "$(cat "$tmp/total_$n")" "$(awk '/fusions:/ {print $2}' "$tmp/stats_$n.txt")" \
    "$(awk '/kernels:/ {print $4}' "$tmp/stats_$n.txt")"
done

echo
echo "== models: the evaluator against the CPU backend's machine code (median ms of 20 runs, all cores)"
printf '%-22s %-14s %-12s %-10s %s\n' module "interp (opt)" "cpu" "speedup" "matmul rate"
for hlo in tests/hlo/jax_softmax.hlo tests/hlo/jax_layernorm.hlo tests/hlo/jax_attention.hlo \
           tests/hlo/jax_train_step.hlo examples/dot_1024.hlo; do
  name=$(basename "$hlo" .hlo)
  runs=20; [ "$name" = dot_1024 ] && runs=3  # the evaluator's 1024^3 dot takes seconds
  interp=$("$BUILD/axle-run" --backend interp --opt --seed 1 --time $runs "$hlo" | sed -n 's/^time: median_ms=\([^ ]*\).*/\1/p')
  cpu_out=$("$BUILD/axle-run" --backend cpu --seed 1 --time 20 --peak "$hlo")
  cpu=$(sed -n 's/^time: median_ms=\([^ ]*\).*/\1/p' <<<"$cpu_out")
  rate=$(sed -n 's/^matmul: [^,]*, \([^,]*\)\(, \([0-9]*%\).*\)\{0,1\}/\1 \3/p' <<<"$cpu_out")
  printf '%-22s %-14s %-12s %-10s %s\n' "$name" "$interp" "$cpu" \
    "$(awk -v a="$interp" -v b="$cpu" 'BEGIN { if (b > 0) printf "%.0fx", a / b }')" "${rate:-}"
done

echo
echo "== SGEMM: the generated micro-kernel against this machine's FMA peak (bench/gemm_bench.c)"
"$BUILD/bench/gemm_bench" || exit 1

echo
echo "== CPU backend (median ms of 20 runs; copy_16m is a negate: 128 MiB moved)"
printf '%-26s %-12s %-12s %-12s\n' module "1 thread" "2 threads" interp
# median_ms HLO [axle-run flags]
median_ms() {
  local hlo=$1; shift
  "$BUILD/axle-run" "$@" --seed 1 --time 20 "$hlo" | sed -n 's/^time: median_ms=\([^ ]*\).*/\1/p'
}
for hlo in tests/hlo/jax_softmax.hlo tests/hlo/jax_layernorm.hlo bench/hlo/*.hlo; do
  # the evaluator only on the small modules: it takes seconds per run on the big ones
  interp=-; case $hlo in tests/*) interp=$(median_ms "$hlo" --backend interp);; esac
  printf '%-26s %-12s %-12s %-12s\n' "$(basename "$hlo" .hlo)" "$(median_ms "$hlo" --backend cpu --threads 1)" \
    "$(median_ms "$hlo" --backend cpu --threads 2)" "$interp"
done
