#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-vm: the benchmark inside the VM, on the patched kernel and on
# stock 6.12 (mainline CMA), boots interleaved (ours, stock, ours, ...),
# then ours/stock per cell.  QEMU here is TCG emulation: absolute figures
# mean little; only the ratios between the two kernels, measured the same
# way in alternating boots, do.
#
# make bench-uml (vm/bench-vm.sh --uml): the same with the User-Mode Linux
# builds of both trees, which run the mm code natively; then the UML table
# (bench/uml-table.sh): ours/stock and ours/memcpy per size, and where the
# per-call cost stops dominating.
#   ROUNDS=N            boots per kernel (default 3; 2 with --uml)
#   BENCH_VM_ARGS=...   cmabench options (default: CMA sweep and gather)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

uml=0
[ "${1:-}" = --uml ] && uml=1
rounds=${ROUNDS:-$((3 - uml))}
if [ "$uml" = 1 ]; then
	args=${BENCH_VM_ARGS:--t cma-read,cma-write,memcpy -p sweep,gather -s 4K,64K,256K,1M,4M,16M,64M,256M -P 4k -r 5 --target-ms 20}
	out=$B/bench-uml run=(--uml --mem 3G) kinds="uml-patched uml-stock"
	# Then a self-read with many calls timed together (bench/selfread.c).
	self='echo CMA-SELF-BEGIN; for s in 64:3000 256:1500 1024:600 4096:200 16384:60 65536:15; do /bench/selfread -k ${s%:*} -n ${s#*:} -r 3 || exit 1; done; echo CMA-SELF-END'

	what="User-Mode Linux (native mm code; ptrace-trapped syscalls)"
else
	args=${BENCH_VM_ARGS:--t cma-read,cma-write,memcpy -p sweep,gather -s 4K,64K,1M,4M -P 4k,thp -r 5 --target-ms 40}
	out=$B/bench-vm run=() kinds="patched stock" self=true
	what="QEMU TCG emulation - only ratios mean anything"
fi
rm -rf "$out"
mkdir -p "$out"

"$ROOT/vm/series.sh" apply
for k in $kinds; do
	"$ROOT/vm/build.sh" "$k" >/dev/null
done
"$ROOT/vm/userspace.sh" bench

for r in $(seq "$rounds"); do
	for k in patched stock; do
		stage "bench-vm: round $r/$rounds, $k kernel${run:+ (${run[0]#--})}"
		"$ROOT/vm/run" "${run[@]}" --kernel "$k" --timeout 1800 --add "$B/add/bench" -- sh -c \
			"/bench/cmabench $args --note '$what ($k kernel)' --csv /tmp/b.csv && echo CMA-CSV-BEGIN && cat /tmp/b.csv && echo CMA-CSV-END && $self" \
			>"$out/$k-$r.log" 2>&1 || die "bench-vm: the $k run $r failed (see $out/$k-$r.log)"
		sed -n '/^CMA-CSV-BEGIN$/,/^CMA-CSV-END$/p' "$out/$k-$r.log" | sed '1d;$d' >"$out/$k-$r.csv"
		[ -s "$out/$k-$r.csv" ] || die "bench-vm: no CSV from the $k run $r"
		sed -n '/^CMA-SELF-BEGIN$/,/^CMA-SELF-END$/p' "$out/$k-$r.log" | grep '^selfread ' >"$out/$k-$r.self" || true
	done
done
cat "$out"/patched-*.csv >"$out/ours.csv"
cat "$out"/stock-*.csv >"$out/stock.csv"
if [ "$uml" = 1 ]; then
	echo "== UML benchmark: ours/stock per cell, $rounds interleaved boots each =="
	cat "$out"/patched-*.self >"$out/ours.self"
	cat "$out"/stock-*.self >"$out/stock.self"
	sh "$ROOT/bench/uml-table.sh" "$out/ours.csv" "$out/stock.csv" "$out/ours.self" "$out/stock.self" |
		tee "$out/table.txt"
else
	echo "== in-VM benchmark, QEMU TCG (emulated): ours/stock per cell, $rounds interleaved boots each =="
	sh "$ROOT/bench/compare.sh" "$out/ours.csv" "$out/stock.csv" | tee "$out/ratios.txt"
fi
