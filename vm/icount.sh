#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/icount.sh [SIZES]: guest instructions per call, mainline (A) against
# ours (B), in the A/B kernel (vm/ab-tree.sh).  SIZES defaults to
# 4K,64K,256K (one remote element, 4 KiB pages).  Then the shape cells of
# cma-ab (bench/ab.c) in ICOUNT_SHAPES (default s8k,gather; empty for none),
# each with ICOUNT_ELEMS remote 64-byte elements (default 64, not cma-ab's
# 1024: gdb is slow) and shown as SHAPE/ELEMS, e.g. `readv s8k/64`.
#
# Timing under TCG mixes our code's cost with the emulator's own (its
# translation-block jump cache, for one, depends on code addresses).
# This counts instead: the VM waits for gdb, and `cma-ab --calls 20` makes
# 20 pairs of calls per cell, A first in even pairs (bench/ab.c).  gdb
# stops at the syscall's entry in each of the last four pairs,
# single-steps the call to its return, and keeps the smallest count of the
# four per side.  Each side is traced twice on each parity of the page's
# touches (every second touch of a page whose activation is still batched
# asks for it again, 50-60 instructions), so one interrupt landing in a
# trace cannot decide the figure.  Shape cells trace only the last two
# pairs (each side once on each parity, the smaller kept): mainline's
# trace there is 100-160 thousand instructions, where one interrupt or
# activation more is below 0.1 %, and four traces would double the time.
# A rep-prefixed string instruction counts once, and its iterations
# (bytes or words moved) go in their own column.  The figures are exact;
# a function's count repeats from run to run, a whole call's can move by
# 5-10 where a cond_resched() or a page's activation takes another path
# in one of the runs (compare the per-function lists then).  They say
# what the guest CPU executes, not how long it takes on hardware.
#
# With our mm/gup.c change in the overlay (mm/gup.c.patch), A and B come
# from two kernels, since the change would speed up both sides of one:
# A = mainline's file on stock 6.12 (kernel "ab"), B = ours with the GUP
# change (kernel "ab-gup", vm/ab-tree.sh --gup).  Two columns to the right
# give the rest: "A+gup" (mainline's file with our GUP change) and "B-gup"
# (ours without it).  Counts are exact, so comparing kernels is sound.
# A second table gives the cost of each 4 KiB page beyond the first,
# (256K call - 4K call) / 63 when both sizes are traced: all instructions,
# those outside the copy (the iov_iter and memcpy functions), returns plus
# indirect calls and jumps (what a mitigated CPU pays most for: retpolines,
# return thunks), and lock-prefixed (atomic) instructions.  The kinds come
# from objdump of each vmlinux, so code patched at boot (alternatives,
# static calls) is classified as built.  ICOUNT_GUP=0 traces kernel "ab"
# alone (A and B from one kernel, the other columns empty).
# ICOUNT_PAGES=thp backs both buffers with transparent huge pages (cma-ab
# -P thp) instead of 4 KiB pages: one-element cells only (cma-ab makes
# its shape cells on 4 KiB pages alone), and no per-page table.
# ICOUNT_SIDES=B traces ours alone (a third of the time where mainline's
# calls are long, as in the shape cells): the A columns and the
# comparisons print "-", for quick work on our file between full runs.
#
# Output: the tables, then for each cell the kernel functions whose
# counts differ most between A and B.  Files: $B/icount/ (gdb.log and the
# PC lists of each kernel under ab/ and ab-gup/, about 100 MB a kernel
# with the default shape cells).
#
# Time (estimated, not measured): gdb steps about a thousand instructions
# a second.  The default sizes trace about 1.1 million instructions (four
# traces a side of 2-55 thousand): about 25 minutes.  A shape cell costs
# mainline 1500-2500 instructions an element (a page pinned for each),
# 100-160 thousand a call at 64 elements.  With two traces a side, readv
# and writev, s8k takes 13-21 minutes while ours is even with mainline
# (longer while ours is far above it) and the gather 9-15 (ours below).
# In all about 45-60 minutes by default.  ICOUNT_SHAPES= (set and empty)
# gives the one-element cells alone; ICOUNT_ELEMS=32 halves the shapes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

