#!/usr/bin/env bash
# The checks that need an NVIDIA GPU (issue 10, item 6), in one unattended
# run of a few minutes; ends with one summary table.
#
#   bash tests/gpu/run.sh            from anywhere; BUILD=build by default
#
#   build      make (library, tools, tests) with every core
#   corpus     each tests/hlo/NAME.hlo through axle-run --backend gpu on its
#              inputs, compared with NumPy's goldens by npycmp (the same
#              tolerances as tests/run.sh); a module that does not compile
#              or run counts as failed, with its reason grouped in the table
#   check      each corpus module again with --check: every entry
#              instruction's value copied back from the device and compared
#              with the evaluator's on the same inputs (docs/gpu.md,
#              "Watching a run"); a module the backend refuses is skipped
#              (corpus counts it), a difference names the instruction
#   smoke      tests/gpu/gpu_smoke.c: the hand-built PTX example kernels
#              (vector add, row sum, bf16 mma tile) run through the driver
#              layer and compared with the CPU
#   kernels    tests/gpu/gpu_kernels.c: every corpus kernel the PTX emitter
#              accepts, launched alone and compared with kernel_eval
#   math       tests/gpu/gpu_math.c: the PTX math functions over about a
#              million inputs each, bit for bit against math_reference.c
#   ptx        build/tests/test_ptx, test_ptx_kernel, test_ptx_math,
#              test_ptx_simulate: ptxas, the host simulator
#              and, where cuobjdump is installed, the SASS checks
#   ptxas-corp tests/gpu/ptxas_corpus.sh: every corpus module's kernels
#              through ptxas for sm_80 and sm_90a, and the SASS checks
#   multi-gpu  examples/multi_device (the data-parallel MLP step, the
#              tensor-parallel matmul) on 1 and 2 GPUs through the real
#              libnccl.so.2, against the 1-device run and NumPy; skipped,
#              saying why, with fewer than 2 GPUs or without NCCL
#   bench      bench/gpu/run.sh: axle's device time beside PyTorch and JAX
#              (those that are installed); its table printed above the
#              summary
#
# A dry run without a GPU: AXLE_CUDA_DRIVER=build/tests/fake/libcuda.so.1
# FAKE_CUDA_EXECUTE=1 (the simulator) with GPU_TEST_QUICK=1, which runs the
# math test over fewer inputs and bench/gpu shrunk (BENCH_GPU_SMALL=1), and
# skips the smoke test (too large to simulate).
#
# Exit 0 only when nothing failed. Logs stay in $BUILD/gpu-test/.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
out=$BUILD/gpu-test
rm -rf "$out"; mkdir -p "$out"
start=$(date +%s)
rows=()   # "part|passed|failed|skipped|note"

row() { rows+=("$1|$2|$3|$4|$5"); }

# ---- build ----
if ! make -j"$(nproc 2>/dev/null || echo 4)" BUILD="$BUILD" >"$out/build.log" 2>&1; then
  echo "build failed; see $out/build.log"; tail -20 "$out/build.log"
  exit 2
fi
row build 1 0 0 "make: library, tools, tests"

