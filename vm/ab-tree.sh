#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/ab-tree.sh: prepare $B/ab, the A/B tree for same-boot benchmarks:
# the unmodified Debian 6.12 source (mainline CMA keeps syscalls 310/311)
# plus our mm/process_vm_access.c from the overlay, built as
# mm/process_vm_ours.c with its syscalls renamed and wired to the spare
# x86_64 numbers 470/471 (PVM_AB_NR_* in bench/ab.c).  One kernel then has
# both implementations, and a benchmark can alternate between them call
# by call, in one boot, on the same buffers.
#
# Nothing of mainline's file is copied anywhere: the stock file stays
# where Debian put it, and the tree lives only in the build folder.
# Files are rewritten only when their content changes, so rebuilds stay
# incremental.
#
# vm/ab-tree.sh --gup prepares $B/gup/ab, the same tree with our mm/gup.c
# change (mm/gup.c.patch) as well: both sides of it get the change, so it
# serves counts across kernels (make icount), never a same-boot A/B.  Its
# folder and its object folder ($B/gup/obj-ab) sit at the same relative
# places as $B/ab and $B/obj-ab, so that ccache finds every object but the
# changed ones.
#
# vm/ab-tree.sh --split prepares $B/split/ab, the A/B tree in which each
# side has its own GUP: mm/gup.c carries our change and serves our file
# (and the rest of the kernel), while stock 6.12's mm/gup.c is compiled a
# second time as mm/gup_stock.c, every global symbol it defines renamed
# with a stock_ prefix (mm/gup_stock.h, made from the file), and
# mainline's mm/process_vm_access.c is compiled with that header too, so
# its calls reach the stock copy.  Mainline (A) then runs as on stock 6.12
# and ours (B) as the whole series, in one boot: the comparison issue 15's
# targets name, timed.  Neither file's text is changed; both are compiled
# with -include mm/gup_stock.h (mm/Makefile).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$B/ab
gup=0 split=0
case ${1:-} in
--gup)	gup=1 src=$B/gup/ab ;;
--split) gup=1 split=1 src=$B/split/ab ;;
'') ;;
*) die "ab-tree: unknown option '$1' (--gup, --split)" ;;
esac
mkdir -p "$(dirname "$src")"
"$ROOT/vm/base.sh"
# A new base (package update) resets the tree; otherwise it is kept as is.
if [ ! -e "$src/.git" ] ||
   [ "$(git -C "$src" rev-parse HEAD)" != "$(git -C "$BASE" rev-parse stock)" ]; then
	worktree_at "$src" stock
fi

# put FILE: stdin becomes $src/FILE if it differs.
put() {
	local f=$src/$1 tmp
	tmp=$(mktemp)
	cat >"$tmp"
	if cmp -s "$tmp" "$f"; then
		rm -f "$tmp"
	else
		mkdir -p "$(dirname "$f")"
		mv "$tmp" "$f"
		chmod 644 "$f"
	fi
}

grep -q 'SYSCALL_DEFINE6(process_vm_readv,' "$ROOT/mm/process_vm_access.c" ||
	die "ab-tree: mm/process_vm_access.c has no process_vm_readv definition"
sed -e 's/SYSCALL_DEFINE6(process_vm_readv,/SYSCALL_DEFINE6(pvm_ours_readv,/' \
    -e 's/SYSCALL_DEFINE6(process_vm_writev,/SYSCALL_DEFINE6(pvm_ours_writev,/' \
	"$ROOT/mm/process_vm_access.c" | put mm/process_vm_ours.c
put include/uapi/linux/process_vm.h <"$ROOT/include/uapi/linux/process_vm.h"
{ git -C "$BASE" show stock:mm/Makefile |
	sed 's/\(process_vm_access\.o\)$/\1 process_vm_ours.o/'
  if [ $split = 1 ]; then
	echo 'obj-$(CONFIG_MMU) += gup_stock.o'
	echo 'CFLAGS_gup_stock.o += -include $(srctree)/mm/gup_stock.h'
	echo 'CFLAGS_process_vm_access.o += -include $(srctree)/mm/gup_stock.h'
  fi; } | put mm/Makefile
grep -q 'process_vm_access\.o process_vm_ours\.o$' "$src/mm/Makefile" ||
	die "ab-tree: mm/Makefile has no process_vm_access.o line to extend"

{ git -C "$BASE" show stock:arch/x86/entry/syscalls/syscall_64.tbl
  printf '470\t64\tpvm_ours_readv\t\tsys_pvm_ours_readv\n'
  printf '471\t64\tpvm_ours_writev\t\tsys_pvm_ours_writev\n'; } |
	put arch/x86/entry/syscalls/syscall_64.tbl
grep -q 'SYSCALL_DEFINE6(pvm_ours_readv,' "$src/mm/process_vm_ours.c" ||
	die "ab-tree: renaming the syscalls failed"
if [ $gup = 1 ]; then
	need_cmd patch
	tmp=$(mktemp -d)
	git -C "$BASE" show stock:mm/gup.c >"$tmp/gup.c"
	patch -s -p2 -d "$tmp" <"$ROOT/mm/gup.c.patch" >&2 ||
		die "ab-tree: mm/gup.c.patch does not apply to stock mm/gup.c"
	put mm/gup.c <"$tmp/gup.c"
	# A tree an earlier series left its mm/internal.h change in gets
	# stock's back (the series no longer changes it).
	git -C "$BASE" show stock:mm/internal.h | put mm/internal.h
	rm -rf "$tmp"
fi
if [ $split = 1 ]; then
	git -C "$BASE" show stock:mm/gup.c | put mm/gup_stock.c
	# Every function stock mm/gup.c defines outside "static": a line at
	# column 0 that opens a definition (vm/build.sh checks the object:
	# a name missed here would be defined twice, or left unprefixed).
	names=$(sed -nE '/^(static|extern|typedef|#)/d
		/;[[:space:]]*$/d
		s/^[A-Za-z_][A-Za-z0-9_ *]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/p' \
		"$src/mm/gup_stock.c" | sort -u)
	[ -n "$names" ] || die "ab-tree: no global definitions found in stock mm/gup.c"
	{ echo '/* SPDX-License-Identifier: GPL-2.0 */'
	  echo '/* Made by vm/ab-tree.sh --split: stock mm/gup.c under stock_ names. */'
	  for n in $names; do printf '#define %s stock_%s\n' "$n" "$n"; done; } |
		put mm/gup_stock.h
fi
echo "$src"
