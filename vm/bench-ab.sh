#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-ab: our code against mainline's in one kernel, call for call.
# Builds the A/B kernel (vm/ab-tree.sh: stock 6.12 plus our file on
# syscalls 470/471), boots it, and runs bench/ab.c: each cell alternates
# samples of mainline (A) and ours (B) on the same buffers, then an A/A
# control run (mainline against itself) shows the method's resolution.
# By default each side has its own GUP (vm/ab-tree.sh --split): mainline
# on a copy of stock mm/gup.c, ours on the series' mm/gup.c, i.e. stock
# 6.12 against the whole series.  AB_GUP=stock runs both on stock GUP
# instead (kernel ab): our file alone against mainline's.
#
#   vm/bench-ab.sh          in QEMU (TCG emulation: ratios only)
#   vm/bench-ab.sh --uml    under User-Mode Linux (the mm code at native speed)
#   BOOTS=N                 boots (default 2); each prints its own table
#   AB_ARGS=...             options of cma-ab (default: every cell)
#   AA_ARGS=...             options of the A/A control run
#   AB_GUP=split|stock      GUP of our side: the series' (default) or stock
#   AB_LAYOUTS="0 64"       code layouts (split kernel only): BOOTS boots of
#                           each, 0 the plain build, N one with functions
#                           aligned to N bytes (vm/build.sh BUILD_ALIGN);
#                           the table's verdict is over the pairs of all
#                           (default 0: a layout alone can move a cell by
#                           10 % under UML, see bench/RESULTS.md)
# Output: $B/bench-ab[-uml]/boot-L-N.txt, boot-L-N.csv, aa-L-N.txt (layout L,
# boot N), and table.txt, the per-cell medians over the boots
# (bench/ab-table.sh), and ab.png, its picture (bench/ab-plot.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

uml=0
[ "${1:-}" = --uml ] && uml=1
boots=${BOOTS:-2}
case ${AB_GUP:-split} in
split)	sfx=-split gupwhat="mainline on stock GUP, ours on the series' GUP" ;;
stock)	sfx= gupwhat="both on stock GUP: our file alone" ;;
*)	die "bench-ab: AB_GUP must be split or stock" ;;
esac
if [ "$uml" = 1 ]; then
	kind=uml-ab$sfx out=$B/bench-ab-uml run=(--uml --mem 2G)
	args=${AB_ARGS:--n 15 -t 20}
	what="User-Mode Linux, native mm code"
else
	kind=ab$sfx out=$B/bench-ab run=()
	args=${AB_ARGS:--n 11 -t 30}
	what="QEMU TCG emulation, 2 vCPUs"
fi
aa=${AA_ARGS:--b 310,311 -G -P 4k -n 11 -t 20}
layouts=${AB_LAYOUTS:-0}
[ "$layouts" = 0 ] || [ -n "$sfx" ] || die "bench-ab: AB_LAYOUTS needs the split kernel (AB_GUP=split)"
rm -rf "$out"
mkdir -p "$out"

"$ROOT/vm/userspace.sh" bench
n=0
for l in $layouts; do
	# Boot files are named by layout, then boot: boot-L-R.*; layout 0 is
	# the plain build.
	BUILD_ALIGN=$l "$ROOT/vm/build.sh" "$kind" >/dev/null
	rk=${kind#uml-} lwhat=
	[ "$l" = 0 ] || rk=$rk-a$l lwhat=", functions aligned to $l bytes"
	for r in $(seq "$boots"); do
		f=$out/boot-$l-$r
		n=$((n + 1))
		stage "bench-ab: boot $r/$boots of the A/B kernel ($what$lwhat)"
		"$ROOT/vm/run" "${run[@]}" --kernel "$rk" --timeout 3000 --add "$B/add/bench" -- sh -c \
			"/bench/cma-ab $args --csv /tmp/ab.csv && echo CMA-CSV-BEGIN && cat /tmp/ab.csv && echo CMA-CSV-END &&
			 echo CMA-AA-BEGIN && /bench/cma-ab $aa && echo CMA-AA-END" \
			>"$f.log" 2>&1 || die "bench-ab: boot $r failed (see $f.log)"
		sed -n '/^cma-ab: A =/,/^CMA-CSV-BEGIN$/p' "$f.log" | sed '$d' >"$f.txt"
		sed -n '/^CMA-CSV-BEGIN$/,/^CMA-CSV-END$/p' "$f.log" | sed '1d;$d' >"$f.csv"
		sed -n '/^CMA-AA-BEGIN$/,/^CMA-AA-END$/p' "$f.log" | sed '1d;$d' >"$out/aa-$l-$r.txt"
		[ -s "$f.csv" ] || die "bench-ab: no CSV from boot $r (see $f.log)"
	done
done
[ "$layouts" = 0 ] || gupwhat="$gupwhat; layouts (function alignment, 0 = plain): $layouts"
echo "== A/B in one kernel ($what): mainline (A) against ours (B), $n boot(s); $gupwhat =="
sh "$ROOT/bench/ab-table.sh" "$out"/boot-*.csv | tee "$out/table.txt"
echo
echo "== A/A control (mainline against itself), the first boot =="
sed -n '/^call /,$p' "$out/aa-${layouts%% *}-1.txt"
# The picture: per cell the A/B ratio, with the A/A control's range.
sh "$ROOT/bench/ab-plot.sh" "$out" "$out/ab.png" "$what: mainline time / our time"
