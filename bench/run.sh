#!/usr/bin/env bash
# make bench: axle beside its peers, measured in the same run, interleaved
# (axle, the peers, axle, the peers ... so drift on a shared machine hits
# every side), at one thread, and printed as one table; written as CSV
# (BUILD/bench/results.csv) and drawn as a bar chart (BUILD/bench/results.png).
#
#   bash bench/run.sh [BUILD]         (make bench; BUILD=build by default)
#
#   BENCH_QUICK=1      a few workloads, 2 rounds of 3 runs: checks the flow in
#                      about a minute; its numbers mean little
#   BENCH_ONLY=REGEX   only the workloads whose name matches
#   BENCH_ROUNDS=N     interleaved rounds (default 3); each side's figure is the
#                      median of its round medians
#   BENCH_RUNS=N       timed runs per round (default 10, 5 for the big ones)
#   BENCH_THREADS=N    threads for every side (default 1; see below)
#   BENCH_VARIANTS=0   leave out axle's own variant rows (avx2, sse4, 2 threads)
#   BENCH_PLACEMENTS=0 leave out the placement section (bench/placement.sh:
#                      each SGEMM with its result at 8 placements, about 30 s)
#   PYTHON=...         the Python with torch/numpy (default: /usr/bin/python3,
#                      else the first python3 on PATH that imports numpy)
#
# axle: each workload is a module in bench/hlo run through the normal
# pipeline, `axle-run --threads N --seed 1 --time RUNS` (its median line).
# The peers, as their users call them (bench/peers): oneDNN's dnnl_sgemm and
# convolution primitive and OpenBLAS's cblas_sgemm from small C drivers
# (built by make bench where the headers exist), PyTorch eager and NumPy
# from bench/peers/peers.py. A peer that is not installed is a row saying
# "missing" (make bench-deps installs them all).
#
# One thread is the honest figure on these machines: their 2 vCPUs share
# one physical core, so a second thread adds nothing on compute-bound work.
# Everything runs pinned (taskset) with OMP/MKL/OPENBLAS thread counts set
# to N. These machines set OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE,
# which hold OpenBLAS (and NumPy and PyTorch on it) to AVX2 kernels: the
# peers' commands alone run without them, so each peer runs at its best.
#
# Floors, measured at the start of the run (build/bench/floor): the
# one-thread FMA peak (GFLOP/s) for the matrix workloads, 2*M*N*K flops per
# product; a plain read loop's bandwidth (GB/s) for the memory-bound ones,
# counting every input read once and the output written once. of_floor is
# the rate as a fraction of the floor (the FMA peak times the thread count).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-${BUILD:-build}}
out=$BUILD/bench; mkdir -p "$out"
quick=${BENCH_QUICK:-0}
threads=${BENCH_THREADS:-1}
rounds=${BENCH_ROUNDS:-$([ "$quick" = 1 ] && echo 2 || echo 3)}
only=${BENCH_ONLY:-}

pin=()
command -v taskset >/dev/null && pin=(taskset -c "$([ "$threads" -gt 1 ] && echo "0-$((threads - 1))" || echo 0)")
export OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
peer=("${pin[@]}" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)

# name|module|floor (flops, bytes or compile)|work|C peer arguments|runs
gemm() {  # M K N [MODULE]
  echo "gemm_$1x$2x$3|${4:-bench/hlo/gemm_$1x$2x$3.hlo}|flops|$((2 * $1 * $2 * $3))|sgemm $1 $2 $3|"
}
all_workloads() {
  echo "softmax_4096x1024|bench/hlo/softmax_4096x1024.hlo|bytes|$((2 * 4096 * 1024 * 4))||"
  echo "layernorm_4096x768|bench/hlo/layernorm_4096x768.hlo|bytes|$((2 * 4096 * 768 * 4 + 2 * 768 * 4))||"
  echo "softmax_4096x4096|bench/hlo/softmax_4096x4096.hlo|bytes|$((2 * 4096 * 4096 * 4))||5"
  gemm 128 128 128; gemm 256 256 256; gemm 512 512 512
  gemm 1024 1024 1024 examples/dot_1024.hlo
  echo "$(gemm 2048 2048 2048)5"
  gemm 256 512 784; gemm 256 10 512; gemm 128 3072 768; gemm 512 768 768
  echo "dense_256x784x512|bench/hlo/dense_256x784x512.hlo|flops|$((2 * 256 * 784 * 512))||"
  # forward x.w1, h.w2; backward dw1, dw2, dh
  echo "mlp_train_b256_784x512x10|bench/hlo/mlp_train_b256_784x512x10.hlo|flops|$((2 * (2 * 256 * 784 * 512 + 3 * 256 * 512 * 10)))||"
  echo "lstm_cell_b64h256|bench/hlo/lstm_cell_b64h256.hlo|flops|$((2 * 2 * 64 * 256 * 1024))||"
  echo "attention_b8h12s512d64|bench/hlo/attention_b8h12s512d64.hlo|flops|$((2 * 2 * 8 * 12 * 512 * 512 * 64))||5"
  echo "conv3x3_32x64x56x56|bench/hlo/conv3x3_32x64x56x56.hlo|flops|$((2 * 32 * 64 * 56 * 56 * 64 * 9))|conv 32 64 56 56 64|5"
  echo "sum_xyz_16m|bench/hlo/sum_xyz_16m.hlo|bytes|$((3 * 16777216 * 4))||"
  echo "compile_1000|$out/big_1000.hlo|compile|||"
}
quick_set='^(softmax_4096x1024|gemm_256x256x256|gemm_256x10x512|sum_xyz_16m|compile_1000)$'
workloads() {
  all_workloads | while IFS='|' read -r name rest; do
    [ "$quick" = 1 ] && ! [[ $name =~ $quick_set ]] && continue
    [ -n "$only" ] && ! [[ $name =~ $only ]] && continue
    echo "$name|$rest"
  done
}
bench/gen_big_module.sh 1000 >"$out/big_1000.hlo"

