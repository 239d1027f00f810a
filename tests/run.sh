#!/usr/bin/env bash
# Runs every test and ends with "N passed, N failed".
#
#   unit tests   build/tests/test_*: each prints PASS/FAIL (and SKIP) lines, counted here
#   corpus       tests/hlo/NAME.hlo with tests/hlo/NAME/in*.npy and golden
#                out*.npy (made by tests/gen/gen_corpus.py with NumPy); run
#                through axle-run --backend interp, compared by npycmp with the
#                tolerance in tests/hlo/NAME/tolerance ("rtol atol", and "bf16"
#                when u16 outputs hold bfloat16 bits), if any
#   malformed    tests/malformed/*.hlo: each must exit 2 with a located
#                "FILE:LINE:COL: error:" message; NAME.expect, if present,
#                holds text the message must contain
#
# The slow sections run their items (a unit test, a corpus module) as
# parallel jobs, JOBS at a time (default: the number of cores); the output
# and the counts are the same as one item at a time, in the same order.
set -u
BUILD=${1:-build}
out=$BUILD/test-out
rm -rf "$out"; mkdir -p "$out"
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
passed=0; failed=0; skipped=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ $# -gt 1 ] && printf '  %s\n' "${@:2}"; }

# in_parallel FUNCTION ITEM...: FUNCTION ITEM for every ITEM, $jobs at a
# time. Each runs in a subshell that starts its counts at zero, with its
# stdout in a file; their outputs are printed and their counts added in ITEM
# order, each as soon as it and every item before it are done (so the
# output goes as the tests go, and nothing depends on which finished first).
# FUNCTION passes anything else back in files (the corpus-cpu markers).
section() { echo "== $* ($(date +%T))"; }  # a section starts: what it runs
parallel_runs=0
in_parallel() {
  local fn=$1 dir=$out/jobs/$parallel_runs running=0 i=0 printed=0 item items; shift
  items=("$@")
  parallel_runs=$((parallel_runs + 1)); mkdir -p "$dir"
  for item in "$@"; do
    if [ $running -ge "$jobs" ]; then
      wait -n; running=$((running - 1))
      in_parallel_print
    fi
    # The counts file appears whole (mv), and only after the output is written.
    (passed=0; failed=0; skipped=0; "$fn" "$item" >"$dir/$i.out"
     echo "$passed $failed $skipped" >"$dir/$i.part" && mv "$dir/$i.part" "$dir/$i.counts") &
    running=$((running + 1)); i=$((i + 1))
  done
  while [ $running -gt 0 ]; do
    wait -n; running=$((running - 1))
    in_parallel_print
  done
  wait
  in_parallel_print all
}
# in_parallel_print [all]: in_parallel's helper (it reads in_parallel's
# locals): prints the finished items that follow the ones printed; with
# "all" (every job has ended), every item, a missing count being a failure.
in_parallel_print() {
  local p f s
  while [ $printed -lt $i ]; do
    if [ ! -f "$dir/$printed.counts" ]; then
      [ "${1:-}" = all ] || return 0
      cat "$dir/$printed.out" 2>/dev/null
      failed=$((failed + 1)); echo "FAIL $fn ${items[printed]}: its job ended without its counts"
    else
      cat "$dir/$printed.out"
      read -r p f s <"$dir/$printed.counts"
      passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    fi
    printed=$((printed + 1))
  done
}

# ---- unit tests ----
unit_test() {  # PROGRAM: run it, count its PASS/FAIL/SKIP lines, show the failures and skips
  local t=$1 name log rc p f s
  name=$(basename "$t")
  log=$out/$name.log
  timeout 600 "$t" >"$log" 2>&1; rc=$?
  p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); s=$(grep -c '^SKIP ' "$log")
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  grep -E '^(FAIL|SKIP|  )' "$log" | head -40
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    fail "$name" "exited with status $rc without reporting a failure:" "$(tail -5 "$log")"
  fi
  echo "$name: $p passed, $f failed$([ "$s" -gt 0 ] && echo ", $s skipped")"
}
unit_tests=()
for t in "$BUILD"/tests/test_*; do [ -x "$t" ] && unit_tests+=("$t"); done
section "unit tests: ${#unit_tests[@]} programs, $jobs at a time"
in_parallel unit_test "${unit_tests[@]}"