sizes=${1:-4K,64K,256K}
shapes=${ICOUNT_SHAPES-s8k,gather}
elems=${ICOUNT_ELEMS:-64}
rounds=20
traced=4	# traces per side, one-element cells
straced=2	# traces per side, shape cells
out=$B/icount
need gdb
gup=${ICOUNT_GUP:-1}
pages=${ICOUNT_PAGES:-4k}
case $pages in
4k) pagesname="4 KiB pages" ;;
thp) pagesname="transparent huge pages"
     [ -z "$shapes" ] || die "icount: ICOUNT_PAGES=thp takes no shape cells (set ICOUNT_SHAPES=)" ;;
*) die "icount: ICOUNT_PAGES is 4k or thp" ;;
esac
only_b=0
case ${ICOUNT_SIDES:-A B} in
"A B" | "B A") ;;
B) only_b=1 ;;
*) die "icount: ICOUNT_SIDES is \"A B\" or B" ;;
esac
[ -f "$ROOT/mm/gup.c.patch" ] || gup=0
kernels=ab
# ab-gup first: its columns (ours, and mainline's file, with the GUP change)
# are the ones a change to the series moves most.
[ "$gup" = 0 ] || kernels="ab-gup ab"
need binutils
# ICOUNT_REUSE=1 keeps a kernel's traces from the last run when that
# kernel, the bench program and the cells are the same (an edit to
# mm/gup.c.patch then retraces only ab-gup).
[ "${ICOUNT_REUSE:-0}" = 1 ] || rm -rf "$out"
mkdir -p "$out"

for k in $kernels; do
	"$ROOT/vm/build.sh" "$k" >/dev/null
done
"$ROOT/vm/userspace.sh" bench
port=$((20000 + $$ % 20000))

# bytes SIZE: 4K -> 4096
bytes() {
	case $1 in
	*[Kk]) echo $((${1%?} << 10)) ;;
	*[Mm]) echo $((${1%?} << 20)) ;;
	*) echo "$1" ;;
	esac
}

