#!/usr/bin/env bash
# Collectives over several devices in one process (docs/multi-device.md):
# every module of tests/devices/ (written with its goldens by
# tests/gen/gen_collectives.py, NumPy's) run by axle-run --devices N on the
# interpreter, on the CPU backend and on the GPU backend over simulated GPUs
# (the fake driver and the fake NCCL of tests/fake_cuda/), each device's
# outputs compared with its goldens and the GPU's with the CPU's, byte for
# byte; the CPU backend's outputs again at another thread count and in a
# second run, byte for byte (the determinism promise); and the errors a run
# over several devices must give. Prints PASS/FAIL lines and a count.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/test-out/devices}
run=$BUILD/axle-run
rm -rf "$OUT"; mkdir -p "$OUT/interp" "$OUT/cpu" "$OUT/cpu-t1" "$OUT/gpu"
# The GPU backend over 4 simulated GPUs: kernels run on the fake driver's
# SIMT simulator, collectives in the fake NCCL (which folds in rank order,
# the CPU's group order, so the bits must match the CPU's).
gpu_env=(env AXLE_CUDA_DRIVER="$BUILD/tests/fake/libcuda.so.1" FAKE_CUDA_EXECUTE=1 FAKE_CUDA_DEVICES=4
         AXLE_NCCL_LIBRARY="$BUILD/tests/fake/libnccl.so.2" FAKE_NCCL_TIMEOUT=30)
passed=0; failed=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ $# -gt 1 ] && printf '  %s\n' "${@:2}"; }

# compare LABEL GOLDEN_DIR RESULT_DIR DEVICES: every device's every golden
compare() {
  local label=$1 dir=$2 res=$3 devices=$4 d golden msg
  for ((d = 0; d < devices; d++)); do
    for golden in "$dir/device$d"/out*.npy; do
      if ! msg=$("$BUILD/tests/npycmp" "$golden" "$res/device$d/$(basename "$golden")" 0 0 2>&1); then
        fail "$label" "device $d $(basename "$golden"): $msg"; return 1
      fi
    done
  done
  pass "$label"
}

same_bytes() {  # A B: every .npy under A equals the one under B
  local f
  for f in $(cd "$1" && find . -name '*.npy'); do cmp -s "$1/$f" "$2/$f" || return 1; done
}

