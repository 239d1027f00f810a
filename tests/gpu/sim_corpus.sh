#!/usr/bin/env bash
# The corpus through `axle-run --backend gpu` on the fake libcuda.so.1 with
# FAKE_CUDA_EXECUTE=1: every launch runs on the host's SIMT simulator
# (tests/fake_cuda/ptx_simulate.h), so the GPU backend's results can be
# checked against NumPy's goldens on a machine without a GPU.
#
#   bash tests/gpu/sim_corpus.sh [NAME ...]     (default: every module)
#
# One line per module: PASS, WRONG (differs from the golden), REFUSED
# (the backend's located refusal, with its reason) or FAIL (any other
# error, a crash or the time limit); then a count of each.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
out=${OUT:-$BUILD/gpu-sim}
mkdir -p "$out"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for hlo in tests/hlo/*.hlo; do names+=("$(basename "$hlo" .hlo)"); done
fi
pass=0; wrong=0; refused=0; fail=0
for name in "${names[@]}"; do
  dir=tests/hlo/$name; res=$out/$name
  rm -rf "$res"; mkdir -p "$res"
  args=()
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  if ! AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 FAKE_CUDA_EXECUTE=1 timeout "${SIM_TIMEOUT:-120}" \
       "$BUILD/axle-run" --backend gpu "${args[@]}" --out "$res" "tests/hlo/$name.hlo" >"$res/log" 2>&1; then
    reason=$(grep -m1 'error' "$res/log" || echo "exited without a message (time limit or crash)")
    if grep -q "the GPU backend cannot compile" "$res/log"; then
      refused=$((refused + 1)); echo "REFUSED $name: ${reason#*error: }"
    else
      fail=$((fail + 1)); echo "FAIL $name: $reason"
    fi
    continue
  fi
  tol=(); [ -f "$dir/tolerance" ] && read -r -a tol <"$dir/tolerance"
  verdict=PASS
  for golden in "$dir"/out*.npy; do
    [ -e "$golden" ] || continue
    if ! msg=$("$BUILD/tests/npycmp" "$golden" "$res/$(basename "$golden")" "${tol[@]}" 2>&1); then
      verdict="WRONG"; echo "WRONG $name: $(basename "$golden"): $(echo "$msg" | head -1)"; break
    fi
  done
  if [ "$verdict" = PASS ]; then pass=$((pass + 1)); echo "PASS $name"; else wrong=$((wrong + 1)); fi
done
echo "simulated GPU: $pass passed, $wrong wrong, $refused refused, $fail failed"
[ $((wrong + fail)) -eq 0 ]
