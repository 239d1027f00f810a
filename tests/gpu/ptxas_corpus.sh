#!/usr/bin/env bash
# Every kernel the GPU backend makes of the corpus, through ptxas for both
# targets, and (where cuobjdump is found) the SASS checks. No GPU needed.
#
#   bash tests/gpu/ptxas_corpus.sh [NAME ...]      (default: every module)
#
# Each tests/hlo/NAME.hlo is compiled by `axle-run --backend gpu
# --compile-only` on the fake driver (build/tests/fake/libcuda.so.1) with
# FAKE_CUDA_CAPABILITY=8.0 and then 9.0, so the backend writes PTX for
# sm_80 and for sm_90a; FAKE_CUDA_SAVE_PTX keeps each loaded module. Each
# module's PTX must say `.target` for that arch and be assembled by ptxas
# -arch=sm_80 / sm_90a into a cubin.
#
#   PASS ptxas-corpus/ARCH/NAME      every module it loaded assembled
#   FAIL ptxas-corpus/ARCH/NAME      ptxas rejected it, or axle-run failed
#                                    other than by refusing
#   REFUSED ARCH/NAME: reason        the backend's located refusal (not a
#                                    failure: sim_corpus.sh's expected list
#                                    keeps those honest)
#
# SASS checks, on the cubins, by cuobjdump -sass (PATH, /usr/local/cuda/bin
# or build/tools/cuda/bin from `make fetch-cuobjdump`; without it one SKIP
# line says so):
#   sass-gemm/ARCH/NAME     every kernel whose name has "gemm" and whose
#                           operands are f16/bf16 (its "// gemm..." header)
#                           or whose PTX has mma holds tensor-core
#                           instructions: HGMMA where its PTX has wgmma
#                           (sm_90a's path), HMMA where it has mma.sync.
#                           GEMMs of f32 (no tf32), f64 or integers have no
#                           tensor-core form here: counted in a note.
#   sass-vector/ARCH/NAME   every elementwise kernel ("(loop)" in its PTX
#                           header) whose PTX loads 128 bits at a time
#                           (ld.global.v4) keeps them as LDG.E.128; the
#                           count of elementwise kernels left scalar is
#                           printed as a note.
#   sass-check-probe        the check itself on tests/gpu/sass_probe.ptx:
#                           a wgmma kernel passes (HGMMA), a scalar kernel
#                           named gemm is caught.
# Ends with a count line. Exit 0 when nothing failed; without ptxas, one
# SKIP line and exit 0.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
out=${OUT:-$BUILD/ptxas-corpus}
export BUILD OUT=$out
find_tool() {  # NAME: the first executable on PATH, in /usr/local/cuda/bin or build/tools/cuda/bin
  local d
  for d in $(echo "${PATH:-}" | tr ':' ' ') /usr/local/cuda/bin build/tools/cuda/bin; do
    [ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  return 1
}
ptxas=$(find_tool ptxas) || { echo "SKIP ptxas-corpus: no ptxas on PATH or in /usr/local/cuda/bin"; exit 0; }
cuobjdump=$(find_tool cuobjdump) || cuobjdump=
names=("$@")
if [ "${1:-}" != --one ] &&  [ ${#names[@]} -eq 0 ]; then
  for hlo in tests/hlo/*.hlo; do names+=("$(basename "$hlo" .hlo)"); done
fi
[ "${1:-}" = --one ] || { rm -rf "$out"; mkdir -p "$out"; }

# kernels PTX: one line per entry, "NAME STRATEGY V4 TENSOR WGMMA" (V4: 1
# when its body has ld.global.v4; TENSOR: 1 when it is a GEMM that can use
# tensor cores: f16/bf16 operands in its "// gemm..." header, or mma in its
# body; WGMMA: 1 when its body has wgmma.mma_async).
kernel_table() {
  awk 'function flush() { if (name) print name, (kind == "" ? "-" : kind), v4, tensor, wgmma }
       /^\/\/ kernel / { s = $0; sub(/^[^(]*\(/, "", s); sub(/\).*/, "", s); strategy = s }
       /^\/\/ gemm/ { gemm16 = ($0 ~ /: b?f16 x b?f16 ->/) }
       /^\.visible \.entry / { flush(); name = $3; sub(/\(.*/, "", name); v4 = 0; kind = strategy; strategy = ""
                               tensor = gemm16 + 0; gemm16 = 0; wgmma = 0 }
       /ld\.global(\.[a-z]+)*\.v4/ { v4 = 1 }
       /^[ \t]*(wgmma\.mma_async|mma\.sync)/ { tensor = 1 }
       /^[ \t]*wgmma\.mma_async/ { wgmma = 1 }
       END { flush() }' "$1"
}

# sass_function SASS NAME: the disassembly of one function.
sass_function() {
  awk -v want="$2" '/Function : / { on = ($NF == want) } on' "$1"
}

# sass_checks ARCH NAME DIR: the gemm and 128-bit load checks on DIR's cubins.
sass_checks() {
  local arch=$1 name=$2 dir=$3 ptx sass kname strategy v4 gemm_bad="" gemm_n=0 vec_bad="" vec_n=0
  local scalar=0 simt_gemm=0 tensor
  for ptx in "$dir"/*.ptx; do
    sass=${ptx%.ptx}.sass
    # cuobjdump takes seconds (nvdisasm is large): only where there is something to check
    kernel_table "$ptx" >"${ptx%.ptx}.kernels"
    if awk '($1 ~ /gemm/ && $4 == 1) || ($2 == "loop" && $3 == 1) { found = 1 } END { exit !found }' "${ptx%.ptx}.kernels" &&
       ! "$cuobjdump" -sass "${ptx%.ptx}.cubin" >"$sass" 2>&1; then
      echo "FAIL sass/$arch/$name: cuobjdump: $(head -1 "$sass")"; return
    fi
    while read -r kname strategy v4 tensor_form wgmma; do
      tensor='(^|[^A-Z])HMMA\.'
      [ "$wgmma" = 1 ] && tensor='(^|[^A-Z])HGMMA\.'
      if [[ $kname == *gemm* && $tensor_form != 1 ]]; then
        simt_gemm=$((simt_gemm + 1))  # f32, f64 or integer operands: no tensor-core form to ask for
      elif [[ $kname == *gemm* ]]; then
        gemm_n=$((gemm_n + 1))
        sass_function "$sass" "$kname" | grep -Eq "$tensor" || gemm_bad+=" $kname"
      elif [ "$strategy" = loop ]; then
        if [ "$v4" = 1 ]; then
          vec_n=$((vec_n + 1))
          sass_function "$sass" "$kname" | grep -q 'LDG\.E\.128' || vec_bad+=" $kname"
        else
          scalar=$((scalar + 1))
        fi
      fi
    done <"${ptx%.ptx}.kernels"
  done
  echo "SCALAR_LOOPS $scalar"
  echo "SIMT_GEMMS $simt_gemm"
  if [ $gemm_n -gt 0 ]; then
    if [ -z "$gemm_bad" ]; then echo "PASS sass-gemm/$arch/$name ($gemm_n gemm kernels with tensor-core instructions)"
    else echo "FAIL sass-gemm/$arch/$name: no tensor-core instruction in:$gemm_bad"; fi
  fi
  if [ $vec_n -gt 0 ]; then
    if [ -z "$vec_bad" ]; then echo "PASS sass-vector/$arch/$name ($vec_n elementwise kernels with LDG.E.128)"
    else echo "FAIL sass-vector/$arch/$name: ld.global.v4 in the PTX but no LDG.E.128 in:$vec_bad"; fi
  fi
}

# one CAPABILITY ARCH NAME: one module for one target; its lines go to
# $out/ARCH/NAME/result (run in parallel by xargs below).
one() {
  local capability=$1 arch=$2 name=$3 dir=$out/$2/$3 bad="" ptx
  mkdir -p "$dir"
  if ! AXLE_CUDA_DRIVER=$BUILD/tests/fake/libcuda.so.1 FAKE_CUDA_CAPABILITY=$capability FAKE_CUDA_SAVE_PTX=$dir \
       timeout 60 "$BUILD/axle-run" --backend gpu --compile-only "tests/hlo/$name.hlo" >"$dir/log" 2>&1; then
    if grep -q "the GPU backend cannot compile" "$dir/log"; then
      echo "REFUSED $arch/$name: $(grep -m1 'error' "$dir/log" | sed 's/^.*error: //' | cut -c1-150)"
    else
      echo "FAIL ptxas-corpus/$arch/$name: axle-run: $(grep -m1 'error' "$dir/log" || echo 'no message (time limit or crash)')"
    fi
    return
  fi
  for ptx in "$dir"/*.ptx; do
    [ -e "$ptx" ] || continue
    echo "KERNELS $(grep -c '^\.visible \.entry ' "$ptx")"
    if ! grep -q "^\.target $arch\$" "$ptx"; then bad="$(basename "$ptx") is not for $arch: $(grep -m1 '^\.target' "$ptx")"; break; fi
    if ! "$ptxas" -arch="$arch" -o "${ptx%.ptx}.cubin" "$ptx" >"${ptx%.ptx}.ptxas.log" 2>&1; then
      bad="ptxas -arch=$arch $(basename "$ptx"): $(grep -m2 -E 'error|fatal' "${ptx%.ptx}.ptxas.log" | paste -sd ' ')"; break
    fi
  done
  if [ -n "$bad" ]; then echo "FAIL ptxas-corpus/$arch/$name: $bad"; return; fi
  echo "PASS ptxas-corpus/$arch/$name"
  if [ -n "$cuobjdump" ] && ls "$dir"/*.cubin >/dev/null 2>&1; then sass_checks "$arch" "$name" "$dir"; fi
}

if [ "${1:-}" = --one ]; then
  shift; out=${OUT:-$BUILD/ptxas-corpus}
  for target in "$@"; do IFS=: read -r capability arch name <<<"$target"; one "$capability" "$arch" "$name" >"$out/$arch/$name.result"; done
  exit 0
fi
mkdir -p "$out/sm_80" "$out/sm_90a"
# The SASS check's own test, so that it is known to be able to pass and to
# fail: tests/gpu/sass_probe.ptx has a wgmma kernel (HGMMA expected) and a
# scalar kernel named gemm (to be caught).
if [ -n "$cuobjdump" ]; then
  probe=$out/probe; mkdir -p "$probe"; cp tests/gpu/sass_probe.ptx "$probe/0.ptx"
  got=$("$ptxas" -arch=sm_90a -o "$probe/0.cubin" "$probe/0.ptx" 2>&1 && sass_checks sm_90a probe "$probe" | grep -Ev '^(SCALAR_LOOPS|SIMT_GEMMS) ')
  if [ "$got" = "FAIL sass-gemm/sm_90a/probe: no tensor-core instruction in: k1_gemm_scalar_probe" ]; then
    echo "PASS sass-check-probe (HGMMA found in a wgmma kernel; a scalar kernel named gemm caught)"
  else
    echo "FAIL sass-check-probe: expected only k1_gemm_scalar_probe to be caught, got: $got"
  fi >"$out/probe.result"
fi
for target in 8.0:sm_80 9.0:sm_90a; do
  for name in "${names[@]}"; do echo "$target:$name"; done
done | xargs -P "${JOBS:-$(nproc 2>/dev/null || echo 2)}" -n 8 bash "$0" --one
for arch in sm_80 sm_90a; do
  for name in "${names[@]}"; do grep -Ev '^(KERNELS|SCALAR_LOOPS|SIMT_GEMMS) ' "$out/$arch/$name.result"; done
done
[ -f "$out/probe.result" ] && cat "$out/probe.result"
results=$(cat "$out"/sm_*/*.result "$out"/probe.result 2>/dev/null)
count() { grep -c "$1" <<<"$results"; }
pass=$(count '^PASS ptxas-corpus/'); fail=$(count '^FAIL ptxas-corpus/'); refused=$(count '^REFUSED ')
sass_pass=$(count '^PASS sass'); sass_fail=$(count '^FAIL sass')
kernels=$(awk '$1 == "KERNELS" { n += $2 } END { print n + 0 }' <<<"$results")
scalar_loops=$(awk '$1 == "SCALAR_LOOPS" { n += $2 } END { print n + 0 }' <<<"$results")
simt_gemms=$(awk '$1 == "SIMT_GEMMS" { n += $2 } END { print n + 0 }' <<<"$results")
[ -z "$cuobjdump" ] && echo "SKIP sass-corpus: no cuobjdump on PATH, in /usr/local/cuda/bin or build/tools/cuda/bin (make fetch-cuobjdump)"
echo "ptxas corpus: $pass passed, $fail failed, $refused refused (both targets), $kernels kernels assembled;" \
     "SASS: $sass_pass passed, $sass_fail failed, $scalar_loops elementwise kernels without 128-bit loads," \
     "$simt_gemms f32/f64/integer GEMM kernels (no tensor-core form)"
[ $((fail + sass_fail)) -eq 0 ]