declare -A per_op per_op_gpu
for hlo in tests/devices/*.hlo; do
  name=$(basename "$hlo" .hlo); dir=tests/devices/$name
  devices=$(cat "$dir/devices")
  ins=(); for f in $(ls "$dir"/in*.npy | sort -V); do ins+=(--in "$f"); done
  for backend in interp cpu; do
    res=$OUT/$backend/$name
    if ! timeout 120 "$run" --backend "$backend" --devices "$devices" --threads 2 "${ins[@]}" --out "$res" "$hlo" >"$res.log" 2>&1; then
      fail "devices/$backend/$name" "axle-run failed:" "$(head -3 "$res.log")"; continue
    fi
    compare "devices/$backend/$name" "$dir" "$res" "$devices" || continue
    op=${name%_*dev}; per_op[$op]=$(( ${per_op[$op]:-0} + 1 ))
  done
  # the GPU backend through NCCL: NumPy's goldens, and the CPU's bytes
  res=$OUT/gpu/$name
  if ! timeout 120 "${gpu_env[@]}" "$run" --backend gpu --devices "$devices" "${ins[@]}" --out "$res" "$hlo" >"$res.log" 2>&1; then
    fail "devices/gpu/$name" "axle-run failed:" "$(head -3 "$res.log")"
  elif compare "devices/gpu/$name" "$dir" "$res" "$devices"; then
    if same_bytes "$OUT/cpu/$name" "$res"; then pass "devices/gpu_same_bits_as_cpu/$name"
    else fail "devices/gpu_same_bits_as_cpu/$name" "the GPU's outputs differ from the CPU's"; fi
    op=${name%_*dev}; per_op_gpu[$op]=$(( ${per_op_gpu[$op]:-0} + 1 ))
  fi
  # the same bits at 1 thread and in a second run
  again=$OUT/cpu-t1/$name
  if timeout 120 "$run" --backend cpu --devices "$devices" --threads 1 "${ins[@]}" --out "$again" "$hlo" >"$again.log" 2>&1 &&
     same_bytes "$OUT/cpu/$name" "$again"; then pass "devices/deterministic/$name"
  else fail "devices/deterministic/$name" "outputs at 1 and 2 threads differ or the run failed" "$(head -3 "$again.log")"; fi
done
echo "collective tests that matched NumPy (interp and cpu, all group forms and device counts):"
for op in $(echo "${!per_op[@]}" | tr ' ' '\n' | sort); do echo "  $op: ${per_op[$op]}"; done
echo "collective tests that matched NumPy on the GPU backend through the fake NCCL (all group forms; 1, 2 and 4 devices):"
for op in $(echo "${!per_op_gpu[@]}" | tr ' ' '\n' | sort); do echo "  $op: ${per_op_gpu[$op]}"; done

# ---- the data-parallel MLP step on 2 simulated GPUs, and its NCCL trace ----
# examples/multi_device on the GPU backend (1, 2 and 4 devices, against the
# 1-device run and NumPy), then the trace of mlp_step_2dev: one clique over
# GPUs 0 and 1, and on each device the gradients' tuple all-reduce as one
# NCCL group of five float32 sums, one per leaf (f32[4,8], f32[8],
# f32[8,2], f32[2], f32[]).
examples_log=$OUT/gpu-examples.log
if "${gpu_env[@]}" BACKENDS=gpu COUNTS="1 2 4" OUT="$OUT/gpu-examples" bash examples/multi_device/run.sh "$BUILD" >"$examples_log" 2>&1
then pass "devices/gpu_examples_on_1_2_and_4_gpus"; else fail "devices/gpu_examples_on_1_2_and_4_gpus" "$(grep -m3 FAIL "$examples_log")"; fi
mlp=examples/multi_device/mlp_step_2dev trace=$OUT/mlp_step_2dev.nccl
mins=(); for f in $(ls "$mlp"/in*.npy | sort -V); do mins+=(--in "$f"); done
rm -f "$trace"
"${gpu_env[@]}" FAKE_NCCL_TRACE="$trace" "$run" --backend gpu --devices 2 "${mins[@]}" --out "$OUT/mlp_trace" "$mlp.hlo" >/dev/null 2>&1
want_device() {  # D: the calls device D must make, in order
  echo "ncclGroupStart device=$1"
  for c in 32 8 16 2 1; do echo "ncclAllReduce clique=0 rank=$1/2 device=$1 count=$c type=float32 op=sum"; done
  echo "ncclGroupEnd device=$1"
}
trace_ok=1
[ "$(grep -c '^ncclCommInitAll' "$trace" 2>/dev/null)" = 1 ] && grep -qx 'ncclCommInitAll clique=0 ndev=2 devlist=0,1' "$trace" || trace_ok=0
for d in 0 1; do
  got=$(grep -E "device=$d( |$)" "$trace" 2>/dev/null)
  [ "$got" = "$(want_device "$d")" ] || { trace_ok=0; echo "device $d's calls:"; echo "$got"; }
done
grep -qx 'ncclCommDestroy clique=0 rank=1' "$trace" 2>/dev/null || trace_ok=0
if [ $trace_ok = 1 ]; then pass "devices/gpu_mlp_step_nccl_trace"
else fail "devices/gpu_mlp_step_nccl_trace" "$(cat "$trace" 2>/dev/null | head -20)"; fi

# ---- what must be refused, never hang ----
expect() {  # NAME WANT_RC WANT_TEXT ARGS...
  local name=$1 want_rc=$2 want_text=$3; shift 3
  local got; got=$(timeout 60 "$run" "$@" 2>&1); local rc=$?
  if [ $rc -ne "$want_rc" ]; then fail "devices/$name" "exit $rc, expected $want_rc" "$(echo "$got" | head -3)"
  elif ! echo "$got" | grep -qF -- "$want_text"; then fail "devices/$name" "output lacks '$want_text'" "$(echo "$got" | head -3)"
  else pass "devices/$name"; fi
}
ar=tests/devices/all_reduce_list_4dev.hlo
expect wrong_device_count 2 "runs on replica_count=4 x num_partitions=1 = 4 devices, not 2" --devices 2 --seed 1 "$ar"
expect one_device_is_refused 2 "needs 4 devices; this run has 1" --seed 1 "$ar"
# On GPUs: NCCL and enough devices are needed, and said so.
expect_gpu() {  # NAME WANT_RC WANT_TEXT ENV... -- ARGS...
  local name=$1 want_rc=$2 want_text=$3; shift 3
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local got; got=$(timeout 60 "${gpu_env[@]}" "${envs[@]}" "$run" --backend gpu "$@" 2>&1); local rc=$?
  if [ $rc -ne "$want_rc" ]; then fail "devices/$name" "exit $rc, expected $want_rc" "$(echo "$got" | head -3)"
  elif ! echo "$got" | grep -qF -- "$want_text"; then fail "devices/$name" "output lacks '$want_text'" "$(echo "$got" | head -3)"
  else pass "devices/$name"; fi
}
expect_gpu gpu_without_nccl_is_located_at_the_collective 2 "all_reduce_list_4dev.hlo:11:8: error: no NCCL library (" \
  AXLE_NCCL_LIBRARY=/nonexistent/libnccl.so.2 -- --devices 4 --seed 1 "$ar"
# NCCL is opened by the first collective: a module without one needs none.
expect_gpu gpu_without_collectives_needs_no_nccl 0 "device 1:" AXLE_NCCL_LIBRARY=/nonexistent/libnccl.so.2 -- \
  --devices 2 --seed 1 examples/reduce_sum.hlo
expect_gpu gpu_too_few_gpus 2 "error: no CUDA device 2 (the driver sees 2 GPUs)" FAKE_CUDA_DEVICES=2 -- --devices 4 --seed 1 "$ar"
expect_gpu gpu_nccl_failure_is_located 1 "ncclAllReduce failed: NCCL error 1: unhandled cuda error" FAKE_NCCL_FAIL=ncclAllReduce -- --devices 4 --seed 1 "$ar"
# A device that fails before a collective (its input has the wrong shape)
# aborts the communicators: the others end with an error at once, not
# after the fake NCCL's 100 s (past the 60 s that expect_gpu allows).
bad=$OUT/bad_input; mkdir -p "$bad"
/usr/bin/python3 -c "import numpy as np; np.save('$bad/x.npy', np.zeros(7, np.float32))" 2>/dev/null
ain=tests/devices/all_reduce_iota_2dev
expect_gpu gpu_failing_device_aborts_nccl 1 "device 1: parameter 0 (x) expects f32[3,5]" FAKE_NCCL_TIMEOUT=100 -- \
  --devices 2 --in "$ain/in0.npy" --in "$bad/x.npy" "$ain.hlo"
expect input_sets_counted 1 "the inputs must give 1 (one set for every device) or 4 (one per device), not 2" \
  --devices 4 --in tests/devices/all_reduce_list_4dev/in0.npy --in tests/devices/all_reduce_list_4dev/in1.npy "$ar"
expect devices_takes_a_count 2 "--devices takes a count from 1 to 1024" --devices 0 "$ar"
expect help_lists_devices 0 "--devices N" --help
t=$OUT/modules; mkdir -p "$t"
# A group that names a device the run lacks, or one twice, is refused at the instruction.
printf 'HloModule g, replica_count=2\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] all-reduce(x), replica_groups={{0,0}}, to_apply=sum\n}\n' >"$t/twice.hlo"
expect id_named_twice 2 "twice.hlo:11:8: error: instruction 'r' (all-reduce): replica_groups names id 0 twice" --devices 2 --seed 1 "$t/twice.hlo"
# Devices whose control flow differs (a conditional on replica-id around a
# collective) must end with an error, not hang.
cat >"$t/diverge.hlo" <<'HLO'
HloModule diverge, replica_count=2

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

reduce_it {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), replica_groups={{0,1}}, to_apply=sum
}

keep_it {
  ROOT q = f32[2] parameter(0)
}

ENTRY main {
  x = f32[2] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[2] conditional(first, x, x), true_computation=reduce_it, false_computation=keep_it
}
HLO
for backend in interp cpu; do
  expect "diverging_devices_end_with_an_error_$backend" 1 "ended its run while the others wait at a collective" \
    --backend $backend --devices 2 --seed 1 "$t/diverge.hlo"
done
# NCCL cannot be told that a device will not come: on GPUs a collective in
# a conditional's branch is refused when compiled.
expect_gpu collective_in_a_branch_refused_on_gpus 2 "a collective across GPUs inside a conditional's branch" -- \
  --devices 2 --seed 1 "$t/diverge.hlo"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
