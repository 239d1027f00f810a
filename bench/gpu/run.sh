#!/usr/bin/env bash
# bench/gpu: axle's GPU backend beside PyTorch (cuBLAS, its own kernels) and
# JAX (XLA:GPU fed the same HLO text), on one GPU, in one table.
#
#   bash bench/gpu/run.sh [BUILD]          BUILD=build by default
#
#   BENCH_GPU_RUNS=N     timed runs each (median; default 20)
#   BENCH_GPU_SMALL=1    every workload shrunk to a few KiB (8192 -> 64,
#                        4096 -> 32, ...) and 3 runs: proves the script on
#                        the fake driver (make test does this); its times
#                        mean nothing
#   PYTHON=...           the Python with torch and/or jax (default python3)
#
# Workloads (bench/hlo/gpu_*.hlo; the peers compute the same thing):
#   copy       negate of f32[256M]: 2 GiB moved; PyTorch's device-to-device
#              copy_ beside it. The best of these is the copy ceiling.
#   sum_xyz    sum(x + y*z), 3 x f32[64M]            (target: >= 85% of copy)
#   softmax    f32[8192,4096] over the last axis     (target: >= torch.softmax)
#   layernorm  f32[8192,4096], gamma, beta           (target: >= F.layer_norm)
#   gemm_bf16  bf16 8192^3                           (target: >= 70% of cuBLAS)
#   gemm_f32   f32 4096^3, no tf32                   (target: >= 80% of cuBLAS)
# axle's time is `axle-run --backend gpu --time N`'s "device:" line: CUDA
# events around the kernels alone, the arguments already on the device.
# PyTorch's is CUDA events too; JAX's is the host's clock around execute
# and block_until_ready, so it carries some 20-40 us of dispatch.
# Rates: GB/s counts bytes read + written once each; TFLOP/s is 2*M*N*K.
# The ceiling column is the copy ceiling for memory-bound work and
# cuBLAS's rate (PyTorch) for a GEMM. A module axle refuses is a row that
# says so. A peer that is absent is one line saying so, not an error.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-${BUILD:-build}}
tmp=$BUILD/bench-gpu; rm -rf "$tmp"; mkdir -p "$tmp/hlo"
runs=${BENCH_GPU_RUNS:-20}
small=${BENCH_GPU_SMALL:-0}
[ "$small" = 1 ] && runs=${BENCH_GPU_RUNS:-3}
PYTHON=${PYTHON:-python3}
workloads=(copy sum_xyz softmax layernorm gemm_bf16 gemm_f32)

# The HLO each side runs: as written, or shrunk (every size a multiple of
# the same factor, so shapes stay consistent).
for w in "${workloads[@]}"; do
  if [ "$small" = 1 ]; then
    sed -e 's/268435456/2048/g' -e 's/67108864/1024/g' -e 's/8192/64/g' -e 's/4096/32/g' \
      "bench/hlo/gpu_$w.hlo" >"$tmp/hlo/$w.hlo"
  else
    cp "bench/hlo/gpu_$w.hlo" "$tmp/hlo/$w.hlo"
  fi
done

# The work each does: "bytes N" or "flops N", from the entry's shapes.
work_of() {  # WORKLOAD
  local f=$tmp/hlo/$1.hlo
  case $1 in
    gemm_*)
      awk '/ parameter\(0\)/ { match($0, /\[[0-9,]+\]/); split(substr($0, RSTART + 1, RLENGTH - 2), a, ",") }
           / parameter\(1\)/ { match($0, /\[[0-9,]+\]/); split(substr($0, RSTART + 1, RLENGTH - 2), b, ",") }
           END { printf "flops %.0f\n", 2 * a[1] * a[2] * b[2] }' "$f" ;;
    *)
      # every parameter read once, the root written once (4-byte f32)
      awk 'function elements(line,   s, d, n, i) { match(line, /\[[0-9,]*\]/); s = substr(line, RSTART + 1, RLENGTH - 2)
             n = 1; if (s != "") { split(s, d, ","); for (i in d) n *= d[i] } return n }
           / parameter\([0-9]+\)/ && inentry { bytes += 4 * elements($0) }
           /ROOT/ && inentry { bytes += 4 * elements($0) }
           /^ENTRY/ { inentry = 1 }
           END { printf "bytes %.0f\n", bytes }' "$f" ;;
  esac
}

# ---- axle ----
: >"$tmp/results"   # "WORKLOAD|IMPL|MS|NOTE"
for w in "${workloads[@]}"; do
  log=$tmp/axle_$w.log
  timeout 300 "$BUILD/axle-run" --backend gpu --seed 1 --time "$runs" "$tmp/hlo/$w.hlo" >"$log" 2>&1; rc=$?
  ms=$(sed -n 's/^device: median_ms=\([^ ]*\).*/\1/p' "$log")
  if [ $rc -eq 0 ] && [ -n "$ms" ]; then echo "$w|axle|$ms|" >>"$tmp/results"
  elif grep -q "cannot compile" "$log"; then
    echo "$w|axle|-|refused: $(grep -m1 -o 'cannot compile .*' "$log" | cut -c1-70)" >>"$tmp/results"
  else echo "$w|axle|-|failed: $(grep -m1 'error' "$log" | sed 's/^.*error: //' | cut -c1-70)" >>"$tmp/results"; fi
