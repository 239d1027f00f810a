#!/usr/bin/env bash
# The library as it ships (tests/run.sh runs this; BUILD names the build).
#
#   version   the tools' --version and axle_version() say the header's version
#   install   make install into a staging DESTDIR (PREFIX=/usr), the tree it
#             makes, a program built with pkg-config against the installed
#             shared and static libraries (tests/library/use_axle.c), and
#             make uninstall leaving none of axle's files
#   symbols   the installed libraries define no global symbol but axle_*
#             (nm -g --defined-only), and every function axle.h declares
#   no_exit   every allocation goes through src/ir/memory.c (out of memory
#             unwinds), and nothing but its fallback for the tools exits
#   clang     every file using CMPLX takes it from complex_compat.h
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
for tool in axle-run axle-opt axle-aot fetch-cuobjdump; do
  if [ -f "tools/$tool.sh" ]; then got=$(bash "tools/$tool.sh" --version 2>&1); rc=$?
  else got=$("$BUILD/$tool" --version 2>&1); rc=$?; fi
  if [ $rc -eq 0 ] && [ "$got" = "$tool $version" ]; then pass "version/$tool"
  else fail "version/$tool" "exit $rc: '$got', expected '$tool $version'"; fi
done

# ---- install: make install, then a program built with pkg-config ----
# The build's own flags (BUILD, SAN, ...) come to this make through
# MAKEFLAGS when make test runs us; with nothing to rebuild it only copies.
stage=$OUT/stage
if make -s install BUILD="$BUILD" DESTDIR="$stage" PREFIX=/usr >"$OUT/install.log" 2>&1; then
  pass "install/make_install"
else fail "install/make_install" "$(tail -5 "$OUT/install.log")"; fi
lib=$stage/usr/lib
so_version=libaxle.so.$version so_name=libaxle.so.${version%%.*}
missing=()
for f in usr/bin/axle-run usr/bin/axle-opt usr/bin/axle-aot usr/include/axle.h usr/lib/libaxle.a "usr/lib/$so_version" \
         usr/lib/pkgconfig/axle.pc usr/share/doc/axle/README.md usr/share/doc/axle/LICENSE \
         usr/share/doc/axle/CHANGELOG.md usr/share/doc/axle/docs/README.md; do
  [ -f "$stage/$f" ] || missing+=("$f")
