#!/usr/bin/env bash
# The file graph of src/ has no cycles but the ones tests/cycles.allow names
# (tests/run.sh runs this; BUILD names the build).
#
# File A depends on file B when A's object uses a symbol B's object defines
# (nm: A's undefined symbols against every object's defined ones). A cycle is
# a strongly connected component of that graph with more than one file: no
# file of it can be read, or moved, without the others. Helpers belong below
# their dispatchers, so that each folder has a bottom file a reader can start
# from (docs/README.md); a dispatcher and its family files may recurse through
# each other only where the thing they walk is itself recursive (the parser,
# the lowering walk, the evaluator), and the allow-list says so.
#
#   bash tests/cycles.sh           one line per cycle, allowed ones with the
#                                  reason; FAIL for any other, and for an
#                                  allow-list entry that no cycle needs
#   bash tests/cycles.sh -v        also each cycle's edges and the symbols
#                                  that make them ("a.c -> b.c: sym ...")
#
# tests/cycles.allow, one entry a line: "reason | file file ..." (a file may
# be a pattern: * stands for any run of characters but /). A cycle is
# allowed when all its files are in one entry.
#
# Prints PASS/FAIL lines and ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
verbose=0; [ "${1:-}" = -v ] && verbose=1
objects=$(find "$BUILD/src" -name '*.o' 2>/dev/null | sort)
if [ -z "$objects" ]; then
  echo "FAIL cycles/objects: no objects under $BUILD/src (build the library first)"
  echo "0 passed, 1 failed"; exit 1
fi
# nm -A -P: "OBJECT: SYMBOL TYPE [VALUE SIZE]"; U is used, anything else but
# local (lowercase) or weak-undefined is defined there.
# shellcheck disable=SC2086
nm -A -P $objects | awk -v build="$BUILD/" -v verbose=$verbose -v allow=tests/cycles.allow '
function source_of(object) {  # build/src/ir/hlo.o: -> src/ir/hlo.c
  sub(/:$/, "", object); sub("^" build, "", object); sub(/\.o$/, ".c", object)
  return object
}
{
  file = source_of($1); symbol = $2; type = $3
  files[file] = 1
  if (type == "U") { uses[file, symbol] = 1; used_by[symbol] = used_by[symbol] " " file }
  else if (type ~ /^[A-TV-Z]$/) defined_in[symbol] = file
}
# Tarjan: the strongly connected components, found depth first.
function visit(v,    i, w) {
  index_of[v] = next_index; low[v] = next_index; next_index++
  stack[++top] = v; on_stack[v] = 1
  for (i = 1; i <= degree[v]; i++) {
    w = successor[v, i]
    if (!(w in index_of)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
    else if (on_stack[w] && index_of[w] < low[v]) low[v] = index_of[w]
  }
  if (low[v] == index_of[v]) {
    components++; size[components] = 0
    do { w = stack[top--]; on_stack[w] = 0; size[components]++; member[components, size[components]] = w } while (w != v)
  }
}
# A file pattern ("src/ir/eval/*.c": * is any run of characters but /) as
# an anchored regular expression.
function glob_regex(glob,    re) {
  re = glob; gsub(/[.+?()|^$\[\]{}]/, "\\\\&", re); gsub(/\*/, "[^/]*", re)
  return "^" re "$"
}
function entry_allows(e, file,    k, i, re) {
  k = split(patterns[e], re, " ")
  for (i = 1; i <= k; i++) if (file ~ re[i]) return 1
  return 0
}
function sorted_members(c,    i, j, t, n, list) {
  n = size[c]
  for (i = 1; i <= n; i++) list[i] = member[c, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
  t = list[1]; for (i = 2; i <= n; i++) t = t " " list[i]
  return t
}
END {
  for (key in uses) {
    split(key, part, SUBSEP)
    if (!(part[2] in defined_in)) continue
    to = defined_in[part[2]]
    if (to == part[1]) continue
    if (!((part[1], to) in edge)) { edge[part[1], to] = part[2]; successor[part[1], ++degree[part[1]]] = to }
    else edge[part[1], to] = edge[part[1], to] " " part[2]
  }
  n = 0; for (f in files) names[++n] = f
  for (i = 2; i <= n; i++) for (j = i; j > 1 && names[j - 1] > names[j]; j--) { t = names[j]; names[j] = names[j - 1]; names[j - 1] = t }
  for (i = 1; i <= n; i++) if (!(names[i] in index_of)) visit(names[i])

  entries = 0
  while ((getline line < allow) > 0) {
    if (line ~ /^[ \t]*(#|$)/) continue
    bar = index(line, " | ")
    if (bar == 0) { printf "FAIL cycles/allow-list: line without \" | \": %s\n", line; failed++; continue }
    entries++; reason[entries] = substr(line, 1, bar - 1)
    k = split(substr(line, bar + 3), listed, /[ \t]+/)
    for (i = 1; i <= k; i++) if (listed[i] != "") {
      patterns[entries] = patterns[entries] " " glob_regex(listed[i])
      matched = 0; for (f in files) if (f ~ glob_regex(listed[i])) matched = 1
      if (!matched) { printf "FAIL cycles/allow-list: entry %d names %s, which matches no object\n", entries, listed[i]; failed++ }
    }
  }
  for (c = 1; c <= components; c++) {
    if (size[c] < 2) continue
    text = sorted_members(c)
    found = 0
    for (e = 1; e <= entries && !found; e++) {
      found = e
      for (i = 1; i <= size[c]; i++) if (!entry_allows(e, member[c, i])) { found = 0; break }
    }
    if (found) { used[found] = 1; passed++; printf "PASS cycle of %d files (allowed: %s): %s\n", size[c], reason[found], text }
    else { failed++; printf "FAIL cycle of %d files (not in tests/cycles.allow): %s\n", size[c], text }
    if (verbose) for (i = 1; i <= size[c]; i++) for (j = 1; j <= size[c]; j++)
      if ((member[c, i], member[c, j]) in edge) printf "    %s -> %s: %s\n", member[c, i], member[c, j], edge[member[c, i], member[c, j]]
  }
  for (e = 1; e <= entries; e++) if (!(e in used)) {
    failed++; printf "FAIL cycles/allow-list: entry %d (%s) matches no cycle: remove it\n", e, reason[e]
  }
  if (!failed) { passed++; print "PASS cycles/none_outside_the_allow_list" }
  printf "%d passed, %d failed\n", passed, failed
  exit failed > 0
}'