# ---- corpus on the GPU ----
# Runs every module with a per-module time limit; the first line of a
# failure's error goes into $out/corpus-reasons, to be grouped below.
corpus_passed=0; corpus_failed=0
: >"$out/corpus-reasons"
# corpus_one NAME LABEL: one module on the GPU against its goldens (with
# the caller's AXLE_FLAGS); 0 when it matches, its reason appended to
# $out/corpus-reasons otherwise.
corpus_one() {
  local name=$1 label=$2 dir=tests/hlo/$1 res=$out/$2/$1 args=() tol=() golden msg reason
  mkdir -p "$res"
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  if ! timeout 60 "$BUILD/axle-run" --backend gpu "${args[@]}" --out "$res" "tests/hlo/$name.hlo" >"$res/log" 2>&1; then
    reason=$(grep -m1 'error' "$res/log" || head -1 "$res/log")
    [ -z "$reason" ] && reason="exited without a message (timeout or crash)"
    echo "$reason" >>"$out/corpus-reasons"
    echo "FAIL $label/$name: $reason"
    return 1
  fi
  [ -f "$dir/tolerance" ] && read -r -a tol <"$dir/tolerance"
  for golden in "$dir"/out*.npy; do
    [ -e "$golden" ] || continue
    if ! msg=$("$BUILD/tests/npycmp" "$golden" "$res/$(basename "$golden")" "${tol[@]}" 2>&1); then
      echo "wrong result: $(echo "$msg" | head -1)" >>"$out/corpus-reasons"
      echo "FAIL $label/$name: $(basename "$golden"): $(echo "$msg" | head -1)"; return 1
    fi
  done
  echo "PASS $label/$name"
}
for hlo in tests/hlo/*.hlo; do
  [ -e "$hlo" ] || continue
  if corpus_one "$(basename "$hlo" .hlo)" corpus-gpu; then corpus_passed=$((corpus_passed + 1))
  else corpus_failed=$((corpus_failed + 1)); fi
done
# Like reasons count together: the location and the instruction's text go,
# "cannot compile (dot): ..." stays; the three commonest go in the note.
sed -E -e 's/^.*error: //' -e 's/cannot compile .* \(([a-z0-9-]+)\) yet/cannot compile (\1)/' -e 's/ at \[[0-9, ]*\].*//' \
    "$out/corpus-reasons" | cut -c1-90 | sort | uniq -c | sort -rn >"$out/corpus-reasons-grouped"
top_reason=$(head -3 "$out/corpus-reasons-grouped" | sed -E 's/^ *([0-9]+) (.*)/\1x \2/' | paste -sd ';' - | sed 's/;/; /g')
row corpus-gpu "$corpus_passed" "$corpus_failed" 0 "${top_reason:-every module matches NumPy}"

# ---- the dot modules again on mma.sync ----
# On sm_90a the half-precision GEMMs above ran on wgmma; --gpu_no_wgmma runs
# them on the sm_80 kernel, so a wgmma fault shows as a contrast here.
mma_passed=0; mma_failed=0
for hlo in tests/hlo/dot_*.hlo; do
  if AXLE_FLAGS="${AXLE_FLAGS:-} --gpu_no_wgmma" corpus_one "$(basename "$hlo" .hlo)" corpus-mma >/dev/null 2>&1; then
    mma_passed=$((mma_passed + 1))
  else mma_failed=$((mma_failed + 1)); fi
done
row corpus-mma "$mma_passed" "$mma_failed" 0 "tests/hlo/dot_* with --gpu_no_wgmma (mma.sync on sm_90a)"

