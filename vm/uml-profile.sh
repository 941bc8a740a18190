#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make uml-profile: where the A/B kernel's time goes under User-Mode Linux.
# UML runs the kernel's code as an ordinary process of this host, so the
# host's perf can sample it (a cpu-clock timer: no hardware counters are
# needed, and this machine has none).  The split A/B kernel (vm/ab-tree.sh
# --split) keeps each side's code in its own objects: mainline's file in
# mm/process_vm_access.o on stock GUP in mm/gup_stock.o (A), ours in
# mm/process_vm_ours.o on the series' GUP in mm/gup.o (B; the rest of the
# kernel uses it too, but under cma-ab nothing else pins pages).  Samples
# are binned by those objects, then by function; a static function that
# both GUP objects define is told apart by the object its address lies in.
#
#   vm/uml-profile.sh [cma-ab options]   default: -n 61 -t 20 -s 4K -P 4k -S s8k
#   BUILD_ALIGN=N                        profile the build with functions
#                                        aligned to N bytes (vm/build.sh)
#   PROFILE_TOP=N                        functions listed (default 40)
#
# cma-ab alternates A and B, so both sides run the same number of calls;
# each side's share of the samples is its share of the time.  Samples are
# attributed to the instruction after a slow one as often as to it (the
# timer interrupt lands when the instruction retires), so read the hot
# spots of a function as "about here".  This is host time of emulated
# system calls: UML traps each with ptrace, and its user-memory access
# walks page tables in software, so those costs are UML's, not a
# hardware kernel's.  Output: the tables, and $B/uml-profile/ (perf.data,
# run.log, samples.txt).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null || die "uml-profile: perf is missing (vm/deps.sh installs linux-perf)"
args=${*:--n 61 -t 20 -s 4K -P 4k -S s8k}
align=${BUILD_ALIGN:-0}
top=${PROFILE_TOP:-40}
out=$B/uml-profile
rm -rf "$out"
mkdir -p "$out"

"$ROOT/vm/userspace.sh" bench
BUILD_ALIGN=$align "$ROOT/vm/build.sh" uml-ab-split >/dev/null
rk=ab-split
[ "$align" = 0 ] || rk=$rk-a$align
obj=$(readlink -f "$B/obj-uml-$rk")
bin=$obj/linux
[ -x "$bin" ] || die "uml-profile: no UML kernel at $bin"

stage "uml-profile: cma-ab $args under perf (User-Mode Linux, $rk)"
perf record -F 4999 -o "$out/perf.data" -- "$ROOT/vm/run" --uml --mem 2G --kernel "$rk" \
	--timeout 3000 --add "$B/add/bench" -- /bench/cma-ab $args >"$out/run.log" 2>"$out/perf.log" ||
	die "uml-profile: the run failed (see $out/run.log, $out/perf.log)"

# The objects' .text ranges in the kernel binary: a global function's
# address less its offset in its object gives where that object's .text
# starts.  "lo hi name" lines.
ranges=$out/ranges.txt
: >"$ranges"
nm "$bin" | awk '$2 ~ /^[Tt]$/ { print $3, $1 }' | sort -k1,1 >"$out/addr-by-name.txt"
for o in mm/process_vm_access.o mm/process_vm_ours.o mm/gup_stock.o mm/gup.o; do
	[ -f "$obj/$o" ] || die "uml-profile: $obj/$o is missing"
	size=$(size -A "$obj/$o" | awk '$1 == ".text" { print $2 }')
	read -r g off < <(nm --defined-only "$obj/$o" | awk '$2 == "T" { print $3, $1; exit }')
	[ -n "${g:-}" ] || die "uml-profile: $o defines no global function"
	addr=$(awk -v g="$g" '$1 == g { print $2; exit }' "$out/addr-by-name.txt")
	[ -n "$addr" ] || die "uml-profile: $g of $o is not in $bin"
	printf '%d %d %s\n' $((0x$addr - 0x$off)) $((0x$addr - 0x$off + size)) "$o" >>"$ranges"
done

# Sample addresses in the kernel binary, as decimal numbers.
perf script -i "$out/perf.data" -F ip,dso 2>/dev/null |
	awk -v bin="($bin)" '$2 == bin { print $1 }' |
	while read -r ip; do echo $((0x$ip)); done >"$out/samples.txt"
[ -s "$out/samples.txt" ] || die "uml-profile: no sample fell in $bin"

nm -n "$bin" | awk '$2 ~ /^[Tt]$/ { print $1, $3 }' |
	while read -r a n; do echo "$((0x$a)) $n"; done >"$out/syms.txt"

echo "== A/B under perf (cma-ab $args; A = mainline, B = ours) =="
sed -n '/^cma-ab: A =/,/^---- kernel log/p' "$out/run.log" | sed '$d'
awk -v top="$top" '
	FILENAME == ARGV[1] { lo[++nr] = $1; hi[nr] = $2; name[nr] = $3; next }
	FILENAME == ARGV[2] { sa[++ns] = $1; sn[ns] = $2; next }
	{
		ip = $1; total++
		# binary search: the last symbol at or below ip
		l = 1; h = ns
		while (l < h) { m = int((l + h + 1) / 2); if (sa[m] <= ip) l = m; else h = m - 1 }
		f = sn[l]; o = "other"
		for (i = 1; i <= nr; i++)
			if (ip >= lo[i] && ip < hi[i]) { o = name[i]; break }
		byobj[o]++
		byfn[f " [" o "]"]++
	}
	END {
		side["mm/process_vm_access.o"] = "A: mainline'"'"'s file"
		side["mm/gup_stock.o"] = "A: stock GUP"
		side["mm/process_vm_ours.o"] = "B: our file"
		side["mm/gup.o"] = "B: the series'"'"' GUP"
		side["other"] = "both: the rest of the kernel"
		printf "\n== Samples in the UML kernel binary by object (%d in all) ==\n", total
		n = split("mm/process_vm_access.o mm/gup_stock.o mm/process_vm_ours.o mm/gup.o other", ord, " ")
		for (i = 1; i <= n; i++)
			printf "%-24s %-30s %7d  %5.1f %%\n", ord[i], side[ord[i]], byobj[ord[i]], 100 * byobj[ord[i]] / total
		a = byobj["mm/process_vm_access.o"] + byobj["mm/gup_stock.o"]
		b = byobj["mm/process_vm_ours.o"] + byobj["mm/gup.o"]
		printf "own objects: A %d, B %d, B/A %.3f (what both call, such as the copy, is under other)\n", a, b, a ? b / a : 0
		printf "\n== Functions, the %d with the most samples ==\n", top
		cmd = "sort -rn | head -" top
		for (k in byfn) print byfn[k], k | cmd
		close(cmd)
	}' "$ranges" "$out/syms.txt" "$out/samples.txt"
echo "(host perf, cpu-clock at 4999 Hz, on the UML kernel process; see vm/uml-profile.sh for how to read it)"
