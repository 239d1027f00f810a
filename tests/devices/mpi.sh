#!/usr/bin/env bash
# The collectives across processes: every module of tests/devices/ for 2 or
# more devices, run by mpirun with one device per rank (axle-run --devices
# mpi, Open MPI's libmpi opened at run time) on the CPU backend, each rank's
# outputs compared exactly with NumPy's goldens; the examples on 2 ranks
# against their 1-device run; and the errors that must end every rank.
# Skips, with the reason, where Open MPI is not installed (make test-deps).
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/test-out/mpi}
run=$BUILD/axle-run
passed=0; failed=0; skipped=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ $# -gt 1 ] && printf '  %s\n' "${@:2}"; }
if ! command -v mpirun >/dev/null || ! ldconfig -p 2>/dev/null | grep -q 'libmpi\.so\.40 '; then
  echo "SKIP mpi: no Open MPI (mpirun and libmpi.so.40; make test-deps installs openmpi-bin and libopenmpi-dev)"
  echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
rm -rf "$OUT"; mkdir -p "$OUT"
# root may run mpirun here (CI and the developers' machines run as root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Under make check, LeakSanitizer would report Open MPI's own allocations,
# which its components (unloaded by then, so unnamed in the report) keep
# past MPI_Finalize: leak checking is off for the ranks alone. axle's code
# on this path but mpi.c is the in-process path, leak-checked in run.sh.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
mpi() {  # RANKS ARGS...: axle-run on RANKS ranks
  local ranks=$1; shift
  timeout 120 mpirun -np "$ranks" "$run" --devices mpi --threads 1 "$@"
}

declare -A per_op
for hlo in tests/devices/*.hlo; do
  name=$(basename "$hlo" .hlo); dir=tests/devices/$name
  devices=$(cat "$dir/devices")
  [ "$devices" -ge 2 ] || continue
  ins=(); for f in $(ls "$dir"/in*.npy | sort -V); do ins+=(--in "$f"); done
  res=$OUT/$name
  if ! mpi "$devices" "${ins[@]}" --out "$res" "$hlo" >"$res.log" 2>&1; then
    fail "mpi/$name" "mpirun failed:" "$(grep error "$res.log" | head -3)"; continue
  fi
  ok=1
  for ((d = 0; d < devices; d++)); do
    for golden in "$dir/device$d"/out*.npy; do
      if ! msg=$("$BUILD/tests/npycmp" "$golden" "$res/device$d/$(basename "$golden")" 0 0 2>&1); then
        ok=0; fail "mpi/$name" "rank $d $(basename "$golden"): $msg"; break 2
      fi
    done
  done
  [ $ok -eq 1 ] || continue
  pass "mpi/$name ($devices ranks)"
  op=${name%_*dev}; op=${op%_2x2}; per_op[$op]=$(( ${per_op[$op]:-0} + 1 ))
done
echo "collective tests that matched NumPy on MPI ranks (cpu):"
for op in $(echo "${!per_op[@]}" | tr ' ' '\n' | sort); do echo "  $op: ${per_op[$op]}"; done

# The examples on 2 ranks, against the 1-device run in one process.
ex=examples/multi_device
for example in mlp_step tp_matmul; do
  one=$OUT/${example}_1dev; two=$OUT/${example}_2ranks
  ins=(); for f in $(ls "$ex/${example}_2dev"/in*.npy | sort -V); do ins+=(--in "$f"); done
  "$run" --devices 1 $(for f in $(ls "$ex/${example}_1dev"/in*.npy | sort -V); do echo --in "$f"; done) --out "$one" "$ex/${example}_1dev.hlo" >/dev/null 2>&1
  if ! mpi 2 "${ins[@]}" --out "$two" "$ex/${example}_2dev.hlo" >"$two.log" 2>&1; then
    fail "mpi/example_$example" "$(grep error "$two.log" | head -3)"; continue
  fi
  ok=1
  for d in 0 1; do
    for f in "$two/device$d"/out*.npy; do
      "$BUILD/tests/npycmp" "$one/device0/$(basename "$f")" "$f" 1e-5 1e-6 >/dev/null 2>&1 || ok=0
    done
  done
  "$run" --devices 2 "${ins[@]}" --out "$OUT/${example}_2threads" "$ex/${example}_2dev.hlo" >/dev/null 2>&1
  for d in 0 1; do
    for f in "$two/device$d"/out*.npy; do cmp -s "$f" "$OUT/${example}_2threads/device$d/$(basename "$f")" || ok=0; done
  done
  [ $ok -eq 1 ] && pass "mpi/example_${example}: 2 ranks agree with 1 device and give the bits of 2 threads" ||
    fail "mpi/example_$example" "differs from the 1-device run or from 2 devices in one process"
done

# A rank that fails, or ends while another waits, ends every rank with an error.
expect() {  # NAME RANKS WANT_TEXT ARGS...
  local name=$1 ranks=$2 want=$3; shift 3
  local got; got=$(mpi "$ranks" "$@" 2>&1); local rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then fail "mpi/$name" "exit $rc" "$(echo "$got" | grep error | head -3)"
  elif ! echo "$got" | grep -qF -- "$want"; then fail "mpi/$name" "output lacks '$want'" "$(echo "$got" | grep error | head -3)"
  else pass "mpi/$name"; fi
}
d=tests/devices/all_reduce_list_2dev
expect failing_rank_ends_all 2 "error: rank 0: rank 1 failed" --in $d/in0.npy --in tests/devices/all_gather_list_2dev/in0.npy $d.hlo
cat >"$OUT/diverge.hlo" <<'HLO'
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
expect diverging_ranks_end_with_an_error 2 "a rank ended its run while another waits" --seed 1 "$OUT/diverge.hlo"
expect rank_count_must_match 2 "runs on replica_count=4 x num_partitions=1 = 4 devices, not 2" --seed 1 tests/devices/all_reduce_list_4dev.hlo
got=$(AXLE_MPI_LIBRARY=/nonexistent/libmpi.so "$run" --devices mpi --seed 1 $d.hlo 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$got" | grep -qF "error: no MPI library" && pass "mpi/no_library_is_a_clear_error" ||
  fail "mpi/no_library_is_a_clear_error" "exit $rc: $got"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