# ---- the corpus watched: every instruction against the evaluator ----
# A wrong kernel shows here by name, even where its error is too small or
# too well hidden for the result to miss NumPy's golden.
check_passed=0; check_failed=0; check_skipped=0; check_first=""
mkdir -p "$out/check"
for hlo in tests/hlo/*.hlo; do
  [ -e "$hlo" ] || continue
  name=$(basename "$hlo" .hlo); args=()
  for i in $(seq 0 63); do [ -f "tests/hlo/$name/in$i.npy" ] && args+=(--in "tests/hlo/$name/in$i.npy") || break; done
  timeout 120 "$BUILD/axle-run" --backend gpu --check "${args[@]}" "$hlo" >"$out/check/$name.log" 2>&1; rc=$?
  if [ $rc -eq 0 ]; then check_passed=$((check_passed + 1))
  elif [ $rc -eq 2 ]; then check_skipped=$((check_skipped + 1))
  else
    check_failed=$((check_failed + 1))
    reason=$(grep -m1 'error' "$out/check/$name.log" || echo "exit $rc without a message (timeout or crash)")
    echo "FAIL check/$name: $reason"
    [ -z "$check_first" ] && check_first="$name: ${reason#*error: }"
  fi
done
row check "$check_passed" "$check_failed" "$check_skipped" \
  "$(echo "${check_first:-every instruction matches the evaluator; refused modules skipped}" | cut -c1-100)"

# ---- the example kernels on the device ----
# smoke, kernels and math call the library's modules directly (ptx_kernel_*,
# gpu_device_open, shape_*), so they link libaxle_internal.a, as the unit
# tests do: libaxle.a keeps only the axle_* names global.
smoke=$BUILD/gpu/gpu_smoke
mkdir -p "$(dirname "$smoke")"
if [ "${GPU_TEST_QUICK:-0}" = 1 ]; then
  row smoke 0 0 1 "GPU_TEST_QUICK: not run (its sizes are too large for the simulator)"
elif ! cc -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror -Iinclude -Isrc/ir -Isrc tests/gpu/gpu_smoke.c \
     "$BUILD/libaxle_internal.a" -lm -ldl -lpthread -o "$smoke" >"$out/smoke-build.log" 2>&1; then
  row smoke 0 1 0 "gpu_smoke.c did not build: $(head -1 "$out/smoke-build.log")"
else
  timeout 120 "$smoke" >"$out/smoke.log" 2>&1; rc=$?
  cat "$out/smoke.log"
  p=$(grep -c '^PASS ' "$out/smoke.log"); f=$(grep -c '^FAIL ' "$out/smoke.log")
  note=$(grep -m1 '^time ' "$out/smoke.log" | sed 's/^time //')
  if [ $rc -eq 2 ]; then f=$((f + 1)); note="$(head -1 "$out/smoke.log")"
  elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; note="exited with status $rc"; fi
  row smoke "$p" "$f" 0 "${note:-vector add, row sum, bf16 mma tile}"
fi

# ---- every emitted corpus kernel on the device, against kernel_eval ----
kernels=$BUILD/gpu/gpu_kernels
if ! cc -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror -Iinclude -Isrc/ir -Isrc tests/gpu/gpu_kernels.c \
     "$BUILD/libaxle_internal.a" -lm -ldl -lpthread -o "$kernels" >"$out/kernels-build.log" 2>&1; then
  row kernels 0 1 0 "gpu_kernels.c did not build: $(head -1 "$out/kernels-build.log")"
else
  timeout 300 "$kernels" >"$out/kernels.log" 2>&1; rc=$?
  grep '^FAIL ' "$out/kernels.log" | head -20
  p=$(grep -c '^PASS ' "$out/kernels.log"); f=$(grep -c '^FAIL ' "$out/kernels.log")
  note=$(grep -m1 '^gpu_kernels:' "$out/kernels.log" | sed 's/^gpu_kernels: //')
  if [ $rc -eq 2 ]; then f=$((f + 1))
  elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; note="exited with status $rc"; fi
  row kernels "$p" "$f" 0 "${note:-PTX kernels against the kernel interpreter}"
fi

# ---- the math functions on the device, bit for bit against the reference ----
math=$BUILD/gpu/gpu_math
if ! cc -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror -Iinclude -Isrc/ir -Isrc tests/gpu/gpu_math.c \
     "$BUILD/libaxle_internal.a" -lm -ldl -lpthread -o "$math" >"$out/math-build.log" 2>&1; then
  row math 0 1 0 "gpu_math.c did not build: $(head -1 "$out/math-build.log")"
else
  quick=(); [ "${GPU_TEST_QUICK:-0}" = 1 ] && quick=(env GPU_MATH_COUNT=4096)
  timeout 300 "${quick[@]}" "$math" >"$out/math.log" 2>&1; rc=$?
  cat "$out/math.log"
  p=$(grep -c '^PASS ' "$out/math.log"); f=$(grep -c '^FAIL ' "$out/math.log")
  if [ $rc -eq 2 ]; then f=$((f + 1))
  elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  row math "$p" "$f" 0 "$(grep -m1 '^gpu_math:' "$out/math.log" | sed 's/^gpu_math: //')"
fi

# ---- PTX through ptxas and the SASS checks ----
: >"$out/ptx.log"
for t in test_ptx test_ptx_kernel test_ptx_math test_ptx_simulate; do timeout 300 "$BUILD/tests/$t" >>"$out/ptx.log" 2>&1; done
p=$(grep -c '^PASS ' "$out/ptx.log"); f=$(grep -c '^FAIL ' "$out/ptx.log"); s=$(grep -c '^SKIP ' "$out/ptx.log")
grep -E '^(FAIL|SKIP)' "$out/ptx.log"
row ptx "$p" "$f" "$s" "test_ptx, test_ptx_kernel, test_ptx_math, test_ptx_simulate"

# ---- every corpus kernel through ptxas for sm_80 and sm_90a, and the SASS checks ----
timeout 300 bash tests/gpu/ptxas_corpus.sh >"$out/ptxas-corpus.log" 2>&1; rc=$?
p=$(grep -c '^PASS ' "$out/ptxas-corpus.log"); f=$(grep -c '^FAIL ' "$out/ptxas-corpus.log"); s=$(grep -c '^SKIP ' "$out/ptxas-corpus.log")
grep -E '^(FAIL|SKIP)' "$out/ptxas-corpus.log" | head -20
[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
row ptxas-corp "$p" "$f" "$s" "$(tail -1 "$out/ptxas-corpus.log" | cut -c1-100)"

# ---- several GPUs through NCCL: the multi-device examples on 2 GPUs ----
gpus=$(nvidia-smi --list-gpus 2>/dev/null | grep -c '^GPU ')
if [ -n "${AXLE_CUDA_DRIVER:-}" ]; then
  row multi-gpu 0 0 1 "skipped: AXLE_CUDA_DRIVER is set (a fake driver); tests/devices/run.sh covers the simulated GPUs"
elif [ "${gpus:-0}" -lt 2 ]; then
  row multi-gpu 0 0 1 "skipped: ${gpus:-0} GPU(s) visible (nvidia-smi); 2 are needed"
elif [ -z "${AXLE_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2'; then
  row multi-gpu 0 0 1 "skipped: no libnccl.so.2 (ldconfig -p); install NVIDIA's NCCL or set AXLE_NCCL_LIBRARY"
else
  BACKENDS=gpu COUNTS="1 2" OUT="$out/multi-gpu" timeout 300 bash examples/multi_device/run.sh "$BUILD" >"$out/multi-gpu.log" 2>&1
  p=$(grep -c '^PASS ' "$out/multi-gpu.log"); f=$(grep -c '^FAIL ' "$out/multi-gpu.log")
  sed -n '/^mlp_step:/,/passed,/p' "$out/multi-gpu.log"; grep -m3 -A2 '^FAIL' "$out/multi-gpu.log"
  [ $((p + f)) -eq 0 ] && f=1
  row multi-gpu "$p" "$f" 0 "examples/multi_device on 1 and 2 of $gpus GPUs through libnccl.so.2; log $out/multi-gpu.log"
fi

# ---- bench/gpu: axle beside PyTorch and JAX; its table is printed here ----
small=0; [ "${GPU_TEST_QUICK:-0}" = 1 ] && small=1
BENCH_GPU_SMALL=$small timeout 300 bash bench/gpu/run.sh "$BUILD" >"$out/bench.log" 2>&1; rc=$?
sed -n '/^GPU benchmarks/,$p' "$out/bench.log"
refusals=$(grep -c ' refused: ' "$out/bench.log")
if [ $rc -eq 0 ]; then row bench-gpu 1 0 0 "table above; $refusals of 6 workloads refused by axle; log $out/bench.log"
else row bench-gpu 0 1 0 "bench/gpu/run.sh failed (exit $rc); see $out/bench.log"; fi

# ---- one summary table ----
total_p=0; total_f=0; total_s=0
echo
echo "GPU test summary ($(date -u +%Y-%m-%dT%H:%MZ), $(( $(date +%s) - start )) s)"
printf '%-11s %7s %7s %8s  %s\n' part passed failed skipped note
printf '%-11s %7s %7s %8s  %s\n' ----------- ------- ------- -------- ----
for r in "${rows[@]}"; do
  IFS='|' read -r part p f s note <<<"$r"
  printf '%-11s %7d %7d %8d  %s\n' "$part" "$p" "$f" "$s" "$note"
  total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + s))
done
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