# The cells, in cma-ab's order for each call (readv, then writev): ID
# (bytes, or SHAPE.ELEMS) and traces per side.
cells=()
for s in ${sizes//,/ }; do
	cells+=("$(bytes "$s"):$traced")
done
for s in ${shapes//,/ }; do
	cells+=("$s.$elems:$straced")
done
if [ -n "$shapes" ]; then
	shape_args=(-S "$shapes" -e "$elems")
else
	shape_args=(-G)
fi

# The gdb script: one trace per cell and side, in cma-ab's cell order.
{
	cat <<EOF
set pagination off
set confirm off
set height 0
set tcp connect-timeout 120
target remote 127.0.0.1:$port
define pvm_trace
  set \$ic_ret = *(unsigned long *)\$sp
  set \$ic_sp = \$sp
  set \$ic_n = 0
  set \$ic_rep = 0
  while \$pc != \$ic_ret || \$sp <= \$ic_sp
    printf "PC %016lx %016lx\n", \$pc, \$sp
    set \$ic_n = \$ic_n + 1
    set \$ic_b0 = *(unsigned char *)\$pc
    set \$ic_b1 = *(unsigned char *)(\$pc + 1)
    set \$ic_len = 2
    if \$ic_b1 == 0x48
      set \$ic_b1 = *(unsigned char *)(\$pc + 2)
      set \$ic_len = 3
    end
    if \$ic_b0 == 0xf3 && \$ic_b1 >= 0xa4 && \$ic_b1 <= 0xab && \$ic_b1 != 0xa8 && \$ic_b1 != 0xa9
      set \$ic_rep = \$ic_rep + \$rcx
      thbreak *(\$pc + \$ic_len)
      continue
    else
      stepi
    end
  end
  printf "ICOUNT %d %d\n", \$ic_n, \$ic_rep
end
EOF
	for call in readv writev; do
		for cell in "${cells[@]}"; do
			id=${cell%:*} nt=${cell#*:}
			# Each side's syscall runs once in the cell's check, then
			# once a pair: A B in even pairs, B A in odd ones (rounds and
			# nt are even, so the traced pairs start with an even one).
			skip=$((rounds - nt + 1))
			for k in $(seq "$nt"); do
				sides="A B"
				[ $((k % 2)) = 1 ] || sides="B A"
				[ "$only_b" = 0 ] || sides=B
				for side in $sides; do
					fn=__x64_sys_pvm_ours_$call
					[ "$side" = B ] || fn=__x64_sys_process_vm_$call
					cat <<EOF
hbreak $fn
ignore \$bpnum $skip
continue
delete
printf "CELL $call $id $side $k\n"
pvm_trace
EOF
					skip=0
				done
			done
		done
	done
	echo detach
} >"$out/trace.gdb"

# trace KIND: boot kernel KIND, trace every cell into $out/KIND/.
trace() {
	local kind=$1 dir=$out/$1 obj=$B/obj-$1 vm f best k nk nb
	mkdir -p "$dir"
	stage "icount: booting the $kind kernel, waiting for gdb on port $port"
	VM_QEMU_ARGS="-gdb tcp:127.0.0.1:$port -S" "$ROOT/vm/run" --kernel "$kind" --smp 1 \
		--append nokaslr --timeout 3000 --add "$B/add/bench" -- \
		/bench/cma-ab -P "$pages" -s "$sizes" "${shape_args[@]}" --calls "$rounds" >"$dir/vm.log" 2>&1 &
	vm=$!
	gdb -q -batch -nx -x "$out/trace.gdb" "$obj/vmlinux" >"$dir/gdb.log" 2>&1 || {
		kill "$vm" 2>/dev/null
		die "icount: gdb failed (see $dir/gdb.log)"
	}
	wait "$vm" || die "icount: the VM run failed (see $dir/vm.log)"
	grep -q '^ICOUNT' "$dir/gdb.log" || die "icount: no trace in $dir/gdb.log"

	# Split the log into one PC list per cell and side.
	awk -v dir="$dir" '
		/^CELL / { f = dir "/pc-" $2 "-" $3 "-" $4 "-" $5; next }
		/^PC / && f { print $2, $3 > f; next }
		/^ICOUNT / && f { print $2, $3 > (f ".n"); close(f); f = ""; }
	' "$dir/gdb.log"

	# A call that finds TIF_NEED_RESCHED set (a tick or a wakeup while gdb
	# waited for the breakpoint) schedules in GUP's cond_resched(): another
	# task's work, thousands of instructions, lands in the trace.  Each
	# trace is counted without it: from the first instruction of
	# __schedule() to the return into __cond_resched() on the calling
	# task's stack (another task may pass through a cond_resched() of its
	# own meanwhile), dropped from the PC list and the count (.n; its rep
	# iterations stay), its size noted in .sched.  Kernel text lies in one
	# 4 GiB range, so the low 32 bits of an address (exact in awk) identify
	# it; a task's kernel stack is one THREAD_SIZE-aligned block, so bits
	# 14-31 of the stack pointer name it.
	read -r cr_lo cr_hi < <(sym_range "$obj" __cond_resched)
	read -r sc_lo sc_hi < <(sym_range "$obj" __schedule)
	for f in "$dir"/pc-*-[0-9]; do
		awk -v crlo=$((16#$cr_lo)) -v crhi=$((16#$cr_hi)) \
		    -v sclo=$((16#$sc_lo)) -v schi=$((16#$sc_hi)) -v f="$f" '
			function low32(s,  i, v) {
				v = 0
				for (i = 9; i <= 16; i++)
					v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return v
			}
			{
				pc = low32($1)
				stack = int(low32($2) / 16384)
				if (NR == 1)
					own = stack
				if (skip && pc >= crlo && pc < crhi && stack == own)
					skip = 0
				if (!skip && pc >= sclo && pc < schi)
					skip = 1
				if (skip)
					sk++
				else
					print $1 >(f ".kept")
			}
			END {
				getline line <(f ".n")
				split(line, v, " ")
				print v[1] - sk, v[2] >(f ".n")
				print sk + 0 >(f ".sched")
			}' "$f"
		mv "$f.kept" "$f"
	done

	# Of the traces of each side, keep the one with the fewest
	# instructions: an interrupt or a batched LRU activation only ever adds
	# to a call.
	for f in "$dir"/pc-*-1; do
		f=${f%-1}
		best=1
		for ((k = 2; k <= traced; k++)); do
			[ -e "$f-$k.n" ] || break
			read -r nk _ <"$f-$k.n"
			read -r nb _ <"$f-$best.n"
			[ "$nk" -ge "$nb" ] || best=$k
		done
		cp "$f-$best" "$f"
		cp "$f-$best.n" "$f.n"
		cp "$f-$best.sched" "$f.sched"
		pc_funcs "$obj/System.map" "$f" >"$f.fn"
		kinds "$dir" "$f" >"$f.kind"
	done
}

# sym_range OBJ SYMBOL: the low 32 bits (hex) of SYMBOL's first address
# and of the next symbol's, from OBJ's System.map.
sym_range() {
	awk -v s="$2" '$3 == s { a = substr($1, 9); getline; print a, substr($1, 9); exit }' \
		"$1/System.map"
}

# kinds DIR PCFILE: "RET IND LOCK" executed in PCFILE: returns, indirect
# calls and jumps, lock-prefixed instructions, by address from
# DIR/insn (objdump of the kernel as built).
kinds() {
	awk 'NR == FNR { k[$1] = $2; next }
	     { c[k[$1]]++ }
	     END { printf "%d %d %d\n", c["ret"], c["ind"], c["lock"] }' "$1/insn" "$2"
}

# The instructions of the kinds that kinds() counts, by address (16 hex
# digits, as gdb prints them), from each kernel's vmlinux.
classify() {
	objdump -d --no-show-raw-insn "$B/obj-$1/vmlinux" | awk '
		/^ *ffffffff[0-9a-f]+:/ {
			a = $1; sub(":", "", a)
			$1 = ""
			k = ""
			if ($0 ~ /^ *(ret|retq|retl)( |$)/) k = "ret"
			else if ($0 ~ /^ *(call|callq|jmp|jmpq|notrack jmp) +\*/) k = "ind"
			else if ($0 ~ /^ *lock /) k = "lock"
			if (k != "") print a, k
		}' >"$out/$1/insn"
}

for k in $kernels; do
	key=$( (sha1sum <"$B/obj-$k/vmlinux"; sha1sum <"$B/add/bench/bench/cma-ab"
		echo "$sizes $shapes $elems $rounds $traced $straced $only_b $pages"; sha1sum <"$0") | sha1sum)
	if [ "${ICOUNT_REUSE:-0}" = 1 ] && [ "$(cat "$out/$k/key" 2>/dev/null)" = "$key" ]; then
		stage "icount: $k unchanged, keeping its traces"
		continue
	fi
	rm -rf "${out:?}/$k"
	mkdir -p "$out/$k"
	classify "$k"
	trace "$k"
	echo "$key" >"$out/$k/key"
done
# The sides of the tables: A is always mainline's file on stock GUP; B is
# ours on the newest GUP (ours with the change when it is traced).
A=$out/ab
Bk=$out/ab
[ "$gup" = 0 ] || Bk=$out/ab-gup

# rows: "LABEL ID" per cell, the one-element cells first, then the shapes
rows=()
for s in ${sizes//,/ }; do
	rows+=("$s $(bytes "$s")")
done
for s in ${shapes//,/ }; do
	rows+=("$s/$elems $s.$elems")
done

if [ -z "$shapes" ]; then
	echo "== Guest instructions per call, one remote element, $pagesname (A = mainline, B = ours) =="
else
	echo "== Guest instructions per call, 4 KiB pages (A = mainline, B = ours):" \
		"one remote element of each size, then SHAPE/N =="
fi
printf '%-7s %9s | %10s %10s %7s | %12s %12s | %10s %10s\n' call size "A instr" "B instr" "B/A" \
	"A rep iter" "B rep iter" "A+gup" "B-gup"
for row in "${rows[@]}"; do
	read -r s n <<<"$row"
	for call in readv writev; do
		ai=- ar=- ag=- bg=-
		[ "$only_b" = 1 ] || read -r ai ar <"$A/pc-$call-$n-A.n"
		read -r bi br <"$Bk/pc-$call-$n-B.n"
		if [ "$gup" != 0 ]; then
			[ "$only_b" = 1 ] || read -r ag _ <"$out/ab-gup/pc-$call-$n-A.n"
			read -r bg _ <"$out/ab/pc-$call-$n-B.n"
		fi
		awk -v c="$call" -v s="$s" -v ai="$ai" -v bi="$bi" -v ar="$ar" -v br="$br" \
			-v ag="$ag" -v bg="$bg" \
			'BEGIN { r = ai == "-" ? "-" : sprintf("%.3f", bi / ai)
				 printf "%-7s %9s | %10s %10d %7s | %12s %12d | %10s %10s\n",
				 c, s, ai, bi, r, ar, br, ag, bg }'
	done
done
echo "(instr: instructions executed from syscall entry to return, a rep-prefixed"
echo " instruction counted once; rep iter: its iterations, i.e. bytes or words moved;"
echo " the copy itself is the same rep movsb in both; a schedule() that GUP's"
echo " cond_resched() made is left out of a trace, see $out/*/*.sched)"
if [ "$gup" != 0 ]; then
	echo "(A: mainline's file on stock 6.12; B: ours with our mm/gup.c change;"
	echo " A+gup: mainline's file with our mm/gup.c change; B-gup: ours on stock mm/gup.c)"
else
	echo "(A and B from one kernel, stock mm/gup.c)"
fi
[ -z "$shapes" ] || {
	echo "(SHAPE/N: cma-ab's shape cell of N remote elements of 64 bytes, bench/ab.c: s8k one"
	echo " per page at an 8 KiB stride, gather shuffled within 16 pages; the fewest of 2 traces a side)"
}

# The cost of a page: (256K - 4K) / 63, when both sizes were traced.
if [ "$pages" = 4k ] && [[ ",$sizes," == *,4K,* && ",$sizes," == *,256K,* ]]; then
	echo
	echo "== Per additional 4 KiB page, (256K call - 4K call) / 63 =="
	printf '%-7s %-6s | %8s %10s %8s %8s\n' call side instr "non-copy" "ret+ind" lock
	# percall DIR CALL SIDE ID: "INSTR NONCOPY RET+IND LOCK" of one trace
	percall() {
		local f=$1/pc-$2-$4-$3 i nc r ind l
		read -r i _ <"$f.n"
		nc=$(awk '$1 !~ /(copy|iter|memcpy|memmove|movs)/ || $1 ~ /^pvm_/ { n += $2 } END { print n + 0 }' "$f.fn")
		read -r r ind l <"$f.kind"
		echo "$i $nc $((r + ind)) $l"
	}
	for call in readv writev; do
		sides="A:$A:A"
		[ "$gup" = 0 ] || sides="$sides A+gup:$out/ab-gup:A B-gup:$out/ab:B"
		[ "$only_b" = 0 ] || sides=
		[ "$only_b" = 0 ] || [ "$gup" = 0 ] || sides="B-gup:$out/ab:B"
		sides="$sides B:$Bk:B"
		for sd in $sides; do
			IFS=: read -r label dir side <<<"$sd"
			read -r i1 n1 r1 l1 < <(percall "$dir" "$call" "$side" 4096)
			read -r i2 n2 r2 l2 < <(percall "$dir" "$call" "$side" 262144)
			awk -v c="$call" -v s="$label" -v i="$((i2 - i1))" -v n="$((n2 - n1))" \
				-v r="$((r2 - r1))" -v l="$((l2 - l1))" \
				'BEGIN { printf "%-7s %-6s | %8.1f %10.1f %8.2f %8.2f\n",
					 c, s, i / 63, n / 63, r / 63, l / 63 }'
		done
	done
	echo "(non-copy: outside the functions whose names hold copy, iter, memcpy,"
	echo " memmove or movs, i.e. the iov_iter copy; our own pvm_* functions count"
	echo " as non-copy whatever their names; ret+ind: returns plus indirect"
	echo " calls and jumps; lock: lock-prefixed instructions; all as built, before"
	echo " boot-time patching)"
fi

echo
if [ "$only_b" = 1 ]; then
	echo "== Where ours goes: the functions with the most instructions =="
	for row in "${rows[@]}"; do
		read -r s n <<<"$row"
		for call in readv writev; do
			echo "-- $call $s"
			sort -k2,2nr "$Bk/pc-$call-$n-B.fn" | head -n 8 |
				awk '{ printf "%8d  %s\n", $2, $1 }'
		done
	done
	exit 0
fi
echo "== Where they differ: functions with the largest |B - A| =="
for row in "${rows[@]}"; do
	read -r s n <<<"$row"
	for call in readv writev; do
		echo "-- $call $s"
		join -a 1 -a 2 -e 0 -o 0,1.2,2.2 "$A/pc-$call-$n-A.fn" "$Bk/pc-$call-$n-B.fn" |
			awk '{ d = $3 - $2; if (d) printf "%d %8d %8d %+8d  %s\n", d < 0 ? -d : d, $2, $3, d, $1 }' |
			sort -k1,1nr | cut -d' ' -f2- | head -n 8
	done
done
