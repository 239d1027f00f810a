#!/usr/bin/env bash
# make bench's last step: the rounds bench/run.sh recorded, as one table on
# stdout, OUT/results.csv, and OUT/results.png (gnuplot) where gnuplot exists.
#
#   bash bench/table.sh OUT THREADS FMA_GFLOPS READ_GBS
#
# OUT holds workloads.txt (name|module|floor|work|...) and rounds.txt
# (workload|impl|ms|note, one line per side per round; ms "-" when that side
# gave no time, the note saying why). Each side's figure is the median of
# its rounds. One row per peer of each workload (axle's columns repeated),
# one row with peer "-" where a workload has none.
#   of_floor   rate / floor: work / ms against FMA_GFLOPS x THREADS (flops
#              rows) or READ_GBS (bytes rows); "-" for the compile row
#   speedup    peer_ms / axle_ms: above 1, axle is faster
#   axle.avx2, axle.sse4, axle.2threads: axle against itself (bench/run.sh);
#              the note says whether the issue's bound on that ratio holds
set -u
out=$1 threads=$2 fma=$3 read_gbs=$4
awk -F'|' -v threads="$threads" -v fma="$fma" -v bw="$read_gbs" -v csv="$out/results.csv" -v plot="$out/plot.dat" '
function median(list,   n, v, i, j, t) {
  n = split(list, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n == 0 ? "" : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
function of_floor(w, ms) {
  if (ms == "" || floor_of[w] == "compile") return "-"
  if (floor_of[w] == "flops") return sprintf("%.0f%%", 100 * work[w] / (ms * 1e6) / (fma * threads))
  return sprintf("%.0f%%", 100 * work[w] / (ms * 1e6) / bw)
}
function shown(ms, note) { return ms != "" ? sprintf("%.4g", ms) : (note ~ /^missing/ ? "missing" : "failed") }
function row(w, a, peer, p, pnote,   speed, why) {
  speed = (a != "" && p != "") ? sprintf("%.2fx", p / a) : "-"
  why = (a == "" ? "axle: " note[w, "axle"] (p == "" && pnote != "" ? "; " : "") : "") (p == "" ? pnote : "")
  if (peer in variant_limit && a != "" && p != "")  # axle against itself: the bound the issue sets
    why = sprintf("target <= %gx: %s", variant_limit[peer], p / a <= variant_limit[peer] ? "met" : "missed")
  printf "%-26s %-4s %-10s %-9s %-17s %-10s %-9s %-8s %s\n", w, threads, shown(a, note[w, "axle"]), of_floor(w, a),
         peer, peer == "-" ? "-" : shown(p, pnote), peer == "-" ? "-" : of_floor(w, p), speed, why
  printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,\"%s\"\n", w, threads, a, a == "" ? "" : of_floor(w, a), peer, p,
         p == "" ? "" : of_floor(w, p), speed == "-" ? "" : substr(speed, 1, length(speed) - 1), floor_of[w],
         why >> csv
  if (a != "") printf "\"%s%s%s\" %s %s\n", w, peer == "-" ? "" : " / " peer, (peer != "-" && p == "") ? " (missing)" : "",
                      a, p == "" ? "NaN" : p >> plot
}
FNR == NR { order[++nw] = $1; floor_of[$1] = $3; work[$1] = $4; next }
{
  if (!(($1, $2) in seen)) { seen[$1, $2] = 1; if ($2 != "axle") impls[$1] = impls[$1] "|" $2 }
  if ($3 != "-") times[$1, $2] = times[$1, $2] " " $3
  else if ($4 != "") note[$1, $2] = $4
}
END {
  variant_limit["axle.avx2"] = 1.5; variant_limit["axle.sse4"] = 4; variant_limit["axle.2threads"] = 1.05
  printf "workload,threads,axle_ms,axle_of_floor,peer,peer_ms,peer_of_floor,speedup,floor,note\n" > csv
  printf "" > plot
  printf "%-26s %-4s %-10s %-9s %-17s %-10s %-9s %-8s %s\n", "workload", "thr", "axle_ms", "of_floor", "peer", "peer_ms", "of_floor", "speedup", "note"
  for (i = 1; i <= nw; i++) {
    w = order[i]; a = median(times[w, "axle"])
    n = split(substr(impls[w], 2), list, "|")
    if (n == 0) row(w, a, "-", "", "")
    for (j = 1; j <= n; j++) row(w, a, list[j], median(times[w, list[j]]), note[w, list[j]])
  }
}' "$out/workloads.txt" "$out/rounds.txt"

if command -v gnuplot >/dev/null; then
  n=$(wc -l <"$out/plot.dat")
  peer_bars=', "" using 3 title "peer" lc rgb "#ff7f0e"'
  awk '$NF != "NaN" { found = 1 } END { exit !found }' "$out/plot.dat" || peer_bars=""  # every peer missing
  gnuplot <<GP 2>"$out/gnuplot.err" || { echo "gnuplot failed: $(head -3 "$out/gnuplot.err")"; exit 1; }
set terminal pngcairo noenhanced size $((400 + 34 * n)),900 font ",10"
set output "$out/results.png"
set title "make bench, $threads thread(s): median ms of axle (blue) and the peer (orange) per workload, log scale, lower is faster"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set autoscale y
set ylabel "median ms"
set grid ytics
set xtics rotate by -60 font ",8" nomirror
set bmargin 16
set key outside top center horizontal
plot "$out/plot.dat" using 2:xtic(1) title "axle" lc rgb "#1f77b4"$peer_bars
GP
  echo "wrote $out/results.csv and $out/results.png"
else
  echo "wrote $out/results.csv (no gnuplot: results.png not drawn; make bench-deps installs it)"
fi