done
# The bf16 GEMM once more on mma.sync (--gpu_no_wgmma): what Hopper's wgmma
# path gains over the sm_80 kernel, on the same machine.
if [[ " ${workloads[*]} " == *" gemm_bf16 "* ]]; then
  log=$tmp/axle_gemm_bf16_mma.log
  AXLE_FLAGS="${AXLE_FLAGS:-} --gpu_no_wgmma" timeout 300 "$BUILD/axle-run" --backend gpu --seed 1 --time "$runs" \
    "$tmp/hlo/gemm_bf16.hlo" >"$log" 2>&1
  ms=$(sed -n 's/^device: median_ms=\([^ ]*\).*/\1/p' "$log")
  [ -n "$ms" ] && echo "gemm_bf16|axle.mma.sync|$ms|" >>"$tmp/results"
fi

# ---- peers ----
"$PYTHON" bench/gpu/peers.py --runs "$runs" --hlo-dir "$tmp/hlo" "${workloads[@]}" >"$tmp/peers.log" 2>&1
grep '^peer ' "$tmp/peers.log" | while read -r _ w impl ms; do echo "$w|$impl|$ms|" >>"$tmp/results"; done
grep -v '^peer ' "$tmp/peers.log" | sed 's/^/  /'

# ---- the table ----
rate_of() {  # WORKLOAD MS: "GB/s" or "TFLOP/s" figure
  local kind n; read -r kind n <<<"$(work_of "$1")"
  awk -v k="$kind" -v n="$n" -v ms="$2" 'BEGIN { if (ms <= 0) { print "-"; exit }
    if (k == "bytes") printf "%.4g GB/s\n", n / (ms * 1e6); else printf "%.4g TFLOP/s\n", n / (ms * 1e9) }'
}
# target_note WORKLOAD MS PCT: whether axle's row meets the issue's target.
target_note() {
  local w=$1 ms=$2 pct=${3%\%} want="" ref
  case $w in
    sum_xyz) want=85 ;; gemm_bf16) want=70 ;; gemm_f32) want=80 ;;
    softmax|layernorm)
      ref=$(best_ms "$w" '^(torch.softmax|F.layer_norm)$')
      [ -z "$ref" ] && { echo "target: >= torch's own op (not measured)"; return; }
      awk -v a="$ms" -v r="$ref" 'BEGIN { printf "target %s: %.2fx the speed of torch'"'"'s own op\n", (a <= r ? "met" : "missed"), r / a }'
      return ;;
    *) return ;;
  esac
  [ "$pct" = - ] && { echo "target: >= $want% of the ceiling (not measured)"; return; }
  awk -v p="$pct" -v t="$want" 'BEGIN { printf "target %s: >= %d%% of the ceiling\n", (p >= t ? "met" : "missed"), t }'
}
best_ms() {  # WORKLOAD IMPL-REGEX: the least time among matching rows
  awk -F'|' -v w="$1" -v re="$2" '$1 == w && $2 ~ re && $3 != "-" { if (best == "" || $3 + 0 < best) best = $3 + 0 }
    END { print best }' "$tmp/results"
}
copy_ms=$(best_ms copy '^(axle|torch.copy_)$')
copy_bytes=$(work_of copy | cut -d' ' -f2)
ceiling_gbs=$(awk -v b="$copy_bytes" -v ms="$copy_ms" 'BEGIN { if (ms > 0) printf "%.4g", b / (ms * 1e6) }')
echo
echo "GPU benchmarks ($(date -u +%Y-%m-%dT%H:%MZ), median of $runs runs$([ "$small" = 1 ] && echo ', BENCH_GPU_SMALL: sizes shrunk, times meaningless'))"
echo "copy ceiling: ${ceiling_gbs:-unmeasured} GB/s; matrix ceiling: cuBLAS (torch.matmul) on the same shapes"
printf '%-10s %-22s %10s %16s %9s  %s\n' workload implementation ms rate "%ceiling" note
printf '%-10s %-22s %10s %16s %9s  %s\n' ---------- ---------------------- ---------- ---------------- --------- ----
for w in "${workloads[@]}"; do
  case $w in
    gemm_*) ceiling_ms=$(best_ms "$w" '^torch.matmul$') ;;
    *)      ceiling_ms=$(awk -v b="$copy_bytes" -v ms="$copy_ms" -v n="$(work_of "$w" | cut -d' ' -f2)" \
                          'BEGIN { if (ms > 0) printf "%.6f", ms * n / b }') ;;
  esac
  grep "^$w|" "$tmp/results" | while IFS='|' read -r _ impl ms note; do
    rate=-; pct=-
    if [ "$ms" != - ]; then
      rate=$(rate_of "$w" "$ms")
      [ -n "$ceiling_ms" ] && pct=$(awk -v c="$ceiling_ms" -v ms="$ms" 'BEGIN { printf "%.0f%%", 100 * c / ms }')
      [ "$impl" = axle ] && note=$(target_note "$w" "$ms" "$pct")
    fi
    printf '%-10s %-22s %10s %16s %9s  %s\n' "$w" "$impl" "$ms" "$rate" "$pct" "$note"
  done
done
echo "targets: sum_xyz >= 85% of copy; softmax, layernorm >= torch's own op; gemm_bf16 >= 70%, gemm_f32 >= 80% of cuBLAS"
# A refusal is a row; axle failing otherwise fails the script.
! grep -q '^[^|]*|axle|-|failed' "$tmp/results"
