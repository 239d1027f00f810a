#!/usr/bin/env bash
# The library as it ships (tests/run.sh runs this; BUILD names the build).
#
#   version   the tools' --version and axle_version() say the header's version
#
# Prints PASS/FAIL lines and ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/test-out/library}
rm -rf "$OUT"; mkdir -p "$OUT"
passed=0; failed=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ $# -gt 1 ] && printf '  %s\n' "${@:2}"; }

# The version the header declares, "MAJOR.MINOR.PATCH".
version=$(sed -n 's/^#define AXLE_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' include/axle.h | paste -sd.)
case $version in
  [0-9]*.[0-9]*.[0-9]*) pass "version/header_declares_three_numbers" ;;
  *) fail "version/header_declares_three_numbers" "got '$version'" ;;
esac

# ---- version: every tool says it ----
for tool in axle-run axle-opt fetch-cuobjdump; do
  if [ -f "tools/$tool.sh" ]; then got=$(bash "tools/$tool.sh" --version 2>&1); rc=$?
  else got=$("$BUILD/$tool" --version 2>&1); rc=$?; fi
  if [ $rc -eq 0 ] && [ "$got" = "$tool $version" ]; then pass "version/$tool"
  else fail "version/$tool" "exit $rc: '$got', expected '$tool $version'"; fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
