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
pass=0; wrong=0; refused=0; fail=0
for name in "${names[@]}"; do
  ran[$name]=1
  dir=tests/hlo/$name; res=$out/$name
  rm -rf "$res"; mkdir -p "$res"
  args=()
  for i in $(seq 0 63); do [ -f "$dir/in$i.npy" ] && args+=(--in "$dir/in$i.npy") || break; done
  if ! AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 FAKE_CUDA_EXECUTE=1 timeout "${SIM_TIMEOUT:-120}" \
       "$BUILD/axle-run" --backend gpu "${args[@]}" --out "$res" "tests/hlo/$name.hlo" >"$res/log" 2>&1; then
    reason=$(grep -m1 'error' "$res/log" || echo "exited without a message (time limit or crash)")
    if grep -q "the GPU backend cannot compile" "$res/log"; then
      refused=$((refused + 1)); echo "REFUSED $name: ${reason#*error: }"; refused_now[$name]=1
      if [ -n "$expect" ] && [ $update -eq 0 ] && [ -z "${listed[$name]:-}" ]; then
        fail=$((fail + 1)); echo "FAIL $name: refused, but not listed in $expect as expected to be (fix it, or run with --update)"
      fi
    else
      fail=$((fail + 1)); echo "FAIL $name: $reason"
    fi
    continue
  fi
  if [ -n "$expect" ] && [ $update -eq 0 ] && [ -n "${listed[$name]:-}" ]; then
    fail=$((fail + 1)); echo "FAIL $name: listed in $expect as refused, but it compiles now (run with --update)"
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