# ---- corpus: run each module on its inputs and compare with NumPy's outputs ----
# Each module runs three ways: as written on the interpreter; optimized
# (--opt) on the interpreter, since the optimizer must never change what a
# module computes; and printed by axle-opt, then parsed back and run, since
# an optimized module must round-trip through its own text. The verifier runs
# after every pass that changed something (AXLE_FLAGS=--verify_each_pass).
check_outputs() {  # LABEL DIR RESULT_DIR: compare every golden in DIR with RESULT_DIR
  local label=$1 dir=$2 res=$3 tol=() ok=1 n=0 golden msg got
  [ -f "$dir/tolerance" ] && read -r -a tol <"$dir/tolerance"
  for golden in "$dir"/out*.npy; do
    [ -e "$golden" ] || continue
    n=$((n + 1))
    if ! msg=$("$BUILD/tests/npycmp" "$golden" "$res/$(basename "$golden")" "${tol[@]}" 2>&1); then
      fail "$label" "$(basename "$golden"): $msg"; return
    fi
  done
  got=$(ls "$res"/out*.npy 2>/dev/null | wc -l)
  if [ "$n" -eq 0 ]; then fail "$label" "no golden outputs in $dir"
  elif [ "$n" -ne "$got" ]; then fail "$label" "expected $n outputs, got $got"
  else pass "$label"; fi
}
corpus_modules=()
for hlo in tests/hlo/*.hlo; do [ -e "$hlo" ] && corpus_modules+=("$(basename "$hlo" .hlo)"); done
corpus_interp() {  # NAME: the module three ways on the interpreter
  local name=$1 dir=tests/hlo/$1 hlo=tests/hlo/$1.hlo args=() i mode res label module flags
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  for mode in plain opt opt-text; do
    res=$out/corpus-$mode/$name; mkdir -p "$res"
    label=corpus/$name; [ $mode != plain ] && label=corpus-$mode/$name
    module=$hlo; flags=()
    [ $mode = opt ] && flags=(--opt)
    if [ $mode = opt-text ]; then
      module=$res/optimized.hlo
      if ! AXLE_FLAGS=--verify_each_pass timeout 120 "$BUILD/axle-opt" -o "$module" "$hlo" >"$res/log" 2>&1; then
        fail "$label" "axle-opt failed:" "$(head -5 "$res/log")"; continue
      fi
    fi
    if ! AXLE_FLAGS=--verify_each_pass timeout 120 "$BUILD/axle-run" --backend interp "${flags[@]}" "${args[@]}" --out "$res" "$module" >>"$res/log" 2>&1; then
      fail "$label" "axle-run failed:" "$(head -5 "$res/log")"; continue
    fi
    check_outputs "$label" "$dir" "$res"
  done
}
section "corpus: ${#corpus_modules[@]} modules on the interpreter, as written, optimized and printed back"
in_parallel corpus_interp "${corpus_modules[@]}"

# ---- corpus-cpu: every module on --backend cpu at 1 and 2 threads ----
# The CPU backend must either compile a module and match NumPy's goldens
# (the same tolerance files) with byte-identical outputs at 1 and 2 threads,
# or refuse it at compile time: exit 2 and "the CPU backend cannot compile
# ... yet". A wrong answer, a crash or any other exit code fails.
# Each job leaves a marker, refused or matched, in its t1 result directory.
corpus_cpu() {  # NAME: the module at 1 and 2 threads
  local name=$1 dir=tests/hlo/$1 hlo=tests/hlo/$1.hlo label=corpus-cpu/$1 args=() i rc threads res log1 same f before
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  rc=()
  for threads in 1 2; do
    res=$out/corpus-cpu-t$threads/$name; mkdir -p "$res"
    timeout 120 "$BUILD/axle-run" --backend cpu --threads $threads "${args[@]}" --out "$res" "$hlo" >"$res/log" 2>&1
    rc+=($?)
  done
  log1=$out/corpus-cpu-t1/$name/log
  if [ "${rc[0]}" -eq 2 ] && [ "${rc[1]}" -eq 2 ] && grep -q "the CPU backend cannot compile .* yet" "$log1"; then
    touch "$out/corpus-cpu-t1/$name/refused"; pass "$label (refused: $(grep -o 'cannot compile [^ ]* ([^)]*)' "$log1" | head -1))"; return
  fi
  if [ "${rc[0]}" -ne 0 ] || [ "${rc[1]}" -ne 0 ]; then
    fail "$label" "exit ${rc[0]} at 1 thread, ${rc[1]} at 2:" "$(head -3 "$log1")"; return
  fi
  same=1
  for f in "$out/corpus-cpu-t1/$name"/out*.npy; do
    cmp -s "$f" "$out/corpus-cpu-t2/$name/$(basename "$f")" || same=0
  done
  if [ $same -eq 0 ]; then fail "$label" "outputs at 1 and 2 threads differ"; return; fi
  before=$failed
  check_outputs "$label" "$dir" "$out/corpus-cpu-t1/$name"
  [ $failed -eq $before ] && touch "$out/corpus-cpu-t1/$name/matched"
}
section "corpus-cpu: ${#corpus_modules[@]} modules on the CPU backend at 1 and 2 threads"
in_parallel corpus_cpu "${corpus_modules[@]}"
cpu_matched=0; cpu_refused=0; cpu_compiled=()
for name in "${corpus_modules[@]}"; do
  [ -f "$out/corpus-cpu-t1/$name/refused" ] && cpu_refused=$((cpu_refused + 1))
  [ -f "$out/corpus-cpu-t1/$name/matched" ] && cpu_matched=$((cpu_matched + 1)) && cpu_compiled+=("$name")
done
echo "corpus-cpu: $cpu_matched compiled and matched at 1 and 2 threads (byte-identical), $cpu_refused refused (exit 2, cannot compile ... yet)"
# The modules it compiled, again at each lower ISA level (AXLE_CPU) this
# machine has: the same goldens must match. Nothing the machine's own
# level compiles may be refused at a lower one (without FMA, sse4 emulates
# it exactly).
corpus_cpu_level() {  # NAME: the module at ISA level $level; a matched marker when it matches
  local name=$1 dir=tests/hlo/$1 res=$out/corpus-cpu-$level/$1 args=() i level_rc before
  mkdir -p "$res"
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  AXLE_CPU=$level timeout 120 "$BUILD/axle-run" --backend cpu --threads 1 "${args[@]}" --out "$res" "tests/hlo/$name.hlo" >"$res/log" 2>&1
  level_rc=$?
  if [ $level_rc -ne 0 ]; then
    fail "corpus-cpu-$level/$name" "axle-run failed at $level (exit $level_rc):" "$(head -3 "$res/log")"; return
  fi
  before=$failed
  check_outputs "corpus-cpu-$level/$name" "$dir" "$res"
  [ $failed -eq $before ] && touch "$res/matched"
}
for level in sse4 avx2; do
  AXLE_CPU=$level timeout 20 "$BUILD/axle-run" --backend cpu --seed 1 examples/reduce_sum.hlo >/dev/null 2>&1 || continue
  section "corpus-cpu-$level: ${#cpu_compiled[@]} modules at AXLE_CPU=$level"
  in_parallel corpus_cpu_level "${cpu_compiled[@]}"
  level_matched=0
  for name in "${cpu_compiled[@]}"; do
    [ -f "$out/corpus-cpu-$level/$name/matched" ] && level_matched=$((level_matched + 1))
  done
  echo "corpus-cpu-$level: $level_matched of ${#cpu_compiled[@]} matched at AXLE_CPU=$level, 1 thread"
done

# ---- corpus-aot and axle-aot: ahead of time (tests/aot/aot.sh) ----
source tests/aot/aot.sh
aot_sections

# ---- malformed input: a located error and exit code 2, never a crash ----
section "malformed input"
for bad in tests/malformed/*.hlo; do
  [ -e "$bad" ] || continue
  name=$(basename "$bad" .hlo)
  err=$(timeout 20 "$BUILD/axle-run" --backend interp --seed 1 "$bad" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 2 ]; then fail "malformed/$name" "exit code $rc, expected 2" "$(echo "$err" | head -3)"; continue; fi
  if ! echo "$err" | head -1 | grep -qE '^[^ ]+:[0-9]+:[0-9]+: error: '; then
    fail "malformed/$name" "no FILE:LINE:COL: error: message" "$(echo "$err" | head -3)"; continue
  fi
  if [ -f "tests/malformed/$name.expect" ] && ! echo "$err" | grep -qF "$(cat "tests/malformed/$name.expect")"; then
    fail "malformed/$name" "message lacks '$(cat "tests/malformed/$name.expect")'" "$(echo "$err" | head -3)"; continue
  fi
  pass "malformed/$name"
done

# ---- the axle-run contract (docs/design.md): exit codes, messages, options ----
section "axle-run and axle-opt: options, exit codes, messages, debugging, dumps"
run=$BUILD/axle-run; t=$out/tools; mkdir -p "$t"
expect_run() {  # NAME WANT_RC WANT_TEXT ARGS...: rc and a line of output must match
  local name=$1 want_rc=$2 want_text=$3; shift 3
  local got; got=$(timeout 60 "$run" "$@" 2>&1); local rc=$?
  if [ $rc -ne "$want_rc" ]; then fail "axle-run/$name" "exit $rc, expected $want_rc" "$(echo "$got" | head -3)"
  elif ! echo "$got" | grep -qF -- "$want_text"; then fail "axle-run/$name" "output lacks '$want_text'" "$(echo "$got" | head -3)"
  else pass "axle-run/$name"; fi
}
expect_run no_module 2 "error: no module given"
expect_run unknown_option 2 "error: unknown flag '--frob'" --frob examples/reduce_sum.hlo
expect_run bad_time_count 2 "--time takes a run count" --time 0 examples/reduce_sum.hlo
expect_run missing_file 2 "error: cannot read" "$t/no-such.hlo"
expect_run cpu_refuses_what_it_cannot_compile 2 "rng_state.hlo:8:8: error: the CPU backend cannot compile s (rng-get-and-update-state) yet" --backend cpu tests/cpu_refuses/rng_state.hlo
# issue 22 item 8: the CPU backend crashed compiling this scatter (an operand
# dimension both inserted and batching); the verifier now refuses it first.
expect_run cpu_scatter_inserted_and_batching_refused 2 "(StableHLO scatter (C9))" --backend cpu tests/malformed/scatter_c9_inserted_also_batching.hlo
expect_run parse_only_checks_gather_batching 2 "(StableHLO gather (C18))" --parse-only tests/malformed/gather_c18_start_index_map_batching.hlo
# A collective over 4 devices loads; compiling it is refused at the instruction.
expect_run four_devices_refused_by_cpu 2 "all_gather_four_devices.hlo:4:8: error: instruction 'ag' (all-gather) needs 4 devices; this run has 1" --backend cpu tests/cpu_refuses/all_gather_four_devices.hlo
expect_run four_devices_refused_by_interp 2 "needs 4 devices; this run has 1" --backend interp tests/cpu_refuses/all_gather_four_devices.hlo
expect_run four_devices_load 0 "parsed: m" --parse-only tests/cpu_refuses/all_gather_four_devices.hlo
# A bounded dynamic dimension loads (and prints back as <=4); compiling it is refused at the instruction.
expect_run bounded_dynamic_loads 0 "parsed: m" --parse-only tests/cpu_refuses/bounded_dynamic_dimension.hlo
expect_run bounded_dynamic_refused_by_interp 2 "bounded_dynamic_dimension.hlo:4:3: error: instruction 'p' (parameter): dynamic dimensions (f32[<=4]) are not supported" --backend interp tests/cpu_refuses/bounded_dynamic_dimension.hlo
expect_run bounded_dynamic_refused_by_cpu 2 "dynamic dimensions (f32[<=4]) are not supported" --backend cpu tests/cpu_refuses/bounded_dynamic_dimension.hlo
# An unbounded one (f32[?,4], XLA's kUnboundedSize) loads and prints back as ?; compiling is refused,
# before the optimizer sees it, at the instruction.
expect_run unbounded_dynamic_loads 0 "parsed: m" --parse-only tests/cpu_refuses/unbounded_dynamic_dimension.hlo
expect_run unbounded_dynamic_refused_by_interp 2 "unbounded_dynamic_dimension.hlo:4:3: error: instruction 'p' (parameter): dynamic dimensions (f32[?,4]) are not supported" --backend interp tests/cpu_refuses/unbounded_dynamic_dimension.hlo
expect_run unbounded_dynamic_refused_by_cpu 2 "unbounded_dynamic_dimension.hlo:4:3: error: instruction 'p' (parameter): dynamic dimensions (f32[?,4]) are not supported" --backend cpu tests/cpu_refuses/unbounded_dynamic_dimension.hlo
expect_run unbounded_dynamic_refused_by_opt 2 "unbounded_dynamic_dimension.hlo:4:3: error: instruction 'p' (parameter): dynamic dimensions (f32[?,4]) are not supported" --opt --backend interp tests/cpu_refuses/unbounded_dynamic_dimension.hlo
expect_run cpu_backend_runs 0 "check: cpu matches the evaluator" --backend cpu --check --seed 1 examples/reduce_sum.hlo
AXLE_CUDA_DRIVER=/nonexistent/libcuda.so.1 expect_run gpu_without_driver 2 "error: no CUDA driver" --backend gpu examples/reduce_sum.hlo
AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 FAKE_CUDA_DEVICES=0 expect_run gpu_without_device 2 "error: no CUDA device" --backend gpu examples/reduce_sum.hlo
expect_run seeded_run 0 "out0: f32[]" --seed 1 examples/reduce_sum.hlo
expect_run time_prints_median 0 "time: median_ms=" --seed 1 --time 3 examples/reduce_sum.hlo
expect_run time_prints_compile 0 "compile_ms=" --seed 1 --time 3 examples/reduce_sum.hlo
expect_run default_backend_is_cpu 0 "check: cpu matches the evaluator" --check examples/reduce_sum.hlo
expect_run interp_on_request 0 "check: interp matches the evaluator" --backend interp --check examples/reduce_sum.hlo
"$run" --seed 1 --out "$t/scalar" examples/reduce_sum.hlo >/dev/null 2>&1
expect_run wrong_input_count 1 "the module takes 3 parameters, the inputs give 1 array" --in "$t/scalar/out0.npy" examples/reduce_sum.hlo
expect_run wrong_input_shape 1 "parameter 0 (x.1) expects f32[1024], got f32[]" \
  --in "$t/scalar/out0.npy" --in "$t/scalar/out0.npy" --in "$t/scalar/out0.npy" examples/reduce_sum.hlo
expect_run unreadable_input 1 "error:" --in "$t/none.npy" --in "$t/none.npy" --in "$t/none.npy" examples/reduce_sum.hlo
# Constants XLA printed elided ({...}) are filled from --seed, with one warning line.
elided=$out/tools/elided.hlo
printf 'HloModule e\n\nENTRY main {\n  a = f32[3] constant({...})\n  b = s32[2,2] constant({...})\n  ROOT t = (f32[3], s32[2,2]) tuple(a, b)\n}\n' >"$elided"
expect_run elided_constants_warn 0 "warning: 2 constants were elided ({...}) and filled with random values; results are not meaningful" --seed 3 "$elided"
n=$(timeout 60 "$run" --seed 3 "$elided" 2>&1 >/dev/null | grep -c '^warning:')
[ "$n" -eq 1 ] && pass "axle-run/elided_constants_warn_once" || fail "axle-run/elided_constants_warn_once" "$n warning lines, expected 1"
a=$(timeout 60 "$run" --seed 3 "$elided" 2>/dev/null); b=$(timeout 60 "$run" --seed 3 "$elided" 2>/dev/null); c=$(timeout 60 "$run" --seed 4 "$elided" 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ] && pass "axle-run/elided_constants_follow_the_seed" || fail "axle-run/elided_constants_follow_the_seed" "same seed must give the same values, another seed others"
# A tuple parameter takes one --in per leaf, depth first.
tp=tests/hlo/syntax_tuple_parameter
expect_run tuple_parameter_counts_leaves 1 "the module's 1 parameter hold 3 arrays (tuples count each leaf), the inputs give 2" \
  --in "$tp/in0.npy" --in "$tp/in1.npy" "$tp.hlo"
expect_run tuple_parameter_leaf_shape 1 "parameter 0 (p) expects ((f32[3], s32[2]), f32[3]), got ((f32[3], f32[3]), f32[3])" \
  --in "$tp/in0.npy" --in "$tp/in2.npy" --in "$tp/in2.npy" "$tp.hlo"
# A shape past 2^40 elements (as XLA's own tests write) loads, and is refused
# where memory is allocated for it, with the bytes it needs.
big_hlo=$t/big_broadcast.hlo
printf 'HloModule big_broadcast\n\nENTRY main {\n  c = bf16[] constant(1)\n  b = bf16[24,2048,2048,3,4096] broadcast(c), dimensions={}\n  ROOT s = bf16[24,2048,2048,3,4096] negate(b)\n}\n' >"$big_hlo"
expect_run shape_past_two_to_the_forty_loads 0 "parsed: big_broadcast, 1 computation, 3 instructions" --parse-only "$big_hlo"
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1 \
  expect_run shape_past_two_to_the_forty_refused_at_allocation 1 "error: out of memory: bf16[24,2048,2048,3,4096] needs 2473901162496 bytes" --backend interp "$big_hlo"
expect_run tuple_parameter_from_seed 0 "out1: s32[2]" --seed 5 "$tp.hlo"
expect_run parse_only 0 "parsed: syntax_tuple_parameter, 1 computation, 8 instructions" --parse-only "$tp.hlo"
# --time on the GPU adds the device's own time (CUDA events; the fake driver says 0.5 ms a run).
AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 expect_run gpu_time_prints_device_time 0 "device: median_ms=0.5000 min_ms=0.5000 max_ms=0.5000 runs=3" --backend gpu --seed 1 --time 3 examples/reduce_sum.hlo
AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 FAKE_CUDA_FAIL=cuEventRecord expect_run gpu_time_event_failure 1 "error: cuEventRecord failed while starting a timing" --backend gpu --seed 1 --time 3 examples/reduce_sum.hlo
AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 expect_run compile_only 0 "compiled: jit_f for --backend gpu in" --backend gpu --compile-only examples/reduce_sum.hlo
# A result too large for memory is a run-time error that says how much it needed.
big=$out/tools/big.hlo
printf 'HloModule big\n\nENTRY main {\n  c = f32[] constant(1)\n  ROOT b = f32[300000,250000] broadcast(c), dimensions={}\n}\n' >"$big"
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1 \
  expect_run out_of_memory_names_bytes 1 "error: out of memory: f32[300000,250000] needs 300000000000 bytes" "$big"
# XLA's optimized dump of a module (fusions, bitcasts, layouts) computes the same as the module.
"$run" --seed 7 --out "$t/einsum" tests/hlo-samples/jax_einsum.hlo >/dev/null 2>&1
"$run" --seed 7 --out "$t/einsum_opt" tests/hlo-samples/jax_einsum.optimized.hlo >/dev/null 2>&1
same=1
for f in out0.npy out1.npy; do
  "$BUILD/tests/npycmp" "$t/einsum/$f" "$t/einsum_opt/$f" 0 0 >/dev/null 2>&1 || same=0
done
[ $same -eq 1 ] && pass "axle-run/samples_give_the_same_outputs" || fail "axle-run/samples_give_the_same_outputs" "jax_einsum.hlo and jax_einsum.optimized.hlo differ"

# ---- the C API example: builds and parses a module, runs both on the CPU backend ----
if api_out=$(timeout 60 "$BUILD/examples/api_example" 2>&1) && [ "$(echo "$api_out" | tail -1)" = ok ]; then
  pass "api_example/runs_on_the_cpu_backend"
else
  fail "api_example/runs_on_the_cpu_backend" "$(echo "$api_out" | tail -3)"
fi

# ---- debugging a run (docs/debugging.md): --find-nan, --check per instruction, --dump of CPU kernels ----
# log of a negative number: --find-nan names the first instruction whose
# value holds a NaN, from the compiled code's own values, with its op_name
# and source line, and exits 1; inside a fusion it names the fused op too.
nan_hlo=$t/find_nan.hlo
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
expect_run find_nan_names_the_fused_log 1 "inside the fusion, evaluated on the same inputs, the first is l.1 (jit(f)/log at model.py:12)" --backend cpu --find-nan --seed 1 "$nan_hlo"
expect_run find_nan_on_the_interpreter 1 "l (jit(f)/log at model.py:12) is the first instruction to produce a NaN" --backend interp --find-nan --seed 1 "$nan_hlo"
# Dividing by zero makes an infinity, which --find-nan names as such.
inf_hlo=$t/find_inf.hlo
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
expect_run find_nan_names_an_infinity 1 "(jit(g)/div at model.py:30) is the first instruction to produce an infinity" --backend cpu --find-nan --seed 1 "$inf_hlo"
expect_run find_nan_clean_run 0 "find-nan: no NaN or infinity in the values of" --backend cpu --find-nan --seed 1 examples/reduce_sum.hlo
# --check compares every instruction with the evaluator on the compiled
# inputs. AXLE_TEST_CORRUPT_STEP (a test-only hook in cpu_program.c) spoils
# the value of one instruction as it is observed: --check must name it.
dot_hlo=$t/check_dot.hlo
cat >"$dot_hlo" <<'HLO'
HloModule check_dot

ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,3] parameter(1)
  n = f32[4,8] negate(x), metadata={op_name="jit(f)/neg" source_file="model.py" source_line=20}
  ROOT d = f32[4,3] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" source_file="model.py" source_line=21}
}
HLO
expect_run check_every_instruction 0 "check: 2 instructions match the evaluator's on the same inputs" --backend cpu --check --seed 1 "$dot_hlo"
AXLE_TEST_CORRUPT_STEP=d expect_run check_names_a_wrong_instruction 1 "d (jit(f)/dot_general at model.py:21) is the first instruction whose result differs" --backend cpu --check --seed 1 "$dot_hlo"
# A sum's rounding grows with its terms (sum_rounding_allowance in
# executable.c): a convolution of 18,432 products per output, summed in
# another order than the evaluator's, is within --check's tolerance (one
# element of 576 was not while the allowance ignored the terms).
long_sum_hlo=$t/check_long_sum.hlo
cat >"$long_sum_hlo" <<'HLO'
HloModule check_long_sum

ENTRY main {
  x = f32[1,2048,6,6] parameter(0)
  w = f32[16,2048,3,3] parameter(1)
  ROOT c = f32[1,16,6,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
}
HLO
expect_run check_allows_for_the_rounding_of_long_sums 0 "check: cpu matches the evaluator" --backend cpu --check --seed 1 "$long_sum_hlo"
# A wrong value read by later instructions is named alone: each is checked
# on the inputs the compiled code gave it, so the dot after it passes.
AXLE_TEST_CORRUPT_STEP=fusion.negate expect_run check_names_the_first_wrong_instruction 1 "fusion.negate (jit(f)/neg at model.py:20) is the first instruction whose result differs" --backend cpu --check --seed 1 "$dot_hlo"
AXLE_TEST_CORRUPT_STEP=d expect_run check_error_is_located 1 "check_dot.hlo:7:8: error:" --backend cpu --check --seed 1 "$dot_hlo"
# --dump with --backend cpu: per kernel its kernel IR and its x86 listing,
# each headed by the HLO instruction; index.txt lists every step.
rm -rf "$t/cpu_dump"
"$run" --backend cpu --seed 1 --dump "$t/cpu_dump" "$nan_hlo" >/dev/null 2>&1
k=$(ls "$t/cpu_dump/kernels/"*.s 2>/dev/null | head -1)
if [ -f "$t/cpu_dump/kernels/index.txt" ] && [ -n "$k" ] && [ -f "${k%.s}.kernel.txt" ] &&
   grep -q "^# fusion.* fusion(x)" "$k" && grep -q "log" "$k" && grep -q "^kernel " "${k%.s}.kernel.txt"; then
  pass "axle-run/dump_writes_cpu_kernels_and_listings"
else fail "axle-run/dump_writes_cpu_kernels_and_listings" "$(ls -R "$t/cpu_dump" 2>&1 | head -5)"; fi

# ---- axle-run's flags, inputs and outputs (--help, .npz, --input, --expected, --json) ----
# The .npz files are NumPy's (tests/gen/gen_tool_inputs.py); the golden is
# demo_reduce_sum's, NumPy's float64 sum.
rs=examples/reduce_sum.hlo; tt=tests/tools
expect_run help_lists_every_flag 0 "--time-kernels" --help
expect_run help_lists_the_environment 0 "AXLE_THREADS" --help
expect_run help_lists_exit_codes 0 "2  a usage, parse, verify or compile error" --help
expect_run help_lists_optimizer_flags 0 "--verify-each-pass" --help
expect_run version 0 "axle-run " --version
expect_run unknown_flag_after_the_module 2 "error: unknown flag '--frob'" "$rs" --frob
expect_run unknown_flag_last_is_not_a_missing_value 2 "error: unknown flag '--frob'" --frob
expect_run flag_value_after_equals 0 "out0: f32[]" --seed=1 "$rs"
expect_run underscore_spelling_is_the_same_flag 0 "out0: f32[]" --find_nan --seed 1 "$rs"
expect_run switch_takes_no_value 2 "--check=1 takes no value" --check=1 "$rs"
expect_run optimizer_flag_on_the_command_line 0 "instructions:" --opt --stats --verify-each-pass --seed 1 "$rs"
expect_run bad_optimizer_flag_value 2 "--max_temp_bytes takes a byte count" --max-temp-bytes lots "$rs"
AXLE_THREADS=0 expect_run axle_threads_zero_is_an_error 2 "AXLE_THREADS takes a count from 1 to 1024, not '0'" --seed 1 "$rs"
AXLE_THREADS=two expect_run axle_threads_garbage_is_an_error 2 "AXLE_THREADS takes a count from 1 to 1024, not 'two'" --seed 1 "$rs"
AXLE_THREADS=2 expect_run axle_threads_two_runs 0 "out0: f32[]" --seed 1 "$rs"
expect_run seeded_inputs_are_noted 0 "note: no inputs given: the 3 parameters are drawn from --seed 4" --seed 4 "$rs"
expect_run npz_inputs_match_numpy 0 "expected: 1 result match $tt/reduce_sum_want.npz" --in "$tt/reduce_sum_in.npz" --expected "$tt/reduce_sum_want.npz" --rtol 1e-4 "$rs"
expect_run npz_named_members_in_archive_order 0 "expected: 1 result match" --in "$tt/reduce_sum_in_named.npz" --expected "$tt/reduce_sum_want.npz" --rtol 1e-4 "$rs"
expect_run npz_compressed_is_refused 1 "is compressed (np.savez_compressed); axle reads np.savez archives" --in "$tt/reduce_sum_in_zip.npz" "$rs"
expect_run expected_mismatch_exits_1 1 "out0 differs from --expected" --seed 1 --expected "$tt/reduce_sum_want.npz" "$rs"
expect_run expected_wrong_count 1 "holds 1 arrays; the module gives 2 results" --seed 1 --expected "$tt/reduce_sum_want.npz" "$tp.hlo"
# inline inputs: sum(x + y*z) over 1024 elements of 1 + 2*3 is 7168 exactly
expect_run inline_inputs_one_value_fills 0 "out0: f32[] [7168]" --input 'f32[1024]=1' --input f32[1024]=2 --input=f32[1024]=3 "$rs"
expect_run inline_input_value_count 1 "--input 'f32[1024]=1,2': 2 values for 1024 elements" --input 'f32[1024]=1,2' --input f32[1024]=2 --input=f32[1024]=3 "$rs"
expect_run inline_input_bad_value 1 "'x' is not a f32 value" --input 'f32[1024]=x' --input f32[1024]=2 --input=f32[1024]=3 "$rs"
expect_run inline_input_bad_type 1 "expected TYPE[DIMS]=V,V,..." --input 'q32[1024]=1' --input f32[1024]=2 --input=f32[1024]=3 "$rs"
expect_run inline_integer_out_of_range 1 "'300' is not a s8 value" --input 's8[2]=1,300' "$rs"
expect_run module_from_stdin 0 "out0: f32[]" --seed 1 - <"$rs"
expect_run print_all_prints_every_element 0 "out1: s32[2] [" --print-all --seed 5 "$tp.hlo"
rm -rf "$t/outdeep"
expect_run out_makes_folders 0 "" --seed 1 --out "$t/outdeep/a/b" "$rs"
[ -f "$t/outdeep/a/b/out0.npy" ] && pass "axle-run/out_folder_exists" || fail "axle-run/out_folder_exists" "no $t/outdeep/a/b/out0.npy"
expect_run out_npz_then_expected 0 "expected: 1 result match" --in "$tt/reduce_sum_in.npz" --out "$t/outdeep/c/res.npz" --expected "$tt/reduce_sum_want.npz" --rtol 1e-4 "$rs"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  if msg=$(/usr/bin/python3 -c 'import numpy as np, sys; d = np.load(sys.argv[1]); w = np.load(sys.argv[2])["arr_0"]; assert list(d.keys()) == ["out0"], list(d.keys()); np.testing.assert_allclose(d["out0"], w, rtol=1e-4)' "$t/outdeep/c/res.npz" "$tt/reduce_sum_want.npz" 2>&1); then
    pass "axle-run/numpy_reads_the_written_npz"
  else fail "axle-run/numpy_reads_the_written_npz" "$msg"; fi
else echo "SKIP axle-run/numpy_reads_the_written_npz: /usr/bin/python3 has no NumPy (apt-get install python3-numpy)"; skipped=$((skipped + 1)); fi
expect_run time_kernels_lists_steps 0 "fusion.add_multiply_reduce (fusion)" --seed 1 --time 3 --time-kernels "$rs"
expect_run time_kernels_needs_time 2 "--time-kernels, --peak and --json need --time N" --time-kernels "$rs"
expect_run peak_needs_time 2 "--time-kernels, --peak and --json need --time N" --peak "$rs"
# The FMA peak probe (about 1 s of CPU) runs only when --peak asks for its figure.
expect_run time_peak_prints_the_fraction 0 "of the FMA peak measured now" --seed 1 --time 3 --peak tests/hlo/dot_matmul.hlo
got=$("$run" --seed 1 --time 3 tests/hlo/dot_matmul.hlo 2>&1)
if echo "$got" | grep -q '^matmul: .* GFLOP/s$'; then pass "axle-run/time_without_peak_runs_no_probe"
else fail "axle-run/time_without_peak_runs_no_probe" "$(echo "$got" | grep matmul)"; fi
json=$("$run" --seed 1 --time 3 --time-kernels --json - "$rs" 2>/dev/null)
if echo "$json" | grep -q '^{"module": "jit_f", "backend": "cpu", "runs": 3, "median_ms": .*"steps": \[{"instruction": "fusion.add_multiply_reduce", "opcode": "fusion", "median_ms"'; then
  pass "axle-run/json_report"
else fail "axle-run/json_report" "$json"; fi
if ! command -v python3 >/dev/null; then echo "SKIP axle-run/json_report_parses: no python3"; skipped=$((skipped + 1))
elif echo "$json" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null; then pass "axle-run/json_report_parses"
else fail "axle-run/json_report_parses" "$json"; fi

# ---- the optimizer's tools: axle-run --opt/--stats/--dump and axle-opt ----
expect_run opt_stats_per_pass 0 "buffer-assignment" --opt --stats --seed 1 examples/reduce_sum.hlo
expect_run opt_stats_instructions 0 "instructions:" --opt --stats --seed 1 examples/reduce_sum.hlo
AXLE_FLAGS=--frob expect_run bad_axle_flag 2 "unknown optimizer flag '--frob'" --opt examples/reduce_sum.hlo
rm -rf "$t/dump"
"$run" --opt --seed 1 --dump "$t/dump" --dump_passes examples/reduce_sum.hlo >/dev/null 2>&1
for f in before_optimizations.txt after_optimizations.txt after_optimizations.dot kernels.txt; do
  if [ -f "$t/dump/module_0000.jit_f.$f" ]; then pass "axle-run/dump_writes_$f"
  else fail "axle-run/dump_writes_$f" "$(ls "$t/dump" 2>&1)"; fi
done
# the program stage's dump names each step and the kernel it runs
if grep -qF "0   kernel      fusion.add_multiply_reduce" "$t/dump/module_0000.jit_f.program.txt" 2>/dev/null &&
   grep -qF "kernel fusion.add_multiply_reduce: reduce kernel" "$t/dump/module_0000.jit_f.program.txt"; then
  pass "axle-run/dump_writes_program.txt"
else fail "axle-run/dump_writes_program.txt" "$(cat "$t/dump/module_0000.jit_f.program.txt" 2>&1 | head -5)"; fi
if "$run" --seed 1 "$t/dump/module_0000.jit_f.after_optimizations.txt" >/dev/null 2>&1; then
  pass "axle-run/optimized_dump_parses_back"
else fail "axle-run/optimized_dump_parses_back"; fi
got=$(AXLE_FLAGS=--frob timeout 60 "$BUILD/axle-opt" examples/reduce_sum.hlo 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$got" | grep -qF "unknown optimizer flag '--frob'"; then pass "axle-opt/axle_flags_checked"
else fail "axle-opt/axle_flags_checked" "exit $rc: $got"; fi
got=$(timeout 60 "$BUILD/axle-opt" 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$got" | grep -qF "error: no module given"; then pass "axle-opt/no_module"
else fail "axle-opt/no_module" "exit $rc: $got"; fi
rm -rf "$t/dump_dot"
"$run" --seed 1 --dump "$t/dump_dot" examples/dot_1024.hlo >/dev/null 2>&1
if grep -q "schedule: micro-kernel [0-9]*x[0-9]* .*blocks MC" "$t/dump_dot/kernels/index.txt" 2>/dev/null &&
   grep -q "gemm micro-kernel" "$t/dump_dot/kernels/gemm.micro-kernel.s" 2>/dev/null; then
  pass "axle-run/dump_prints_the_gemm_schedule_and_micro_kernel"
else fail "axle-run/dump_prints_the_gemm_schedule_and_micro_kernel" "$(cat "$t/dump_dot/kernels/index.txt" 2>&1 | head -3)"; fi
# AXLE_PERF_MAP=1: each JIT region named in /tmp/perf-PID.map for perf report
map_pid=$(AXLE_PERF_MAP=1 bash -c 'echo $$; exec "$0" --seed 1 tests/hlo/jax_mlp_layer.hlo >/dev/null 2>&1' "$run")
if grep -qF " axle kernel " "/tmp/perf-$map_pid.map" 2>/dev/null &&
   grep -q "^[0-9a-f]* [0-9a-f]* axle gemm micro-kernel " "/tmp/perf-$map_pid.map"; then
  pass "axle-run/perf_map_names_kernels_and_gemm"
else fail "axle-run/perf_map_names_kernels_and_gemm" "$(head -3 "/tmp/perf-$map_pid.map" 2>&1)"; fi
rm -f "/tmp/perf-$map_pid.map"
map_pid=$(bash -c 'echo $$; exec "$0" --seed 1 examples/reduce_sum.hlo >/dev/null 2>&1' "$run")
if [ -e "/tmp/perf-$map_pid.map" ]; then fail "axle-run/no_perf_map_unless_asked" "/tmp/perf-$map_pid.map written"
else pass "axle-run/no_perf_map_unless_asked"; fi
# axle-opt --stage: each stage's own marks (ptx written with no driver: the
# tests' environment has none unless AXLE_CUDA_DRIVER names the fake)
expect_opt() {  # NAME WANT_RC WANT_TEXT ARGS...: rc and a line of output must match
  local name=$1 want_rc=$2 want_text=$3; shift 3
  local got; got=$(AXLE_CUDA_DRIVER=/nonexistent/libcuda.so.1 timeout 120 "$BUILD/axle-opt" "$@" 2>&1); local rc=$?
  if [ $rc -ne "$want_rc" ]; then fail "axle-opt/$name" "exit $rc, expected $want_rc" "$(echo "$got" | head -3)"
  elif ! echo "$got" | grep -qF -- "$want_text"; then fail "axle-opt/$name" "output lacks '$want_text'" "$(echo "$got" | head -3)"
  else pass "axle-opt/$name"; fi
}
expect_opt stage_hlo_is_the_default 0 "ROOT" --stage=hlo examples/reduce_sum.hlo
expect_opt stage_buffer_assignment 0 "slot" --stage buffer-assignment examples/reduce_sum.hlo
expect_opt stage_kernel 0 "kernel " --stage=kernel examples/reduce_sum.hlo
expect_opt stage_asm 0 "# kernel fusion.add_multiply_reduce (" --stage=asm examples/reduce_sum.hlo
expect_opt stage_ptx_without_a_driver 0 ".target sm_80" --stage=ptx examples/reduce_sum.hlo
expect_opt stage_ptx_for_hopper 0 ".target sm_90a" --stage=ptx --target sm_90a examples/reduce_sum.hlo
expect_opt stage_unknown 2 "--stage takes hlo, buffer-assignment, kernel, asm, ptx or program, not llvm" --stage=llvm examples/reduce_sum.hlo
expect_opt stage_program 0 "0   kernel      fusion.add_multiply_reduce" --stage=program examples/reduce_sum.hlo
expect_opt stage_program_nests_a_loop 0 "body: program of body (called)" --stage=program tests/hlo/while_counter.hlo
expect_opt target_unknown 2 "unknown GPU target 'sm_70'" --stage=ptx --target=sm_70 examples/reduce_sum.hlo
expect_opt unknown_flag_anywhere 2 "error: unknown flag --frob" examples/reduce_sum.hlo --frob
expect_opt help_lists_stages 0 "--stage NAME" --help
expect_opt version 0 "axle-opt " --version
rm -f "$t/stage.s"
expect_opt stage_into_a_file 0 "" --stage=asm -o "$t/stage.s" examples/reduce_sum.hlo
grep -q "vmulps\|mulps" "$t/stage.s" 2>/dev/null && pass "axle-opt/stage_file_written" || fail "axle-opt/stage_file_written" "no listing in $t/stage.s"
expect_opt module_from_stdin 0 "ROOT" - <examples/reduce_sum.hlo
if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
  ptxas_bin=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  "$BUILD/axle-opt" --stage=ptx --target sm_90a -o "$t/stage.ptx" tests/hlo/jax_softmax.hlo 2>"$t/stage.err" &&
    "$ptxas_bin" -arch=sm_90a "$t/stage.ptx" -o "$t/stage.cubin" 2>>"$t/stage.err" &&
    pass "axle-opt/stage_ptx_assembles" || fail "axle-opt/stage_ptx_assembles" "$(head -5 "$t/stage.err")"
else echo "SKIP axle-opt/stage_ptx_assembles: no ptxas"; skipped=$((skipped + 1)); fi

# ---- the GPU backend without a GPU (docs/gpu.md, "Checks without a GPU") ----
# Scripts that print PASS/FAIL/SKIP lines and end with a count line,
# counted like a unit test's.
gpu_script() {  # LABEL SCRIPT ARGS...
  local label=$1 log=$out/$1.log rc p f s; shift
  BUILD=$BUILD OUT=$out/$label timeout 900 bash "$@" >"$log" 2>&1; rc=$?
  p=$(grep -c '^PASS ' "$log"); f=$(grep -cE '^(FAIL|WRONG) ' "$log"); s=$(grep -c '^SKIP ' "$log")
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  grep -E '^(FAIL|WRONG|SKIP)' "$log" | head -40
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then fail "$label" "exited with status $rc without reporting a failure:" "$(tail -5 "$log")"; fi
  echo "$label: $(tail -1 "$log")"
}
# The three run side by side (ptxas_corpus.sh is itself parallel inside).
gpu_check() {  # NAME: one of the checks below
  local bench_log rows rc
  case $1 in
    # Every kernel of every corpus module through ptxas for sm_80 and sm_90a, and the SASS checks.
    ptxas-corpus) gpu_script ptxas-corpus tests/gpu/ptxas_corpus.sh ;;
    # Every corpus module on the fake driver's SIMT simulator against NumPy's
    # goldens; the modules the backend refuses must be the ones listed.
    sim-corpus) gpu_script sim-corpus tests/gpu/sim_corpus.sh --expect tests/gpu/expected_refusals ;;
    # bench/gpu, shrunk (BENCH_GPU_SMALL=1), on the simulator: the script runs
    # every workload and prints its table (the times are the fake driver's).
    bench-gpu)
      bench_log=$out/bench-gpu.log
      AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 FAKE_CUDA_EXECUTE=1 BENCH_GPU_SMALL=1 timeout 600 \
        bash bench/gpu/run.sh "$BUILD" >"$bench_log" 2>&1; rc=$?
      rows=$(grep -cE '^(copy|sum_xyz|softmax|layernorm|gemm_bf16|gemm_f32) +axle ' "$bench_log")
      if [ $rc -eq 0 ] && grep -q '^GPU benchmarks' "$bench_log" && [ "$rows" -eq 6 ]; then pass "bench-gpu/small_run_prints_its_table"
      else fail "bench-gpu/small_run_prints_its_table" "exit $rc, $rows axle rows of 6:" "$(tail -8 "$bench_log")"; fi ;;
  esac
}
section "the GPU backend without a GPU: ptxas over the corpus, the simulator, bench/gpu"
in_parallel gpu_check ptxas-corpus sim-corpus bench-gpu
# --compile-only --target with no driver at all: each kernel's PTX dumped and assembled alone.
gpu_script compile-without-gpu tests/gpu/compile_without_gpu.sh
# --check and --find-nan on the GPU backend, on the simulator, and a wrong kernel named.
gpu_script debug-on-gpu tests/gpu/debug_on_gpu.sh

# ---- the library as shipped: version, install, pkg-config, symbols ----
section "the library as shipped: version, install, pkg-config, symbols"
gpu_script library tests/library.sh

# ---- the file graph of src/: no dependency cycle but tests/cycles.allow's ----
section "the file graph of src/: no dependency cycle but the allowed ones (tests/cycles.sh)"
gpu_script cycles tests/cycles.sh

# ---- the Python package over libaxle.so (skips without NumPy) ----
section "the Python package: python/axle on libaxle.so, make install, pip install"
gpu_script python tests/python.sh

# ---- several devices in one process: the collectives against NumPy (docs/multi-device.md) ----
section "several devices in one process: every collective, group form and device count, interp and cpu"
gpu_script devices tests/devices/run.sh
gpu_script multi-device-examples examples/multi_device/run.sh
# ... and across processes, one device per MPI rank (skips without Open MPI: make test-deps)
gpu_script mpi tests/devices/mpi.sh

# A check whose tool is missing (ptxas, cuobjdump) prints SKIP: neither passed nor failed.
echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
