#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# compare.sh OURS.csv STOCK.csv: put two cmabench CSV outputs side by side
# and print ours/stock of the medians for every cell both have.
#
# A file may hold several runs one after the other (e.g. `cat ours-*.csv`
# from alternating boots): a cell seen k times then counts with the median
# of its k medians, and the min of the mins and the max of the maxes.
#
# For MB/s a ratio above 1 means ours is faster; for us and call_us (time
# per message, time per call) a ratio below 1 means ours is faster.  The
# verdict says which, or "~" when the two min-max ranges overlap, i.e. the
# difference is within the run-to-run spread.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 ours.csv stock.csv" >&2; exit 2; }
for f in "$1" "$2"; do
	[ -r "$f" ] || { echo "$0: cannot read $f" >&2; exit 1; }
done

awk -F, -v ours="$1" -v stock="$2" '
	function human(n) {
		if (n >= 1048576 && n % 1048576 == 0) return n / 1048576 "M"
		if (n >= 1024 && n % 1024 == 0) return n / 1024 "K"
		return n
	}
	# median of the values v[k, 1..c[k]] (insertion sort: c is small)
	function median(v, c, k,    i, j, t, a, n) {
		n = c[k]
		for (i = 1; i <= n; i++) a[i] = v[k, i]
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	FNR == 1 { file++ }
	/^#/ {
		if ($0 ~ /^# cmabench:/) {
			if (file == 1 && !m1) m1 = substr($0, 3)
			if (file == 2 && !m2) m2 = substr($0, 3)
		}
		if ($0 ~ /^# note:/) {
			if (file == 1 && !n1) n1 = substr($0, 3)
			if (file == 2 && !n2) n2 = substr($0, 3)
		}
		next
	}
	$1 == "pattern" || NF < 10 { next }
	{
		# key: pattern,transport,pages,procs,size,shape,metric
		k = file SUBSEP $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7
		if (file == 1 && !(k in cnt)) order[n++] = $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7
		cnt[k]++
		med[k, cnt[k]] = $8
		if (!(k in lo) || $9 < lo[k]) lo[k] = $9
		if (!(k in hi) || $10 > hi[k]) hi[k] = $10
	}
	END {
		print "ours:  " m1 (n1 ? " (" n1 ")" : "")
		print "stock: " m2 (n2 ? " (" n2 ")" : "")
		printf "%-9s %-10s %-4s %5s %6s %-7s %-8s %12s %12s %8s %5s  %s\n",
			"pattern", "transport", "page", "procs", "size", "shape", "metric",
			"ours", "stock", "ratio", "n", "verdict"
		for (i = 0; i < n; i++) {
			ko = 1 SUBSEP order[i]
			ks = 2 SUBSEP order[i]
			if (!(ks in cnt)) { missing++; continue }
			split(order[i], f, ",")
			o = median(med, cnt, ko)
			s = median(med, cnt, ks)
			r = s > 0 ? o / s : 0
			faster = (f[7] == "MB/s") ? (r > 1) : (r < 1)
			overlap = !(lo[ko] > hi[ks] || lo[ks] > hi[ko])
			v = overlap ? "~ (ranges overlap)" : (faster ? "ours faster" : "ours slower")
			printf "%-9s %-10s %-4s %5s %6s %-7s %-8s %12.4g %12.4g %8.3f %2d/%-2d  %s\n",
				f[1], f[2], f[3], f[4], human(f[5]), f[6], f[7], o, s, r,
				cnt[ko], cnt[ks], v
		}
		if (missing)
			printf "(%d cells of %s have no counterpart in %s)\n", missing, ours, stock
	}
' "$1" "$2"