pick_python() {
  [ -n "${PYTHON:-}" ] && { echo "$PYTHON"; return; }
  local p
  for p in /usr/bin/python3 $(type -ap python3); do
    "$p" -c 'import numpy' 2>/dev/null && { echo "$p"; return; }
  done
  type -p python3
}
python=$(pick_python)

# ---- floors ----
"${pin[@]}" "$BUILD/bench/floor" $([ "$quick" = 1 ] && echo --quick) >"$out/floor.txt" || exit 1
fma=$(awk '$1 == "fma_gflops" {print $2}' "$out/floor.txt")
read_gbs=$(awk '$1 == "read_gbs" {print $2}' "$out/floor.txt")

# ---- the rounds: one line "WORKLOAD|IMPL|MS|NOTE" per side per round ----
rows=$out/rounds.txt; : >"$rows"
record() { echo "$1|$2|$3|${4:-}" >>"$rows"; }

axle_round() {  # NAME MODULE FLOOR RUNS [IMPL THREADS CPU_LEVEL]
  local impl=${5:-axle} n=${6:-$threads} level=${7:-} log=$out/axle_$1.${5:-axle}.log ms
  local run=("${pin[@]}")
  [ "$n" -gt 1 ] && command -v taskset >/dev/null && run=(taskset -c "0-$((n - 1))")
  [ -n "$level" ] && run+=(env AXLE_CPU="$level")
  if [ "$3" = compile ]; then  # compile_ms of RUNS processes, their median
    ms=$(for _ in $(seq "$4"); do "${run[@]}" "$BUILD/axle-run" --compile-only "$2" 2>&1; done |
         sed -n 's/^compiled: .* in \([0-9.]*\) ms$/\1/p' | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}')
  else
    "${run[@]}" "$BUILD/axle-run" --threads "$n" --seed 1 --time "$4" "$2" >"$log" 2>&1
    ms=$(sed -n 's/^time: median_ms=\([^ ]*\).*/\1/p' "$log")
  fi
  if [ -n "$ms" ]; then record "$1" "$impl" "$ms"
  else
    local why; why=$(grep -m1 'error' "$log" 2>/dev/null | sed 's/^.*error: //' | cut -c1-60)
    record "$1" "$impl" - "${why:-no time printed (see $log)}"
  fi
}

# axle against itself, as more "peers" of a workload: at the lower ISA
# levels (the targets: sse4 within 4x of avx512, avx2 within 1.5x) and at
# 2 threads (never more than 5% slower than 1). Their speedup column reads
# the same way: variant_ms / axle_ms, so above 1 the default is faster.
# BENCH_VARIANTS=0 leaves them out; the ISA rows run on a subset of the
# workloads, the 2-thread rows on all but the compile row.
variants=${BENCH_VARIANTS:-$([ "$quick" = 1 ] && echo 0 || echo 1)}
isa_set='^(softmax_4096x1024|layernorm_4096x768|gemm_512x512x512|dense_256x784x512|lstm_cell_b64h256|sum_xyz_16m)$'
axle_variant_rounds() {  # NAME MODULE FLOOR RUNS
  [ "$variants" = 1 ] && [ "$3" != compile ] || return 0
  [ "$threads" = 1 ] && axle_round "$1" "$2" "$3" "$4" axle.2threads 2
  if [[ $1 =~ $isa_set ]]; then
    axle_round "$1" "$2" "$3" "$4" axle.avx2 "$threads" avx2
    axle_round "$1" "$2" "$3" "$4" axle.sse4 "$threads" sse4
  fi
}

