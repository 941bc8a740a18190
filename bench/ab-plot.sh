#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench/ab-plot.sh DIR OUT.png [TITLE]: draw a make bench-ab run (the
# boot-*.csv and aa-*.txt of DIR, $B/bench-ab or $B/bench-ab-uml): per
# cell, the A/B ratio of mainline's time to ours (above 1: ours faster),
# a bar from 1 to the median over the boots and a whisker from the lowest to the
# highest boot; the grey band is the A/A control's range (mainline
# against itself, the same cells or fewer: what the method cannot
# resolve).  One-element cells are left out unless they are all there is.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 DIR OUT.png [TITLE]" >&2; exit 2; }
dir=$1
png=$2
title=${3:-A/B: mainline time / our time}
command -v gnuplot >/dev/null 2>&1 || { echo "$0: gnuplot not found" >&2; exit 1; }
set -- "$dir"/boot-*.csv
[ -r "$1" ] || { echo "$0: no boot-*.csv in $dir" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# One line per cell: index, label, median, min, max of the per-boot ratios.
awk -F, '
	FNR == 1 { next }
	{
		key = $1 " " $2 " " $3 " " $4
		if (!(key in n)) {
			order[++cells] = key
			lab[key] = ($2 == "one" ? $2 " " ($4 >= 1048576 ? $4 / 1048576 "M" : $4 / 1024 "K") : $2) \
				   ($3 == "thp" ? " thp" : "") " " ($1 == "readv" ? "r" : "w")
			shape[key] = $2
		}
		v[key, ++n[key]] = $8
	}
	END {
		for (c = 1; c <= cells; c++)
			if (shape[order[c]] != "one")
				shapes++
		for (c = 1; c <= cells; c++) {
			k = order[c]
			if (shapes && shape[k] == "one")
				continue
			for (i = 2; i <= n[k]; i++)
				for (j = i; j > 1 && v[k, j - 1] > v[k, j]; j--) {
					t = v[k, j]; v[k, j] = v[k, j - 1]; v[k, j - 1] = t
				}
			m = n[k] % 2 ? v[k, (n[k] + 1) / 2] : (v[k, n[k] / 2] + v[k, n[k] / 2 + 1]) / 2
			printf "%d \"%s\" %.4f %.4f %.4f\n", x++, lab[k], m, v[k, 1], v[k, n[k]]
		}
	}
' "$@" >"$tmp/cells.dat"
[ -s "$tmp/cells.dat" ] || { echo "$0: no cells in $dir" >&2; exit 1; }

# The A/A band: the lowest and highest median ratio of the control runs.
lo=1 hi=1
if ls "$dir"/aa-*.txt >/dev/null 2>&1; then
	read -r lo hi <<EOF2
$(awk '$1 ~ /^(readv|writev)$/ && $8 == "|" { r = $9 + 0
	if (!n++ || r < lo) lo = r; if (n == 1 || r > hi) hi = r }
	END { if (n) printf "%.4f %.4f\n", lo, hi; else print "1 1" }' "$dir"/aa-*.txt)
EOF2
fi
set -- "$dir"/boot-*.csv
boots=$#

term=png
gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 && term='pngcairo font ",9"'
gnuplot <<EOF
set terminal $term size 1100,480
set output "$png"
set title "$title ($boots boot(s); bar: median over boots, whisker: lowest to highest; grey: A/A control $lo-$hi)"
set ylabel "mainline time / our time (above 1: ours faster)"
set logscale y 2
set yrange [0.25:16]
set ytics (0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 8, 16)
set grid ytics
set xtics rotate by -45 scale 0
set xrange [-0.7:$(($(wc -l <"$tmp/cells.dat") - 1)).7]
set style fill solid 0.7 border -1
set boxwidth 0.7
unset key
set object 1 rectangle from graph 0, first $lo to graph 1, first $hi fillcolor rgb "#c0c0c0" fillstyle solid 0.5 noborder behind
# A bar from 1 to the median: up where ours is faster, down where it is slower.
plot "$tmp/cells.dat" using 1:3:(\$1 - 0.35):(\$1 + 0.35):(\$3 < 1 ? \$3 : 1):(\$3 < 1 ? 1 : \$3):(\$3 < 1 ? 0xc04040 : 0x3070b0):xtic(2) \
	with boxxyerror linecolor rgb variable, \
     "" using 1:3:4:5 with yerrorbars linecolor rgb "black" pointtype 0, \
     1 with lines linecolor rgb "black" dashtype 2
EOF
echo "$png: $(wc -l <"$tmp/cells.dat") cells, A/A band $lo-$hi"
