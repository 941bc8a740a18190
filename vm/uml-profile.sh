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
#   PROFILE_LINES=N                      lines of our file listed (default
#                                        25; 0: none)
#
# cma-ab alternates A and B, so both sides run the same number of calls;
# each side's share of the samples is its share of the time.  Samples are
# attributed to the instruction after a slow one as often as to it (the
# timer interrupt lands when the instruction retires), so read the hot
# spots of a function as "about here".  This is host time of emulated
# system calls: UML traps each with ptrace, and its user-memory access
# walks page tables in software, so those costs are UML's, not a
# hardware kernel's.  Output: the tables, and $B/uml-profile/ (perf.data,
# run.log, samples.txt, functions.txt, ours-lines.txt).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null || die "uml-profile: perf is missing (vm/deps.sh installs linux-perf)"
args=${*:--n 61 -t 20 -s 4K -P 4k -S s8k}
align=${BUILD_ALIGN:-0}
top=${PROFILE_TOP:-40}
lines=${PROFILE_LINES:-25}
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

# The objects' .text ranges in the kernel binary, as 16-digit hex like
# System.map's: a global function's address less its offset in its object
# gives where that object's .text starts.  "lo hi name" lines.
ranges=$out/ranges.txt
: >"$ranges"
for o in mm/process_vm_access.o mm/process_vm_ours.o mm/gup_stock.o mm/gup.o; do
	[ -f "$obj/$o" ] || die "uml-profile: $obj/$o is missing"
	size=$(size -A "$obj/$o" | awk '$1 == ".text" { print $2 }')
	read -r g off < <(nm --defined-only "$obj/$o" | awk '$2 == "T" { print $3, $1; exit }')
	[ -n "${g:-}" ] || die "uml-profile: $o defines no global function"
	addr=$(awk -v g="$g" '$3 == g { print $1; exit }' "$obj/System.map")
	[ -n "$addr" ] || die "uml-profile: $g of $o is not in System.map"
	printf '%016x %016x %s\n' $((0x$addr - 0x$off)) $((0x$addr - 0x$off + size)) "$o" >>"$ranges"
done

# System.map with each text symbol named after the object it lies in
# (FUNCTION[OBJECT]), so that pc_funcs (vm/lib.sh) counts per side.
awk 'FNR == NR { lo[++n] = $1 ""; hi[n] = $2 ""; ob[n] = $3; next }
     $2 ~ /^[tTwW]$/ {
	o = "other"
	for (i = 1; i <= n; i++)
		if ($1 "" >= lo[i] && $1 "" < hi[i]) { o = ob[i]; break }
	print $1, $2, $3 "[" o "]"
     }' "$ranges" "$obj/System.map" >"$out/tagged.map"

# Sample addresses in the kernel binary, padded to System.map's width.
perf script -i "$out/perf.data" -F ip,dso 2>/dev/null |
	awk -v bin="($bin)" '$2 == bin { s = $1; while (length(s) < 16) s = "0" s; print s }' \
	>"$out/samples.txt"
[ -s "$out/samples.txt" ] || die "uml-profile: no sample fell in $bin"
pc_funcs "$out/tagged.map" "$out/samples.txt" >"$out/functions.txt"

echo "== A/B under perf (cma-ab $args; A = mainline, B = ours) =="
sed -n '/^cma-ab: A =/,/^---- kernel log/p' "$out/run.log" | sed '$d'
awk -v top="$top" '
	{ f = $1; o = f; sub(/.*\[/, "", o); sub(/\]$/, "", o); byobj[o] += $2; total += $2 }
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
	}' "$out/functions.txt"
sort -k2,2rn "$out/functions.txt" | head -n "$top" | awk '{ print $2, $1 }'
echo "(host perf, cpu-clock at 4999 Hz, on the UML kernel process; see vm/uml-profile.sh for how to read it)"

# Our file by source line: the object compiled again with -g from the
# command kbuild recorded (debug info leaves the code as it was: checked),
# each sample's offset in its .text given to addr2line -i, and binned by
# the innermost line of our file it lies in, with the line of our file
# that one is inlined into.
[ "$lines" -gt 0 ] || exit 0
o=mm/process_vm_ours.o
cmd=$(sed -n "s|^savedcmd_$o := ||p" "$obj/mm/.process_vm_ours.o.cmd")
[ -n "$cmd" ] || die "uml-profile: no build command for $o"
cmd=${cmd/-Wp,-MMD,mm\/.process_vm_ours.o.d/}
cmd=${cmd/ -o $o / -g -o $out/ours-g.o }
(cd "$obj" && eval "$cmd") || die "uml-profile: $o does not build with -g"
cmp -s <(objdump -d --no-show-raw-insn "$obj/$o" | sed 1,3d) \
	<(objdump -d --no-show-raw-insn "$out/ours-g.o" | sed 1,3d) ||
	die "uml-profile: $o with -g is not the same code"
read -r lo hi _ < <(grep " $o\$" "$ranges")
awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 < hi' "$out/samples.txt" | sort | uniq -c |
	while read -r n a; do printf '%d 0x%x\n' "$n" $((16#$a - 16#$lo)); done >"$out/ours-offsets.txt"
cut -d' ' -f2 "$out/ours-offsets.txt" | addr2line -a -i -e "$out/ours-g.o" >"$out/ours-a2l.txt"
# addr2line -a answers in the order asked: the Nth address line is the
# Nth offset's.
awk -v src=process_vm_ours.c '
	FNR == NR { n[FNR] = $1; next }
	function flush() {
		if (k && own != "")
			by[own (up != "" ? " in " up : "")] += n[k]
	}
	/^0x/ { flush(); k++; own = up = ""; next }
	{
		split($1, f, ":")
		file = f[1]
		sub(/.*\//, "", file)
		if (file != src) next
		if (own == "") { own = f[2]; path = f[1] } else if (up == "") up = f[2]
	}
	END { flush(); print "@", path; for (l in by) print by[l], l }' \
	"$out/ours-offsets.txt" "$out/ours-a2l.txt" >"$out/ours-lines.raw"
path=$(awk '$1 == "@" { print $2 }' "$out/ours-lines.raw")
grep -v '^@' "$out/ours-lines.raw" | sort -rn >"$out/ours-lines.txt"
printf '\n== Our file by source line (%d samples; LINE in CALLER: inlined there) ==\n' \
	"$(awk '{ s += $1 } END { print s + 0 }' "$out/ours-lines.txt")"
head -n "$lines" "$out/ours-lines.txt" | while read -r n ln rest; do
	printf '%5d %-12s %s\n' "$n" "$ln $rest" "$(sed -n "${ln}{s/^[[:space:]]*//;p}" "$path" | cut -c1-64)"
done