c_peer_round() {  # NAME ARGS RUNS
  local args=($2) bin line
  local -A peers_of=([sgemm]="dnnl_peer:dnnl_sgemm openblas_peer:cblas_sgemm"
                     [conv]="dnnl_peer:onednn.conv.nchw,onednn.conv.best")
  for p in ${peers_of[${args[0]}]}; do
    bin=$BUILD/bench/peers/${p%%:*}
    p=${p//,/ }
    if [ ! -x "$bin" ]; then
      for impl in ${p#*:}; do record "$1" "$impl" - "missing: not built (make bench-deps)"; done
      continue
    fi
    "${peer[@]}" "$bin" "${args[@]}" "$3" 2>"$out/c_peer.err" | while read -r impl ms; do record "$1" "$impl" "$ms"; done
    [ -s "$out/c_peer.err" ] && for impl in ${p#*:}; do record "$1" "$impl" - "$(head -1 "$out/c_peer.err" | cut -c1-60)"; done
  done
}

# The Python peers: one process for the whole run (start-up is seconds),
# asked for one workload at a time.
coproc PY { "${peer[@]}" "$python" bench/peers/peers.py --serve 2>"$out/peers.err"; }
py_in=${PY[1]} py_out=${PY[0]}
python_round() {  # NAME RUNS
  local kind impl rest answered=0
  { echo "$1 $2" >&"$py_in"; } 2>/dev/null &&
  while read -r kind impl rest <&"$py_out"; do
    answered=1
    case $kind in
      end) break ;;
      peer) record "$1" "$impl" "$rest" ;;
      missing) record "$1" "$impl" - "missing: $rest" ;;
      *) record "$1" python - "$kind $impl $rest" ;;
    esac
  done
  [ $answered = 1 ] || record "$1" python - "missing: no Python peers ($python bench/peers/peers.py: $(head -c 60 "$out/peers.err"))"
}

workloads >"$out/workloads.txt"
echo "make bench: $(wc -l <"$out/workloads.txt") workloads, $rounds interleaved rounds, $threads thread(s), peers' Python: $python" >&2
while IFS='|' read -r name module floor work cargs wruns; do
  runs=${BENCH_RUNS:-${wruns:-10}}; [ "$quick" = 1 ] && runs=${BENCH_RUNS:-3}
  echo "  $name" >&2
  for _ in $(seq "$rounds"); do
    axle_round "$name" "$module" "$floor" "$runs"
    axle_variant_rounds "$name" "$module" "$floor" "$runs"
    [ -n "$cargs" ] && c_peer_round "$name" "$cargs" "$runs"
    [ "$floor" != compile ] && python_round "$name" "$runs"
  done
done <"$out/workloads.txt"
exec {py_in}>&-

# ---- the table, the CSV, the chart ----
echo
echo "make bench ($(date -u +%Y-%m-%dT%H:%MZ)): $threads thread(s), each figure the median of $rounds interleaved rounds$([ "$quick" = 1 ] && echo ", BENCH_QUICK: few runs, figures rough")"
echo "floors measured now: FMA peak $fma GFLOP/s ($(awk '$1 == "isa" {print $2}' "$out/floor.txt"), 1 thread); read bandwidth $read_gbs GB/s"
echo "speedup = peer_ms / axle_ms (above 1: axle is faster); of_floor = the rate against the floor"
bash bench/table.sh "$out" "$threads" "$fma" "$read_gbs" || exit 1

# ---- the placements: each SGEMM's rate wherever the caller's result lies ----
if [ "${BENCH_PLACEMENTS:-1}" = 1 ] && grep -q '^gemm_' "$out/workloads.txt"; then
  echo
  echo "placements (bench/placement.sh, written to $out/placement.csv): 1 thread, the result of each SGEMM at"
  echo "+N bytes past 4 KiB, or at argument A's or B's offset in its page (+N); each figure the fastest sample's ms"
  echo "over $([ "$quick" = 1 ] && echo 1 || echo 2) interleaved round(s); spread = slowest / fastest placement"
  bash bench/placement.sh "$BUILD" "$out" "$out/workloads.txt" "$([ "$quick" = 1 ] && echo 1 || echo 2)" || exit 1
fi
# axle giving no time on a workload fails make bench (a missing peer does not).
! grep -q '^[^|]*|axle|-|' "$rows"
