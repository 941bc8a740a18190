#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# uml-table.sh OURS.csv STOCK.csv [OURS.self STOCK.self]: the UML table of
# make bench-uml, built on compare.sh's medians (median over the rounds of
# each cell's median); then, given bench/selfread's output of both
# kernels, the self-read table (median of all runs per size).
#
# CMA cells use call_us, the time inside one process_vm_readv/writev call,
# so that the ping-pong's flow control (futex wake-ups, which are costly
# under UML) stays out.  Per size and transport:
#   GB/s         size / call time, ours and stock
#   ours/stock   stock's call time / ours: above 1 means ours is faster
#   ours/memcpy  memcpy's time for the same size (same boots as ours) /
#                ours: the fraction of a plain copy's speed we reach
#   ~            the two kernels' min-max ranges overlap
# and for each transport the size from which the per-call cost no longer
# dominates: the first size whose call takes more than twice the 4 KiB
# (one page) call, i.e. where the bytes cost more than the call.
set -eu

[ $# -eq 2 ] || [ $# -eq 4 ] || { echo "usage: $0 ours.csv stock.csv [ours.self stock.self]" >&2; exit 2; }
here=$(dirname "$0")

sh "$here/compare.sh" "$1" "$2" | awk '
	function mcr(z, t) {
		return (z in mc) ? sprintf("%.2f", mc[z] / t) : "-"
	}
	function bytes(s,    n) {
		n = s + 0
		if (s ~ /K$/) n *= 1024
		if (s ~ /M$/) n *= 1048576
		return n
	}
	NR <= 2 { print; next }
	$1 == "pattern" { next }
	$1 == "sweep" && $3 == "4k" && $2 ~ /^cma-/ && $7 == "call_us" {
		k = $2 SUBSEP $5
		o[k] = $8; s[k] = $9; ov[k] = ($12 == "~")
		if (!($5 in seen)) { seen[$5] = 1; sz[nsz++] = $5 }
		next
	}
	$1 == "sweep" && $3 == "4k" && $2 == "memcpy" && $7 == "us" { mc[$5] = $8; next }
	$1 == "gather" && $2 ~ /^cma-/ && $7 == "call_us" {
		g[ng++] = sprintf("%-9s %-7s %10.1f %10.1f %8.2f%s", $2, $6, $8, $9,
				  $8 > 0 ? $9 / $8 : 0, $12 == "~" ? " ~" : "")
	}
	END {
		print ""
		print "Size sweep, 4 KiB pages: GB/s inside the call (median of the rounds'"'"' medians)"
		printf "%-6s", "size"
		for (t = 0; t < 2; t++)
			printf " | %-9s %7s %7s %10s %11s", t ? "cma-write" : "cma-read", "ours", "stock",
				"ours/stock", "ours/memcpy"
		printf " | %7s\n", "memcpy"
		for (i = 0; i < nsz; i++) {
			z = sz[i]; b = bytes(z)
			printf "%-6s", z
			for (t = 0; t < 2; t++) {
				k = (t ? "cma-write" : "cma-read") SUBSEP z
				if (!(k in o) || o[k] <= 0 || s[k] <= 0) { printf " | %-9s %7s %7s %10s %11s", "", "-", "-", "-", "-"; continue }
				printf " | %-9s %7.2f %7.2f %8.2f%-2s %11s", "", b / o[k] / 1e3, b / s[k] / 1e3,
					s[k] / o[k], ov[k] ? " ~" : "",
					mcr(z, o[k])
			}
			m = "-"
			if ((z in mc) && mc[z] > 0)
				m = sprintf("%.2f", b / mc[z] / 1e3)
			printf " | %7s\n", m
		}
		print ""
		for (t = 0; t < 2; t++) {
			x = t ? "cma-write" : "cma-read"
			one = o[x SUBSEP "4K"]
			if (one == "") continue
			at = "none of the sizes measured"
			for (i = 0; i < nsz; i++)
				if (o[x SUBSEP sz[i]] > 2 * one) { at = sz[i]; break }
			printf "%s (ours): a 4 KiB call takes %.1f us; the per-call cost stops dominating at %s\n", x, one, at
		}
		if (ng) {
			print ""
			print "Fine-grained gather, 64 KiB as 1024 x 64-byte elements (cma-read: remote iovecs,"
			print "cma-write: local iovecs): us per call"
			printf "%-9s %-7s %10s %10s %8s\n", "transport", "shape", "ours", "stock", "ours/stock"
			for (i = 0; i < ng; i++) print g[i]
		}
	}
'

[ $# -eq 4 ] || exit 0
echo
echo "Self-read, one element, 4 KiB pages, many calls timed together (bench/selfread.c):"
echo "GB/s, median of all runs (n = runs per kernel); ours/stock above 1 means ours is faster"
awk '
	function median(str,    a, n, i, j, t) {
		n = split(str, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	FNR == 1 { f++ }
	$1 == "selfread" {
		v[f, $2] = v[f, $2] " " $4; n[f, $2]++
		if (f == 1 && !($2 in seen)) { seen[$2] = 1; order[k++] = $2 }
	}
	END {
		printf "%9s %8s %8s %10s %6s\n", "KiB", "ours", "stock", "ours/stock", "n"
		for (i = 0; i < k; i++) {
			z = order[i]
			if (!((2 SUBSEP z) in v)) continue
			o = median(v[1, z]); s = median(v[2, z])
			printf "%9s %8.2f %8.2f %10.2f %3d/%-3d\n", z, o, s, (s > 0 ? o / s : 0), n[1, z], n[2, z]
		}
	}
' "$3" "$4"
