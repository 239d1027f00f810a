#!/usr/bin/env bash
# axle-run --check and --find-nan on the GPU backend (docs/gpu.md,
# "Watching a run"; docs/debugging.md), on the fake driver with the SIMT
# simulator behind it (FAKE_CUDA_EXECUTE=1), so the values watched are the
# PTX kernels' own:
#   check/NAME          --check passes (exit 0) on modules the GPU computes
#                       right: a reduction, a dot after a fusion, a while loop
#   find_nan/*          --find-nan names the instruction that first makes a
#                       NaN (log of a negative number, inside a fusion) or an
#                       infinity (division by zero), with its line; exit 1
#   same_as_cpu/*       the lines --check and --find-nan print are the CPU
#                       backend's, word for word
#   check/wrong_kernel  FAKE_CUDA_CORRUPT_LAUNCH (a test hook of the fake
#                       driver) spoils one kernel's output: --check names that
#                       instruction alone, located at its line; exit 1
#   check/failed_copy_is_located  a failed copy back is located, exit 1
#   plain_run_pays_nothing  a run without --check or --find-nan copies to
#                       the host only its result (the driver's trace)
#   time_kernels/refused    --time-kernels stays refused on the GPU
# Ends with a count line.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
out=${OUT:-$BUILD/debug-on-gpu}
rm -rf "$out"; mkdir -p "$out"
run=$BUILD/axle-run
fake=$BUILD/tests/fake/libcuda.so.1
passed=0 failed=0 skipped=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
on_gpu() { env AXLE_CUDA_DRIVER="$fake" FAKE_CUDA_EXECUTE=1 timeout 300 "$@"; }

# expect NAME WANT_RC WANT_TEXT COMMAND...: the exit status and a line of the output.
expect() {
  local name=$1 want_rc=$2 want_text=$3 got rc; shift 3
  got=$("$@" 2>&1); rc=$?
  if [ $rc -ne "$want_rc" ]; then fail "$name" "exit $rc, expected $want_rc: $(echo "$got" | head -3)"
  elif ! echo "$got" | grep -qF -- "$want_text"; then fail "$name" "output lacks '$want_text': $(echo "$got" | head -3)"
  else pass "$name"; fi
}

if [ ! -f "$fake" ]; then echo "FAIL setup: no $fake (make $fake)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; fi

# ---- --check passes where the kernels are right ----
expect check/reduce_sum 0 "check: 1 instruction matches the evaluator's on the same inputs" \
  on_gpu "$run" --backend gpu --check --seed 1 examples/reduce_sum.hlo
expect check/reduce_sum_whole_result 0 "check: gpu matches the evaluator" \
  on_gpu "$run" --backend gpu --check --seed 1 examples/reduce_sum.hlo

dot_hlo=$out/check_dot.hlo
cat >"$dot_hlo" <<'HLO'
HloModule check_dot

ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,3] parameter(1)
  n = f32[4,8] negate(x), metadata={op_name="jit(f)/neg" source_file="model.py" source_line=20}
  ROOT d = f32[4,3] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" source_file="model.py" source_line=21}
}
HLO
expect check/fusion_then_dot 0 "check: 2 instructions match the evaluator's on the same inputs" \
  on_gpu "$run" --backend gpu --check --seed 1 "$dot_hlo"

# A while loop runs its body's kernels as steps of their own; the loop is
# one instruction of the entry, watched once it has finished.
loop_hlo=$out/check_loop.hlo
cat >"$loop_hlo" <<'HLO'
HloModule check_loop

cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[16] broadcast(h), dimensions={}
  w = f32[16] multiply(v, hb)
  ROOT t = (s32[], f32[16]) tuple(j, w)
}

ENTRY main {
  x = f32[16] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[16]) tuple(zero, x)
  loop = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(loop), index=1
}
HLO
expect check/while_loop 0 "check: gpu matches the evaluator" \
  on_gpu "$run" --backend gpu --check --seed 1 "$loop_hlo"
got=$(on_gpu "$run" --backend gpu --check --seed 1 "$loop_hlo" 2>&1)
if echo "$got" | grep -qE "^check: [1-9][0-9]* instructions? match"; then pass "check/while_loop_is_watched"
else fail "check/while_loop_is_watched" "no instruction was watched: $(echo "$got" | head -3)"; fi
# A wrong kernel inside the body makes the loop's value wrong: the loop is named.
expect check/wrong_kernel_in_a_loop 1 "check_loop.hlo:26:3: error: loop is the first instruction whose result differs" \
  on_gpu env FAKE_CUDA_CORRUPT_LAUNCH=multiply "$run" --backend gpu --check --seed 1 "$loop_hlo"

# ---- --find-nan names the first NaN or infinity, from the GPU's values ----
nan_hlo=$out/find_nan.hlo
cat >"$nan_hlo" <<'HLO'
HloModule find_nan

sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY main {
  x = f32[4,8] parameter(0)
  e = f32[4,8] exponential(x), metadata={op_name="jit(f)/exp" source_file="model.py" source_line=10}
  c = f32[] constant(-2)
  b = f32[4,8] broadcast(c), dimensions={}
  a = f32[4,8] add(e, b), metadata={op_name="jit(f)/sub" source_file="model.py" source_line=11}
  l = f32[4,8] log(a), metadata={op_name="jit(f)/log" source_file="model.py" source_line=12}
  ROOT r = f32[4] reduce(l, c), dimensions={1}, to_apply=sum
}
HLO
expect find_nan/names_the_fused_log 1 \
  "inside the fusion, evaluated on the same inputs, the first is l.1 (jit(f)/log at model.py:12)" \
  on_gpu "$run" --backend gpu --find-nan --seed 1 "$nan_hlo"
