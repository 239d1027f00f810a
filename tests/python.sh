#!/usr/bin/env bash
# The Python package (python/axle) as a user gets it (tests/run.sh runs this;
# BUILD names the build, OUT a scratch folder):
#
#   unit      tests/python/test_axle.py on build/libaxle.so (AXLE_LIBRARY)
#   install   make install PREFIX=<scratch>: the package lands in that
#             prefix's site-packages and, imported from there with no
#             AXLE_LIBRARY, finds the libaxle.so installed beside it;
#             make uninstall takes it away again
#   pip       pip install --no-build-isolation --no-index --target, offline,
#             from python/ (SKIP where pip or setuptools is absent)
#
# Needs a python3 with NumPy (Debian: python3-numpy): PYTHON if set, else
# the first of python3 and /usr/bin/python3 that imports numpy; without one,
# every check prints SKIP with the reason. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/test-out/python}
rm -rf "$OUT"; mkdir -p "$OUT"
passed=0; failed=0; skipped=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ $# -gt 1 ] && printf '  %s\n' "${@:2}"; }
skip() { skipped=$((skipped + 1)); echo "SKIP $1: $2"; }
finish() { echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"; [ "$failed" -eq 0 ]; exit; }

py=""
for candidate in ${PYTHON:-python3 /usr/bin/python3}; do
  if "$candidate" -c "import numpy" >/dev/null 2>&1; then py=$candidate; break; fi
done
if [ -z "$py" ]; then
  for check in unit install pip; do skip "python/$check" "no python3 with NumPy (apt install python3-numpy, or PYTHON=...)"; done
  finish
fi
lib=$BUILD/libaxle.so
# A library built with AddressSanitizer needs its runtime loaded first.
preload=""
if ldd "$lib" 2>/dev/null | grep -q libasan; then
  preload=$(${CC:-cc} -print-file-name=libasan.so)
  export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0   # CPython's own allocations are not ours
fi

# ---- unit: the package on the build's library ----
AXLE_LIBRARY=$lib PYTHONPATH=python LD_PRELOAD=$preload timeout 600 "$py" tests/python/test_axle.py >"$OUT/unit.log" 2>&1
rc=$?
cat "$OUT/unit.log" | grep -E '^(PASS|FAIL|  )'
passed=$((passed + $(grep -c '^PASS ' "$OUT/unit.log"))); failed=$((failed + $(grep -c '^FAIL ' "$OUT/unit.log")))
if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$OUT/unit.log"; then fail "python/unit" "exit $rc:" "$(tail -5 "$OUT/unit.log")"; fi

# ---- install: make install into a prefix, import from there ----
prefix=$(pwd)/$OUT/prefix
if make --no-print-directory -s install PREFIX="$prefix" PYTHON="$py" >"$OUT/install.log" 2>&1; then
  site=$("$py" python/site_dir.py "$prefix")
  got=$(cd / && env -u AXLE_LIBRARY PYTHONPATH="$site" LD_PRELOAD=$preload "$py" -c \
    'import axle, numpy as np; f = axle.compile("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n"); print(axle.library_path, f(np.array([1, -2], np.float32)))' 2>&1)
  if [ "$got" = "$prefix/lib/libaxle.so.0 [-1.  2.]" ]; then pass "python/install_finds_the_library_installed_beside_it"
  else fail "python/install_finds_the_library_installed_beside_it" "got: $got" "expected: $prefix/lib/libaxle.so.0 [-1.  2.]"; fi
  make --no-print-directory -s uninstall PREFIX="$prefix" PYTHON="$py" >>"$OUT/install.log" 2>&1
  if [ ! -e "$site/axle" ]; then pass "python/uninstall_removes_the_package"
  else fail "python/uninstall_removes_the_package" "left: $(ls "$site/axle")"; fi
else
  fail "python/install_finds_the_library_installed_beside_it" "make install failed:" "$(tail -5 "$OUT/install.log")"
fi

# ---- pip: offline, from the tree ----
if "$py" -m pip --version >/dev/null 2>&1 && "$py" -c "import setuptools" >/dev/null 2>&1; then
  if "$py" -m pip install --no-build-isolation --no-index --no-deps --quiet --target "$OUT/pip" ./python \
       >"$OUT/pip.log" 2>&1 &&
     here=$(pwd) && got=$(cd / && AXLE_LIBRARY=$here/$lib PYTHONPATH=$here/$OUT/pip LD_PRELOAD=$preload "$py" -c \
       'import axle; print(axle.__file__, axle.version())' 2>&1) &&
     [ "$got" = "$here/$OUT/pip/axle/__init__.py $(sed -n 's/^version = "\(.*\)"/\1/p' python/pyproject.toml)" ]; then
    pass "python/pip_install_offline_from_the_tree"
  else
    fail "python/pip_install_offline_from_the_tree" "$(grep -v WARNING "$OUT/pip.log" | tail -3)" "${got:-}"
  fi
  rm -rf python/build python/*.egg-info
else
  skip "python/pip_install_offline_from_the_tree" "$py has no pip or no setuptools (apt install python3-pip python3-setuptools)"
fi
finish
