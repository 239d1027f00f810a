#!/usr/bin/env bash
# The GPU backend's PTX with no GPU and no CUDA driver (docs/gpu.md,
# "Compiling without a GPU"), and --target where there is a device.
#
#   bash tests/gpu/compile_without_gpu.sh
#
# With no driver reachable (AXLE_CUDA_DRIVER names none and the library
# path is emptied, so neither a real libcuda nor the fake one can be
# opened), `axle-run --backend gpu --compile-only --target T --dump DIR`
# for T in sm_80 and sm_90a must:
#   compile/T/NAME      exit 0
#   files/T/NAME        write DIR/kernels/index.txt and, for each launch it
#                       lists, the file it names, holding that launch's
#                       .entry and `.target T`
#   ptxas/T/NAME        have every file assembled alone by ptxas -arch=T
#                       (one SKIP line where there is no ptxas)
#   gemm-path/T         write the half GEMM of dot_half_tiles with wgmma on
#                       sm_90a and with mma.sync (no wgmma) on sm_80
# and the flag's edges: an unknown target and --target on another backend
# are usage errors (exit 2); --compile-only without a target and without a
# driver is refused (exit 2) with a message that names --target. On the
# fake driver (build/tests/fake/libcuda.so.1): a device that cannot run the
# target's PTX is refused at compile time; sm_80's PTX on a 9.0 device runs
# (the simulator) and gives NumPy's answers; without --target the PTX is
# still the device's own (sm_90a on 9.0); --compile-only with --target
# loads nothing onto the device. Ends with a count line.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
out=${OUT:-$BUILD/compile-without-gpu}
rm -rf "$out"; mkdir -p "$out"
run=$BUILD/axle-run
fake=$BUILD/tests/fake/libcuda.so.1
passed=0 failed=0 skipped=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1"; skipped=$((skipped + 1)); }
no_driver() { env -u LD_LIBRARY_PATH AXLE_CUDA_DRIVER=/nonexistent/libcuda.so.1 timeout 120 "$@"; }
ptxas=$(command -v ptxas || { [ -x /usr/local/cuda/bin/ptxas ] && echo /usr/local/cuda/bin/ptxas; })

