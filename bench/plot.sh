#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# plot.sh RESULTS.csv OUT.png: draw the size sweep of a cmabench CSV,
# bandwidth against message size, one line per transport, one panel for
# 4 KiB pages and one for THP-backed buffers.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 results.csv out.png" >&2; exit 2; }
csv=$1
png=$2
[ -r "$csv" ] || { echo "$0: cannot read $csv" >&2; exit 1; }
command -v gnuplot >/dev/null 2>&1 || { echo "$0: gnuplot not found, no plot" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# One data file per pages/transport: size median min max.
awk -F, -v dir="$tmp" '
	/^#/ { if (!machine) { sub(/^# cmabench: /, ""); machine = $0 }; next }
	$1 == "sweep" && $7 == "MB/s" {
		f = dir "/" $3 "_" $2 ".dat"
		if (!(f in seen)) { seen[f] = 1; order = order " " $2 }
		print $5, $8, $9, $10 > f
	}
	END { print machine > (dir "/machine") }
' "$csv"

set -- "$tmp"/*.dat
[ -e "$1" ] || { echo "$0: no sweep rows in $csv" >&2; exit 1; }

term=png
if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then
	term='pngcairo font ",9"'
fi

# The transports in the order the CSV has them.
transports=$(awk -F, '$1 == "sweep" && !seen[$2]++ { printf "%s ", $2 }' "$csv")

panel() {
	pages=$1 title=$2 first=1
	printf 'set title "%s"\n' "$title"
	printf 'plot '
	for t in $transports; do
		f="$tmp/${pages}_$t.dat"
		[ -e "$f" ] || continue
		[ $first -eq 1 ] || printf ', '
		first=0
		# shellcheck disable=SC2016 # $1 is gnuplot's, not ours
		printf '"%s" using ($1/1024):2:3:4 with yerrorlines title "%s"' "$f" "$t"
	done
	printf '\n'
}

{
	printf 'set terminal %s noenhanced size 1400,600\n' "$term"
	printf 'set output "%s"\n' "$png"
	printf 'set multiplot layout 1,2 title "cmabench ping-pong size sweep: %s (median, bars min-max)"\n' \
		"$(sed 's/"//g' "$tmp/machine")"
	printf 'set logscale xy\nset autoscale xfix\nset grid\nset key left top\n'
	printf 'set xlabel "message size (KiB)"\nset ylabel "MB/s"\n'
	printf 'set format x "%%g"\nset offsets graph 0.05, graph 0.05, 0, 0\n'
	[ -e "$tmp/4k_${transports%% *}.dat" ] && panel 4k "4 KiB pages"
	[ -e "$tmp/thp_${transports%% *}.dat" ] && panel thp "THP-backed buffers (MADV_HUGEPAGE)"
	printf 'unset multiplot\n'
} > "$tmp/plot.gp"

gnuplot "$tmp/plot.gp"
echo "wrote $png"
