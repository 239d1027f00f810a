#!/usr/bin/env bash
# The corpus through `axle-run --backend gpu` on the fake libcuda.so.1 with
# FAKE_CUDA_EXECUTE=1: every launch runs on the host's SIMT simulator
# (tests/fake_cuda/ptx_simulate.h), so the GPU backend's results can be
# checked against NumPy's goldens on a machine without a GPU.
#
#   bash tests/gpu/sim_corpus.sh [--expect FILE [--update]] [NAME ...]
#                                               (default: every module)
#
# One line per module: PASS, WRONG (differs from the golden), REFUSED
# (the backend's located refusal, with its reason) or FAIL (any other
# error, a crash or the time limit); then a count of each.
#
# --expect FILE: FILE lists the modules the backend is expected to refuse,
# one name a line (# starts a comment; tests/gpu/expected_refusals). A
# module refused but not listed, or listed but not refused, is a FAIL line
# too, so the list tracks the backend both ways. --update rewrites FILE
# from this run instead (the entries of modules not run this time are
# kept), and reports nothing against it.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
out=${OUT:-$BUILD/gpu-sim}
mkdir -p "$out"
expect=""; update=0
while [ $# -gt 0 ]; do
  case $1 in
    --expect) expect=$2; shift 2 ;;
    --update) update=1; shift ;;
    *) break ;;
  esac
done
if [ $update -eq 1 ] && [ -z "$expect" ]; then echo "sim_corpus.sh: --update needs --expect FILE"; exit 2; fi
declare -A listed=()
if [ -n "$expect" ] && [ -f "$expect" ]; then
  while read -r name _; do [ -n "$name" ] && [ "${name:0:1}" != "#" ] && listed[$name]=1; done <"$expect"
elif [ -n "$expect" ] && [ $update -eq 0 ]; then
  echo "sim_corpus.sh: no file $expect (make it with --update)"; exit 2
fi
declare -A ran=() refused_now=()
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for hlo in tests/hlo/*.hlo; do names+=("$(basename "$hlo" .hlo)"); done
fi
# simulate NAME: one module; its verdict line (PASS, WRONG, REFUSED or FAIL)
# goes to $out/NAME.result. The modules run as parallel jobs, JOBS at a
# time (default: the number of cores); the verdicts are read back in order.
simulate() {
  local name=$1 dir=tests/hlo/$1 res=$out/$1 args=() i reason tol golden msg
  rm -rf "$res"; mkdir -p "$res"
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  if ! AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 FAKE_CUDA_EXECUTE=1 timeout "${SIM_TIMEOUT:-120}" \
       "$BUILD/axle-run" --backend gpu "${args[@]}" --out "$res" "tests/hlo/$name.hlo" >"$res/log" 2>&1; then
    reason=$(grep -m1 'error' "$res/log" || echo "exited without a message (time limit or crash)")
    if grep -q "the GPU backend cannot compile" "$res/log"; then echo "REFUSED $name: ${reason#*error: }"
    else echo "FAIL $name: $reason"; fi
    return
  fi
  tol=(); [ -f "$dir/tolerance" ] && read -r -a tol <"$dir/tolerance"
  for golden in "$dir"/out*.npy; do
    [ -e "$golden" ] || continue
    if ! msg=$("$BUILD/tests/npycmp" "$golden" "$res/$(basename "$golden")" "${tol[@]}" 2>&1); then
      echo "WRONG $name: $(basename "$golden"): $(echo "$msg" | head -1)"; return
    fi
  done
  echo "PASS $name"
}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}; running=0
for name in "${names[@]}"; do
  if [ $running -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  simulate "$name" >"$out/$name.result" & running=$((running + 1))
done
wait
pass=0; wrong=0; refused=0; fail=0
for name in "${names[@]}"; do
  ran[$name]=1
  verdict=$(cat "$out/$name.result")
  case $verdict in
    REFUSED*)
      refused=$((refused + 1)); echo "$verdict"; refused_now[$name]=1
      if [ -n "$expect" ] && [ $update -eq 0 ] && [ -z "${listed[$name]:-}" ]; then
        fail=$((fail + 1)); echo "FAIL $name: refused, but not listed in $expect as expected to be (fix it, or run with --update)"
      fi ;;
    PASS*|WRONG*)
      if [ -n "$expect" ] && [ $update -eq 0 ] && [ -n "${listed[$name]:-}" ]; then
        fail=$((fail + 1)); echo "FAIL $name: listed in $expect as refused, but it compiles now (run with --update)"
      fi
      echo "$verdict"
      if [ "${verdict%% *}" = PASS ]; then pass=$((pass + 1)); else wrong=$((wrong + 1)); fi ;;
    *) fail=$((fail + 1)); echo "${verdict:-FAIL $name: its job left no verdict}" ;;
  esac
done
if [ $update -eq 1 ]; then
  {
    echo "# The corpus modules the GPU backend refuses (tests/gpu/sim_corpus.sh --expect;"
    echo "# rewritten by --update). One name a line."
    for name in "${!listed[@]}"; do [ -z "${ran[$name]:-}" ] && echo "$name"; done
    for name in "${!refused_now[@]}"; do echo "$name"; done
  } | { read -r a; read -r b; echo "$a"; echo "$b"; sort -u; } >"$expect.new" && mv "$expect.new" "$expect"
  echo "sim_corpus.sh: wrote $expect ($(grep -vc '^#' "$expect") modules)"
fi
echo "simulated GPU: $pass passed, $wrong wrong, $refused refused, $fail failed"
[ $((wrong + fail)) -eq 0 ]
