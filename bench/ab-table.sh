#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench/ab-table.sh BOOT.csv...: join the CSVs of cma-ab (bench/ab.c), one
# per boot, into one table: per cell the A/B ratio of each boot (median of
# its sample pairs), the median of those, and how many pairs in all B won.
# A/B above 1 means B (ours) is faster.  Verdict, by a sign test over all
# pairs: "B faster" or "A faster" when the count of pairs B won would come
# by chance (two-sided, fair coin) less than once in 100, else "even".
set -eu
[ $# -ge 1 ] || { echo "usage: ab-table.sh BOOT.csv..." >&2; exit 2; }
awk -F, '
function fmt(v) {
	if (v >= 1048576 && v % 1048576 == 0) return (v / 1048576) "M"
	if (v >= 1024 && v % 1024 == 0) return (v / 1024) "K"
	return v
}
function median(s,    n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# two-sided sign test: P(a fair coin gives a split at least as uneven)
function signp(w, n,    k, lc, t, tail) {
	if (w * 2 > n) w = n - w
	tail = 0
	for (k = 0; k <= w; k++) {
		lc = lgam(n + 1) - lgam(k + 1) - lgam(n - k + 1)
		tail += exp(lc - n * log(2))
	}
	t = 2 * tail
	return t > 1 ? 1 : t
}
function lgam(x,    r) { r = 0; while (x > 1) { x--; r += log(x) } return r }
FNR == 1 { boots++; next }
{
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
	if (!(k in seen)) { seen[k] = 1; order[++n] = k }
	ratios[k] = ratios[k] " " $8; a[k] = a[k] " " $6; b[k] = b[k] " " $7
	won[k] += $11; pairs[k] += $12
}
END {
	printf "%-6s %-6s %-3s %5s | %10s %10s | %-24s %6s | %9s %s\n", "call", "shape",
	       "pg", "size", "A us", "B us", "A/B per boot", "A/B", "B won", "verdict"
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, SUBSEP)
		per = ratios[k]; gsub(/^ /, "", per)
		m = median(ratios[k])
		p = signp(won[k], pairs[k])
		v = p >= 0.01 ? "even" : (won[k] * 2 > pairs[k] ? "B faster" : "A faster")
		printf "%-6s %-6s %-3s %5s | %10.2f %10.2f | %-24s %6.3f | %4d/%-4d %s\n", f[1], f[2], f[3],
		       fmt(f[4]), median(a[k]), median(b[k]), per, m, won[k], pairs[k], v
	}
	printf "(%d boot(s); A us and B us: medians over the boots of each boot'"'"'s median)\n", boots
}' "$@"