# The fusion has no line of its own: it is located at its root's (r).
expect find_nan/is_located 1 "find_nan.hlo:16:8: error:" \
  on_gpu "$run" --backend gpu --find-nan --seed 1 "$nan_hlo"

inf_hlo=$out/find_inf.hlo
cat >"$inf_hlo" <<'HLO'
HloModule find_inf

ENTRY main {
  x = f32[16] parameter(0)
  a = f32[16] abs(x)
  z = f32[] constant(0)
  b = f32[16] broadcast(z), dimensions={}
  one = f32[] constant(1)
  o = f32[16] broadcast(one), dimensions={}
  s = f32[16] add(a, o)
  ROOT d = f32[16] divide(s, b), metadata={op_name="jit(g)/div" source_file="model.py" source_line=30}
}
HLO
expect find_nan/names_an_infinity 1 "(jit(g)/div at model.py:30) is the first instruction to produce an infinity" \
  on_gpu "$run" --backend gpu --find-nan --seed 1 "$inf_hlo"
expect find_nan/clean_run 0 "find-nan: no NaN or infinity in the values of 1 instruction" \
  on_gpu "$run" --backend gpu --find-nan --seed 1 examples/reduce_sum.hlo

# ---- the same reports as the CPU backend's ----
# The observer is one for both backends; on modules both compute right, the
# lines --check and --find-nan print (a count, or the error naming the
# instruction, its line and its first bad element) are the same.
same_as_cpu() {  # NAME FLAG HLO
  local name=$1 flag=$2 hlo=$3 cpu gpu
  cpu=$("$run" --backend cpu "$flag" --seed 1 "$hlo" 2>&1 | grep -E '^check: [0-9]|^find-nan: |error: ')
  gpu=$(on_gpu "$run" --backend gpu "$flag" --seed 1 "$hlo" 2>&1 | grep -E '^check: [0-9]|^find-nan: |error: ')
  if [ -n "$cpu" ] && [ "$cpu" = "$gpu" ]; then pass "same_as_cpu/$name"
  else fail "same_as_cpu/$name" "cpu: ${cpu:-nothing} | gpu: ${gpu:-nothing}"; fi
}
same_as_cpu check_reduce_sum --check examples/reduce_sum.hlo
same_as_cpu check_fusion_then_dot --check "$dot_hlo"
same_as_cpu check_while_loop --check "$loop_hlo"
same_as_cpu find_nan_log --find-nan "$nan_hlo"
same_as_cpu find_nan_infinity --find-nan "$inf_hlo"

# ---- --check names a wrong kernel, alone ----
# The negate's kernel is spoiled; the dot after it reads the spoiled value
# and is right on it, so only the negate is named.
expect check/wrong_kernel 1 "fusion.negate (jit(f)/neg at model.py:20) is the first instruction whose result differs" \
  on_gpu env FAKE_CUDA_CORRUPT_LAUNCH=negate "$run" --backend gpu --check --seed 1 "$dot_hlo"
expect check/wrong_kernel_is_located 1 "check_dot.hlo:6:3: error:" \
  on_gpu env FAKE_CUDA_CORRUPT_LAUNCH=negate "$run" --backend gpu --check --seed 1 "$dot_hlo"
# Without --check the same spoiled kernel goes unnoticed: the hook works.
expect check/wrong_kernel_unchecked_runs 0 "out0: f32[4,3]" \
  on_gpu env FAKE_CUDA_CORRUPT_LAUNCH=negate "$run" --backend gpu --seed 1 "$dot_hlo"

# A copy back that fails (as a kernel's failure shows at the next wait)
# says what it was for, at the instruction; exit 1.
expect check/failed_copy_is_located 1 \
  "check_dot.hlo:6:3: error: cuMemcpyDtoHAsync failed while copying to the host: CUDA_ERROR_INVALID_VALUE (1) (copying the value of fusion.negate to the host to watch it)" \
  on_gpu env FAKE_CUDA_FAIL=cuMemcpyDtoHAsync_v2 "$run" --backend gpu --check --seed 1 "$dot_hlo"

# ---- normal runs pay nothing ----
# Only the observed run copies each instruction's value back; a plain run
# copies its one result leaf.
rm -f "$out/plain.trace" "$out/checked.trace"
on_gpu env FAKE_CUDA_TRACE="$out/plain.trace" "$run" --backend gpu --seed 1 "$nan_hlo" >/dev/null 2>&1
on_gpu env FAKE_CUDA_TRACE="$out/checked.trace" "$run" --backend gpu --check --seed 1 "$dot_hlo" >/dev/null 2>&1
plain=$(grep -c '^cuMemcpyDtoHAsync' "$out/plain.trace" 2>/dev/null)
checked=$(grep -c '^cuMemcpyDtoHAsync' "$out/checked.trace" 2>/dev/null)
if [ "${plain:-0}" -eq 1 ] && [ "${checked:-0}" -gt 1 ]; then pass "plain_run_pays_nothing"
else fail "plain_run_pays_nothing" "copies to the host: plain run ${plain:-none} (want 1), checked run ${checked:-none} (want more)"; fi

# ---- what stays refused ----
expect time_kernels/refused 1 "error: the gpu backend cannot time its kernels one by one" \
  on_gpu "$run" --backend gpu --seed 1 --time 2 --time-kernels examples/reduce_sum.hlo

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
