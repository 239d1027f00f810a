# The ahead-of-time compiler (axle-aot, docs/aot.md); tests/run.sh sources
# this after its corpus-cpu section, whose outputs (one thread, this
# machine's ISA level) are the JIT's bytes these must equal.
#
#   corpus-aot   every corpus module the CPU backend compiled, through
#                axle-aot at this machine's level: refused with a located
#                reason, or an object with `nm -u` empty, linked with
#                tests/aot/aot_driver.c, run on the module's inputs, its
#                results byte-identical with axle-run's and within the
#                goldens' tolerance. One ISA level only (the lower levels'
#                code is the JIT's at that level, which corpus-cpu-LEVEL
#                checks; aot/levels below runs objects at each level).
#   aot/...      the ISA check's mismatch code, two objects in one program,
#                the C API, the tool's errors
AOT_CC=${CC:-cc}
aot_link() {  # DIR NAME PREFIX: DIR/NAME.o and DIR/NAME.h with the driver into DIR/run
  $AOT_CC -std=c11 -O1 -Wall -Wextra -Werror -I"$1" -DAOT_HEADER="\"$2.h\"" -DAOT_NAME="$2" -DAOT_PREFIX="$3" \
    tests/aot/aot_driver.c "$1/$2.o" -o "$1/run" 2>&1
}
# aot_outputs_as_npy RES JIT: RES/outK.bin behind the .npy header of JIT/outK.npy,
# as RES/outK.npy; fails (1) when a count or a size differs.
aot_outputs_as_npy() {
  local res=$1 jit=$2 f k bin size
  [ "$(ls "$res"/out*.bin 2>/dev/null | wc -l)" -eq "$(ls "$jit"/out*.npy 2>/dev/null | wc -l)" ] || return 1
  for f in "$jit"/out*.npy; do
    k=$(basename "$f" .npy); bin=$res/$k.bin
    [ -f "$bin" ] || return 1
    size=$(stat -c %s "$bin")
    head -c $(($(stat -c %s "$f") - size)) "$f" >"$res/$k.npy" && cat "$bin" >>"$res/$k.npy"
  done
}
# corpus_aot NAME: at level $aot_level ("native", or a level whose JIT
# outputs corpus-cpu-LEVEL made), against axle-run's bytes at that level.
corpus_aot() {
  local jit=$out/corpus-cpu-$aot_level/$1
  [ "$aot_level" = native ] && jit=$out/corpus-cpu-t1/$1
  aot_case "corpus-aot-$aot_level/$1" "tests/hlo/$1.hlo" "tests/hlo/$1" "$out/corpus-aot-$aot_level/$1" "$jit"
}
# aot_case LABEL MODULE GOLDEN_DIR RESULT_DIR JIT_DIR: MODULE through axle-aot
# at $aot_level into RESULT_DIR, its inputs and goldens in GOLDEN_DIR,
# axle-run's outputs at that level in JIT_DIR; markers as it goes.
aot_case() {
  local label=$1 hlo=$2 dir=$3 res=$4 jit=$5 args=() i rc undefined f before
  mkdir -p "$res"
  timeout 120 "$BUILD/axle-aot" --cpu "$aot_level" --name m -o "$res/m.o" --header "$res/m.h" "$hlo" >"$res/log" 2>&1
  rc=$?
  if [ $rc -eq 2 ] && grep -q "^$hlo:[0-9]*:[0-9]*: error: the ahead-of-time CPU backend cannot compile" "$res/log"; then
    grep -o 'cannot compile [^ ]* ([^)]*) yet: .*' "$res/log" | head -1 | sed 's/ (axle-run runs it.*//' >"$res/refused"
    pass "$label (refused: $(cut -c1-100 "$res/refused"))"; return
  fi
  [ $rc -eq 0 ] || { fail "$label" "axle-aot exit $rc:" "$(head -3 "$res/log")"; return; }
  undefined=$(nm -u "$res/m.o")
  [ -z "$undefined" ] || { fail "$label" "nm -u m.o: $undefined"; return; }
  aot_link "$res" m M >"$res/link.log" || { fail "$label" "link:" "$(head -5 "$res/link.log")"; return; }
  touch "$res/compiled"
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=("$dir/in$i.npy") || break; done
  timeout 60 "$res/run" "$res" "${args[@]}" >"$res/run.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { fail "$label" "the linked program exited $rc:" "$(head -3 "$res/run.log")"; return; }
  touch "$res/ran"
  aot_outputs_as_npy "$res" "$jit" || { fail "$label" "its results differ in count or size from axle-run's"; return; }
  for f in "$jit"/out*.npy; do
    cmp -s "$f" "$res/$(basename "$f")" || { fail "$label" "$(basename "$f") is not byte-identical with axle-run's"; return; }
  done
  touch "$res/identical"
  before=$failed
  check_outputs "$label" "$dir" "$res"
  [ $failed -eq $before ] && touch "$res/matched"
}