# files_check T NAME DIR: every launch of the index has its file, holding its .entry and the target.
files_check() {
  local t=$1 name=$2 dir=$3/kernels line entry file bad=""
  [ -f "$dir/index.txt" ] || { fail "files/$t/$name" "no $dir/index.txt"; return; }
  grep -q '^launch 0: ' "$dir/index.txt" || bad="the index lists no launch"
  while read -r line; do
    entry=$(echo "$line" | awk '{print $3}')
    file=$dir/${line##*-> }
    if [ ! -f "$file" ]; then bad="$bad; no $file"
    elif ! grep -q "^\.visible \.entry $entry(" "$file"; then bad="$bad; $file lacks .entry $entry"
    elif ! grep -qx "\.target $t" "$file"; then bad="$bad; $file lacks .target $t"; fi
  done < <(grep '^launch ' "$dir/index.txt")
  [ -z "$bad" ] && pass "files/$t/$name" || fail "files/$t/$name" "${bad#; }"
}

for t in sm_80 sm_90a; do
  for name in reduce_sum jax_softmax dot_half_tiles; do
    hlo=tests/hlo/$name.hlo; [ -f "$hlo" ] || hlo=examples/$name.hlo
    dir=$out/$t/$name
    if ! got=$(no_driver "$run" --backend gpu --compile-only --target "$t" --dump "$dir" "$hlo" 2>&1); then
      fail "compile/$t/$name" "$(echo "$got" | head -2)"; continue
    fi
    pass "compile/$t/$name"
    files_check "$t" "$name" "$dir"
    if [ -z "$ptxas" ]; then skip "ptxas/$t/$name: no ptxas on PATH or in /usr/local/cuda/bin"; continue; fi
    bad=""
    for f in "$dir"/kernels/*.ptx; do
      "$ptxas" -arch="$t" "$f" -o "$out/one.cubin" 2>"$out/ptxas.err" || bad="$bad $(basename "$f"): $(head -2 "$out/ptxas.err")"
    done
    [ -z "$bad" ] && pass "ptxas/$t/$name" || fail "ptxas/$t/$name" "$bad"
  done
done
gemm90=$(cat "$out"/sm_90a/dot_half_tiles/kernels/*.ptx 2>/dev/null | grep -c 'wgmma\.mma_async')
gemm80=$(cat "$out"/sm_80/dot_half_tiles/kernels/*.ptx 2>/dev/null | grep -c 'mma\.sync')
wg80=$(cat "$out"/sm_80/dot_half_tiles/kernels/*.ptx 2>/dev/null | grep -c 'wgmma')
[ "$gemm90" -gt 0 ] && pass "gemm-path/sm_90a" || fail "gemm-path/sm_90a" "no wgmma.mma_async in the sm_90a GEMM"
[ "$gemm80" -gt 0 ] && [ "$wg80" -eq 0 ] && pass "gemm-path/sm_80" || fail "gemm-path/sm_80" "mma.sync $gemm80, wgmma $wg80 lines"

# expect NAME WANT_RC WANT_TEXT COMMAND...: exit code and a line of output.
expect() {
  local name=$1 want_rc=$2 want_text=$3 got rc; shift 3
  got=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want_rc" ]; then fail "$name" "exit $rc, expected $want_rc: $(echo "$got" | head -2)"
  elif ! echo "$got" | grep -qF -- "$want_text"; then fail "$name" "output lacks '$want_text': $(echo "$got" | head -2)"
  else pass "$name"; fi
}
expect target/unknown 2 "error: --target: unknown GPU target 'sm_12'" \
  no_driver "$run" --backend gpu --compile-only --target sm_12 examples/reduce_sum.hlo
expect target/other_backend 2 "error: --target names a GPU target: it goes with --backend gpu" \
  no_driver "$run" --backend cpu --target sm_80 examples/reduce_sum.hlo
expect target/none_and_no_driver 2 "to compile without a GPU, name the target: --target sm_80" \
  no_driver "$run" --backend gpu --compile-only examples/reduce_sum.hlo

if [ ! -f "$fake" ]; then skip "target/on-a-device: no $fake (make $fake)"
else
  on_fake() { env AXLE_CUDA_DRIVER="$fake" FAKE_CUDA_EXECUTE=1 timeout 300 "$@"; }
  mkdir -p "$out/saved80" "$out/saved_own" "$out/saved_none"
  expect target/device_cannot_run_it 2 "error: PTX for --target sm_90a does not run on device 0" \
    on_fake env FAKE_CUDA_CAPABILITY=8.0 "$run" --backend gpu --target sm_90a examples/reduce_sum.hlo
  expect target/older_target_on_newer_device 0 "expected: 1 result match" \
    on_fake env FAKE_CUDA_CAPABILITY=9.0 FAKE_CUDA_SAVE_PTX="$out/saved80" \
    "$run" --backend gpu --target sm_80 --in tests/hlo/jax_softmax/in0.npy --expected tests/hlo/jax_softmax \
    tests/hlo/jax_softmax.hlo
  expect target/older_target_on_newer_device_mma 0 "expected: 2 results match" \
    on_fake env FAKE_CUDA_CAPABILITY=9.0 FAKE_CUDA_SAVE_PTX="$out/saved80" \
    "$run" --backend gpu --target sm_80 --in tests/hlo/dot_half_tiles/in0.npy --in tests/hlo/dot_half_tiles/in1.npy \
    --in tests/hlo/dot_half_tiles/in2.npy --in tests/hlo/dot_half_tiles/in3.npy --expected tests/hlo/dot_half_tiles \
    --rtol 0.002 --atol 0.002 tests/hlo/dot_half_tiles.hlo
  n80=$(cat "$out"/saved80/*.ptx 2>/dev/null | grep -cx '\.target sm_80')
  [ "$n80" -ge 2 ] && pass "target/loaded_ptx_is_the_targets" || fail "target/loaded_ptx_is_the_targets" "$n80 modules say .target sm_80"
  on_fake env FAKE_CUDA_CAPABILITY=9.0 FAKE_CUDA_SAVE_PTX="$out/saved_own" \
    "$run" --backend gpu --compile-only examples/reduce_sum.hlo >/dev/null 2>&1
  grep -qx '\.target sm_90a' "$out"/saved_own/*.ptx 2>/dev/null && pass "target/default_is_the_devices_own" ||
    fail "target/default_is_the_devices_own" "the module loaded on a 9.0 device without --target is not sm_90a"
  got=$(on_fake env FAKE_CUDA_SAVE_PTX="$out/saved_none" "$run" --backend gpu --compile-only --target sm_90a \
    examples/reduce_sum.hlo 2>&1); rc=$?
  if [ $rc -ne 0 ]; then fail "target/compile_only_with_target_loads_nothing" "exit $rc: $(echo "$got" | head -2)"
  elif [ -n "$(ls "$out/saved_none")" ]; then
    fail "target/compile_only_with_target_loads_nothing" "a module was loaded: $(ls "$out/saved_none" | head -3)"
  else pass "target/compile_only_with_target_loads_nothing"; fi
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
