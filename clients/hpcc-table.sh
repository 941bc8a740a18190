#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# clients/hpcc-table.sh DIR KERNEL...: the 2010 RFC's table from the hpcc
# runs in DIR/hpcc-KERNEL.log (clients/hpcc-in-vm.sh's HPCC lines): per
# kernel and test the median over the runs of Base (single copy none) and
# CMA, their ratio (CMA/Base, per run pair, median), and CMA ours/stock
# when both kernels ran.  Under QEMU TCG absolute figures mean nothing;
# the ratios within one boot and between kernels do.
set -euo pipefail
dir=${1:?usage: hpcc-table.sh DIR KERNEL...}
shift
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# val KERNEL MECH KEY: the values, one per run, in run order.
val() { sed -n "s/^HPCC $2 [0-9]* .*\\b$3=\\([0-9.e+-]*\\).*/\\1/p" "$dir/hpcc-$1.log"; }
runs=$(grep -c '^HPCC cma [0-9]* Nat' "$dir/hpcc-$1.log" || true)
printf 'hpcc 1.5.0 over Open MPI 4.1.4 vader, QEMU TCG, medians of %s runs per cell, GB/s (ratios: per run pair, median)\n' "$runs"
printf '%-8s %-26s %10s %10s %9s\n' kernel test "Base" "CMA" "CMA/Base"
for k in "$@"; do
	for t in NaturallyOrderedRingBandwidth_GBytes:"Naturally ordered ring" \
		RandomlyOrderedRingBandwidth_GBytes:"Randomly ordered ring" \
		MaxPingPongBandwidth_GBytes:"Max ping-pong"; do
		key=${t%%:*} name=${t#*:}
		b=$(val "$k" none "$key" | median)
		c=$(val "$k" cma "$key" | median)
		r=$(paste <(val "$k" cma "$key") <(val "$k" none "$key") | awk '$2 > 0 { print $1 / $2 }' | median)
		printf '%-8s %-26s %10.4f %10.4f %9.2f\n' "$k" "$name" "$b" "$c" "$r"
	done
done
if [[ " $* " == *" patched "* ]] && [[ " $* " == *" stock "* ]]; then
	echo
	printf '%-26s %12s %12s\n' "ours/stock (medians)" "Base" "CMA"
	for t in NaturallyOrderedRingBandwidth_GBytes:"Naturally ordered ring" \
		RandomlyOrderedRingBandwidth_GBytes:"Randomly ordered ring" \
		MaxPingPongBandwidth_GBytes:"Max ping-pong"; do
		key=${t%%:*} name=${t#*:}
		printf '%-26s' "$name"
		for m in none cma; do
			o=$(val patched $m "$key" | median) s=$(val stock $m "$key" | median)
			awk -v o="$o" -v s="$s" 'BEGIN { if (s > 0) printf " %12.2f", o / s; else printf " %12s", "-" }'
		done
		printf '\n'
	done
fi