aot_counts() {  # LEVEL MODULES...: the counts line of a level
  local level=$1 name d compiled=0 ran=0 identical=0 matched=0 refused=0; shift
  for name in "$@"; do
    d=$out/corpus-aot-$level/$name
    [ -f "$d/compiled" ] && compiled=$((compiled + 1)); [ -f "$d/ran" ] && ran=$((ran + 1))
    [ -f "$d/identical" ] && identical=$((identical + 1)); [ -f "$d/matched" ] && matched=$((matched + 1))
    [ -f "$d/refused" ] && refused=$((refused + 1))
  done
  echo "corpus-aot-$level: of $# modules, $compiled compiled and linked (nm -u empty), $ran ran," \
       "$identical byte-identical with axle-run, $matched matched the goldens, $refused refused"
}

# The LSTM of examples/aot (tests/aot/lstm.hlo, goldens from
# tests/gen/corpus_aot.py) stays out of the corpus: the GPU simulator
# takes minutes on its 36 dots. Here: axle-run against NumPy, then the
# object against both, at this machine's level.
aot_lstm() {
  local dir=tests/aot/lstm jit=$out/aot/lstm-jit args=() i
  mkdir -p "$jit"
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  if ! timeout 120 "$BUILD/axle-run" --threads 1 "${args[@]}" --out "$jit" tests/aot/lstm.hlo >"$jit/log" 2>&1; then
    fail "aot/lstm_jit" "$(head -3 "$jit/log")"; return
  fi
  check_outputs "aot/lstm_jit_matches_numpy" "$dir" "$jit"
  aot_level=native aot_case "aot/lstm_object" tests/aot/lstm.hlo "$dir" "$out/aot/lstm" "$jit"
}

# The ISA check: an object for avx2 run where the check is told the CPU
# has only sse4 (--test-pretend-cpu) returns NAME_ERROR_CPU, having run
# nothing; told avx2 or left alone, it runs.
aot_isa_check() {
  local t=$out/aot/isa args=() want pretend rc d=tests/hlo/demo_reduce_sum
  mkdir -p "$t"
  args=("$d/in0.npy" "$d/in1.npy" "$d/in2.npy")
  for pretend in sse4 avx2 ""; do
    mkdir -p "$t/$pretend"
    want=0; [ "$pretend" = sse4 ] && want=11   # the driver exits 10 + NAME_run's code
    "$BUILD/axle-aot" --cpu avx2 ${pretend:+--test-pretend-cpu $pretend} --name rs -o "$t/$pretend/rs.o" \
      --header "$t/$pretend/rs.h" examples/reduce_sum.hlo >"$t/$pretend/log" 2>&1 &&
      aot_link "$t/$pretend" rs RS >>"$t/$pretend/log" || { fail "aot/isa_check_${pretend:-none}" "$(head -3 "$t/$pretend/log")"; continue; }
    "$t/$pretend/run" "$t/$pretend" "${args[@]}" >>"$t/$pretend/log" 2>&1
    rc=$?
    if [ $rc -eq $want ]; then pass "aot/isa_check_pretending_${pretend:-nothing}_exits_$want"
    else fail "aot/isa_check_pretending_${pretend:-nothing}_exits_$want" "exit $rc:" "$(tail -2 "$t/$pretend/log")"; fi
  done
}

# Two objects in one program, both headers in one file: no clash, and each
# gives its answer (x * 2 and x + 1 on f32[4], exact).
aot_two_objects() {
  local t=$out/aot/two
  mkdir -p "$t"
  printf 'HloModule twice\nENTRY main {\n  x = f32[4]{0} parameter(0)\n  two = f32[] constant(2)\n  b = f32[4]{0} broadcast(two), dimensions={}\n  ROOT y = f32[4]{0} multiply(x, b)\n}\n' >"$t/twice.hlo"
  printf 'HloModule plus_one\nENTRY main {\n  x = f32[4]{0} parameter(0)\n  one = f32[] constant(1)\n  b = f32[4]{0} broadcast(one), dimensions={}\n  ROOT y = f32[4]{0} add(x, b)\n}\n' >"$t/plus_one.hlo"
  cat >"$t/main.c" <<'C'
#include <stdio.h>
#include "twice.h"
#include "plus_one.h"
int main(void) {
  _Alignas(64) float x[4] = {1, 2, 3, 4}, a[4], b[4];
  const void *params[] = {x};
  void *ra[] = {a}, *rb[] = {b};
  int rc = twice_run(params, ra, NULL) | plus_one_run(params, rb, NULL);
  for (int i = 0; i < 4; i++) printf("%g %g\n", a[i], b[i]);
  return rc || TWICE_RESULT0_BYTES != 16 || PLUS_ONE_PARAM0_BYTES != 16;
}
C
  if "$BUILD/axle-aot" -o "$t/twice.o" --header "$t/twice.h" "$t/twice.hlo" >"$t/log" 2>&1 &&
     "$BUILD/axle-aot" -o "$t/plus_one.o" --header "$t/plus_one.h" "$t/plus_one.hlo" >>"$t/log" 2>&1 &&
     $AOT_CC -std=c11 -Wall -Wextra -Werror -I"$t" "$t/main.c" "$t/twice.o" "$t/plus_one.o" -o "$t/main" >>"$t/log" 2>&1 &&
     [ "$("$t/main" | tr '\n' ' ')" = "2 2 4 3 6 4 8 5 " ]; then
    pass "aot/two_objects_link_into_one_program"
  else fail "aot/two_objects_link_into_one_program" "$(tail -5 "$t/log")" "$("$t/main" 2>&1 | tr '\n' ' ')"; fi
}