done
[ ${#missing[@]} -eq 0 ] && pass "install/tree" || fail "install/tree" "missing: ${missing[*]}"
if [ "$(readlink "$lib/$so_name")" = "$so_version" ] && [ "$(readlink "$lib/libaxle.so")" = "$so_name" ] &&
   readelf -d "$lib/$so_version" | grep -q "Library soname: \[$so_name\]"; then
  pass "install/soname_and_symlinks"
else fail "install/soname_and_symlinks" "$(ls -l "$lib" | grep libaxle)"; fi

# pkg-config reads the staged axle.pc; the sysroot makes its /usr paths the
# stage's (and keeps them although /usr/include and /usr/lib are system paths).
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
libs=$(pkg-config --libs axle 2>&1)
if [ "$(pkg-config --modversion axle 2>&1)" = "$version" ] && [[ " $libs " == *" -laxle -lm -lpthread -ldl "* ]]; then
  pass "install/pkg_config"
else fail "install/pkg_config" "modversion $(pkg-config --modversion axle 2>&1), libs: $libs"; fi
# A sanitized build's library needs the sanitizers' runtimes in the program too.
san=()
nm -D "$lib/$so_version" 2>/dev/null | grep -q ' U __asan_init' && san=(-fsanitize=address,undefined)
use=tests/library/use_axle.c
# Shared: the program names the soname and runs from the stage's lib.
cc=${CC:-cc}
if $cc -std=c11 -Wall -Wextra -Werror "${san[@]}" $use $(pkg-config --cflags --libs axle) -o "$OUT/use_shared" >"$OUT/shared.log" 2>&1 &&
   readelf -d "$OUT/use_shared" | grep -q "Shared library: \[$so_name\]" &&
   LD_LIBRARY_PATH=$lib "$OUT/use_shared" >>"$OUT/shared.log" 2>&1 && grep -q "^ok $version" "$OUT/shared.log"; then
  pass "install/program_on_the_shared_library"
else fail "install/program_on_the_shared_library" "$(tail -5 "$OUT/shared.log")"; fi
# Static: pkg-config --static and -static, so libaxle.a is linked (glibc
# warns that dlopen, for the CUDA driver, needs its shared libraries then).
if [ ${#san[@]} -gt 0 ]; then
  echo "SKIP install/program_on_the_static_library (a sanitized build cannot link -static)"
elif $cc -std=c11 -Wall -Wextra -Werror -static $use $(pkg-config --static --cflags --libs axle) -o "$OUT/use_static" >"$OUT/static.log" 2>&1 &&
   ! readelf -d "$OUT/use_static" 2>/dev/null | grep -q "Shared library" &&
   "$OUT/use_static" >>"$OUT/static.log" 2>&1 && grep -q "^ok $version" "$OUT/static.log"; then
  pass "install/program_on_the_static_library"
else fail "install/program_on_the_static_library" "$(tail -5 "$OUT/static.log")"; fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ---- symbols: only the public API is global in what is installed ----
# A program linking axle must not meet its internal names (parse_module,
# next, ...): the shared library exports only AXLE_API functions, and the
# static one is a single object with every other symbol made local.
api=$(sed -n 's/^AXLE_API [^(]*\b\(axle_[a-z0-9_]*\)(.*/\1/p' include/axle.h | sort -u)
declared=$(grep -v '^typedef' include/axle.h | sed -n 's/^\(AXLE_API \)\{0,1\}[a-z][^(]*\b\(axle_[a-z0-9_]*\)(.*/\2/p' | sort -u)
[ "$api" = "$declared" ] && [ -n "$api" ] && pass "symbols/header_marks_every_function_AXLE_API" ||
  fail "symbols/header_marks_every_function_AXLE_API" "unmarked: $(comm -13 <(echo "$api") <(echo "$declared") | tr '\n' ' ')"
for f in libaxle.a "$so_version"; do
  if [ ! -f "$lib/$f" ]; then fail "symbols/$f" "not installed"; continue; fi
  globals=$(nm -g --defined-only "$lib/$f" 2>&1 | awk 'NF == 3 {print $3}' | sort -u)
  others=$(echo "$globals" | grep -v '^axle_')
  echo "symbols: $f defines $(echo "$globals" | grep -c '^axle_') global axle_* symbols, $(echo -n "$others" | grep -c .) others"
  if [ -z "$others" ]; then pass "symbols/$f/only_axle_globals"
  else fail "symbols/$f/only_axle_globals" "$(echo "$others" | wc -l) global symbols not starting with axle_:" "$(echo "$others" | head -20 | tr '\n' ' ')"; fi
  missing=$(comm -23 <(echo "$api") <(echo "$globals"))
  if [ -z "$missing" ]; then pass "symbols/$f/exports_the_whole_api"
  else fail "symbols/$f/exports_the_whole_api" "axle.h declares, $f does not define: $(echo "$missing" | tr '\n' ' ')"; fi
done

# ---- no process exits: out of memory unwinds (docs/design.md) ----
# Every allocation goes through src/ir/memory.c, which only exits where no
# public call is running (a tool). Raw malloc is allowed where a memory
# scope cannot hold the block: the allocator itself, the thread pool (kept
# as one object), the report written after an unwind, and files read while
# a FILE is open (the block is adopted once it is closed).
raw_allowed='^src/(ir/memory\.c|runtime/thread_pool\.c|runtime/api\.c|ir/text/parse\.c|runtime/npy\.c|runtime/npz\.c):'
raw=$(grep -rnP '(?<![\w>.])(malloc|calloc|realloc|free|strdup|strndup|aligned_alloc|posix_memalign)\(' src \
        --include=*.c --include=*.h | grep -vE "$raw_allowed")
if [ -z "$raw" ]; then pass "no_exit/every_allocation_through_memory_c"
else fail "no_exit/every_allocation_through_memory_c" "raw allocation outside src/ir/memory.c:" "$(echo "$raw" | head -10)"; fi
exits=$(grep -rnP '(?<![\w>.])(exit|_exit|abort|quick_exit)\(' src --include=*.c --include=*.h | grep -v '^src/ir/memory\.c:')
if [ -z "$exits" ]; then pass "no_exit/only_the_tools_fallback_exits"
else fail "no_exit/only_the_tools_fallback_exits" "$(echo "$exits" | head -10)"; fi

# ---- builds with clang as with GCC (make CC=clang) ----
# glibc's <complex.h> defines CMPLX only for GCC; complex_compat.h gives it
# to clang too, so every file that uses CMPLX must take it from there.
cmplx=$(grep -rlE '\bCMPLXF?\(' src tests bench tools --include=*.c --include=*.h |
        grep -v 'complex_compat\.h$' | xargs -r grep -L 'complex_compat\.h' | grep -v '^tests/fuzz/')
if [ -z "$cmplx" ]; then pass "clang/every_CMPLX_user_includes_complex_compat"
else fail "clang/every_CMPLX_user_includes_complex_compat" "$(echo "$cmplx" | tr '\n' ' ')"; fi

# Uninstall leaves no file behind (directories the system has anyway may stay).
if make -s uninstall BUILD="$BUILD" DESTDIR="$stage" PREFIX=/usr >"$OUT/uninstall.log" 2>&1 &&
   [ -z "$(find "$stage" -not -type d)" ]; then
  pass "install/uninstall_removes_every_file"
else fail "install/uninstall_removes_every_file" "left: $(find "$stage" -not -type d | head -5)"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
