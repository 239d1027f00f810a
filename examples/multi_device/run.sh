#!/usr/bin/env bash
# Runs the multi-device examples (make_examples.py says what they are) on 1,
# 2 and 4 devices in one process, on the CPU backend and the interpreter,
# and compares every device's results with the 1-device run and with
# NumPy's float64 reference. Prints a table and PASS/FAIL lines.
#
#   bash examples/multi_device/run.sh [BUILD]      (after make)
#
# BACKENDS and COUNTS choose others: BACKENDS=gpu COUNTS="1 2" runs them on
# two GPUs through NCCL (tests/gpu/run.sh on a machine with GPUs; tests/run.sh
# on simulated GPUs, with the fake driver and NCCL in the environment).
set -u
BUILD=${1:-${BUILD:-build}}
HERE=examples/multi_device
OUT=${OUT:-$BUILD/multi-device-examples}
BACKENDS=${BACKENDS:-cpu interp}
COUNTS=${COUNTS:-1 2 4}
rm -rf "$OUT"; for b in $BACKENDS; do mkdir -p "$OUT/$b"; done
passed=0; failed=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ $# -gt 1 ] && printf '  %s\n' "${@:2}"; }


for example in mlp_step tp_matmul; do
  for backend in $BACKENDS; do
    for n in $COUNTS; do
      name=${example}_${n}dev; res=$OUT/$backend/$name
      ins=(); for f in $(ls "$HERE/$name"/in*.npy | sort -V); do ins+=(--in "$f"); done
      if ! "$BUILD/axle-run" --backend $backend --devices $n "${ins[@]}" --out "$res" "$HERE/$name.hlo" >"$res.log" 2>&1; then
        fail "$backend/$name" "$(head -3 "$res.log")"; continue
      fi
      # each device against device 0 of the 1-device run (the sums differ in
      # order only: rtol 1e-5), and against NumPy's float64 step (rtol 1e-4)
      ok=1; one=$OUT/$backend/${example}_1dev/device0
      for ((d = 0; d < n; d++)); do
        for f in "$res/device$d"/out*.npy; do
          k=$(basename "$f" .npy)
          "$BUILD/tests/npycmp" "$one/$k.npy" "$f" 1e-5 1e-6 >/dev/null 2>&1 || { ok=0; fail "$backend/$name device $d $k differs from 1 device"; }
          "$BUILD/tests/npycmp" "$HERE/numpy/${example}_$k.npy" "$f" 1e-4 1e-5 >/dev/null 2>&1 || { ok=0; fail "$backend/$name device $d $k differs from NumPy"; }
        done
      done
      [ $ok -eq 1 ] && pass "$backend/$name: $n device(s) agree with 1 device and NumPy"
    done
  done
done
# The table: what each device count gives (device 0, then the largest
# difference from the 1-device run over every device and result).
/usr/bin/python3 - "$OUT" "$HERE" "$BACKENDS" "$COUNTS" <<'PY' 2>/dev/null || echo "(no table: /usr/bin/python3 with NumPy prints it)"
import glob, os, sys
import numpy as np
out, here = sys.argv[1], sys.argv[2]
backends, counts = sys.argv[3].split(), [int(n) for n in sys.argv[4].split()]
for example, what in (("mlp_step", "loss, new b2[0], max |diff| vs 1 device"), ("tp_matmul", "y[0,0] (a), y[7,7] (b), max |diff| vs 1 device")):
    print(f"{example}: {what}")
    for backend in backends:
        one = [np.load(f) for f in sorted(glob.glob(f"{out}/{backend}/{example}_1dev/device0/out*.npy"))]
        for n in counts:
            worst = 0.0
            for d in range(n):
                got = [np.load(f) for f in sorted(glob.glob(f"{out}/{backend}/{example}_{n}dev/device{d}/out*.npy"))]
                worst = max([worst] + [float(np.max(np.abs(g - o))) for g, o in zip(got, one)])
            r = [np.load(f) for f in sorted(glob.glob(f"{out}/{backend}/{example}_{n}dev/device0/out*.npy"))]
            shown = (r[4], r[3][0]) if example == "mlp_step" else (r[0][0, 0], r[1][7, 7])
            print(f"  {backend:6s} {n} device(s): " + "  ".join(f"{v:.9g}" for v in shown) + f"  max|diff|={worst:.3g}")
PY
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