# NAME_run_parallel: a parallel-for of four threads (tests/aot/aot_parallel.c)
# runs the row tasks of big kernels and a split sum; the bytes are NAME_run's.
aot_parallel() {
  local t=$out/aot/parallel
  mkdir -p "$t"
  cat >"$t/big.hlo" <<'HLO'
HloModule big
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[512,1024]{1,0} parameter(0)
  e = f32[512,1024]{1,0} exponential(x)
  zero = f32[] constant(0)
  rows = f32[512]{0} reduce(e, zero), dimensions={1}, to_apply=add
  y = f32[1048576]{0} parameter(1)
  total = f32[] reduce(y, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[512,1024]{1,0}, f32[512]{0}, f32[]) tuple(e, rows, total)
}
HLO
  if "$BUILD/axle-aot" --name big -o "$t/big.o" --header "$t/big.h" "$t/big.hlo" >"$t/log" 2>&1 &&
     $AOT_CC -std=c11 -O1 -Wall -Wextra -Werror -pthread -I"$t" -DAOT_HEADER='"big.h"' -DAOT_NAME=big -DAOT_PREFIX=BIG \
       tests/aot/aot_parallel.c "$t/big.o" -o "$t/run" >>"$t/log" 2>&1 && "$t/run" >>"$t/log" 2>&1; then
    pass "aot/run_parallel_gives_the_bytes_of_one_thread ($(tail -1 "$t/log"))"
  else fail "aot/run_parallel_gives_the_bytes_of_one_thread" "$(tail -5 "$t/log")"; fi
}

# The tool: exit 2 and a message for what it cannot do; nothing written.
aot_tool_errors() {
  local t=$out/aot/tool label want text
  mkdir -p "$t"
  aot_expect() {  # LABEL WANT_TEXT ARGS...
    label=$1 want=$2; shift 2
    text=$("$BUILD/axle-aot" "$@" 2>&1)
    if [ $? -eq 2 ] && grep -qF -- "$want" <<<"$text"; then pass "aot/$label"
    else fail "aot/$label" "expected exit 2 and '$want', got:" "$text"; fi
  }
  aot_expect no_object "no object given" examples/reduce_sum.hlo
  aot_expect unknown_flag "error: unknown flag --frob" --frob -o "$t/x.o" examples/reduce_sum.hlo
  aot_expect bad_cpu "--cpu takes sse4, avx2, avx512 or native, not avx3" --cpu avx3 -o "$t/x.o" examples/reduce_sum.hlo
  aot_expect bad_name "--name is not a C identifier: 9x" --name 9x -o "$t/x.o" examples/reduce_sum.hlo
  aot_expect missing_module "cannot read" -o "$t/x.o" "$t/no-such.hlo"
  aot_expect refuses_sort_located "tests/hlo/jax_argsort_total_order.hlo:14:3: error: the ahead-of-time CPU backend cannot compile sort.10" \
    -o "$t/x.o" tests/hlo/jax_argsort_total_order.hlo
  if [ -e "$t/x.o" ]; then fail "aot/nothing_written_on_error" "$t/x.o exists"; else pass "aot/nothing_written_on_error"; fi
}

# Everything above, as run.sh's sections.
aot_sections() {
  local levels=() level
  section "corpus-aot: the ${#cpu_compiled[@]} modules the CPU backend compiled, through axle-aot at this machine's level"
  aot_level=native
  in_parallel corpus_aot "${cpu_compiled[@]}"
  aot_counts native "${cpu_compiled[@]}"
  aot_compiled=()
  for name in "${cpu_compiled[@]}"; do [ -f "$out/corpus-aot-native/$name/compiled" ] && aot_compiled+=("$name"); done
  # The lower levels corpus-cpu-LEVEL ran (AOT_LEVELS=none skips them).
  for level in ${AOT_LEVELS:-sse4 avx2}; do
    [ -d "$out/corpus-cpu-$level" ] || continue
    section "corpus-aot-$level: the ${#aot_compiled[@]} modules axle-aot compiled, at --cpu $level"
    aot_level=$level
    in_parallel corpus_aot "${aot_compiled[@]}"
    aot_counts "$level" "${aot_compiled[@]}"
  done
  section "axle-aot: the examples' LSTM, the ISA check, two objects in one program, threads, the tool's errors"
  if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then aot_isa_check; else echo "SKIP aot/isa_check (no avx2 here)"; skipped=$((skipped + 1)); fi
  aot_lstm
  aot_two_objects
  aot_parallel
  aot_tool_errors
}
