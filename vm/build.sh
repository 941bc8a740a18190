#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/build.sh KIND: build the x86_64 VM kernel from tinyconfig plus
# vm/config.fragment (and vm/hostfs.fragment for KIND=patched and stock,
# vm/debug.fragment for KIND=debug), or a
# User-Mode Linux kernel from tinyconfig plus vm/uml.fragment.
#   patched      the series applied to the base ($B/tree), into $B/obj-patched
#   debug        the same tree with the debug fragment, into $B/obj-debug
#   debug-rt     the debug kernel made PREEMPT_RT (vm/debug-rt.fragment after
#                vm/debug.fragment; no THP), into $B/obj-debug-rt
#   stock        the unmodified Debian source ($B/stock), into $B/obj-stock
#   uml-patched  $B/tree as ARCH=um, into $B/obj-uml-patched
#   uml-debug    the same with lockdep and DEBUG_VM (vm/uml-debug.fragment)
#   uml-stock    $B/stock as ARCH=um, into $B/obj-uml-stock
#   ab, uml-ab   the A/B tree (vm/ab-tree.sh): stock plus our code on spare
#                syscall numbers, for same-boot comparisons
#   ab-gup       the A/B tree with our mm/gup.c change on both sides, into
#                $B/gup/obj-ab (also named $B/obj-ab-gup), for make icount
#   ab-split, uml-ab-split  the A/B tree in which mainline's file runs on a
#                copy of stock mm/gup.c and ours on our change (vm/ab-tree.sh
#                --split), into $B/split/obj-ab and $B/split/obj-uml-ab
#                (also named $B/obj-ab-split, $B/obj-uml-ab-split)
# BUILD_ALIGN=N (ab-split and uml-ab-split only; 0 or unset: none): the
# same kernel with every function aligned to N bytes
# (KCFLAGS=-falign-functions=N), into the object folder with -aN appended
# (named $B/obj-KIND-aN for vm/run): another code layout and nothing else,
# for vm/bench-ab.sh's AB_LAYOUTS.
# The source tree must have been prepared (vm/series.sh apply, or this
# script for stock).  Prints the path of the kernel image.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kind=${1:-patched}
frags=$ROOT/vm/config.fragment
arch=x86_64 target=bzImage image=arch/x86/boot/bzImage
case $kind in
uml-*)	frags=$ROOT/vm/uml.fragment arch=um target=linux image=linux ;;
esac
case $kind in
patched) src=$B/tree; frags="$frags $ROOT/vm/hostfs.fragment" ;;
uml-patched) src=$B/tree ;;
uml-debug) src=$B/tree; frags="$frags $ROOT/vm/uml-debug.fragment" ;;
debug)   src=$B/tree; frags="$frags $ROOT/vm/debug.fragment" ;;
debug-rt) src=$B/tree; frags="$frags $ROOT/vm/debug.fragment $ROOT/vm/debug-rt.fragment" ;;
stock|uml-stock) src=$B/stock
	 [ "$kind" = stock ] && frags="$frags $ROOT/vm/hostfs.fragment"
	 "$ROOT/vm/base.sh"
	 worktree_at "$src" stock ;;
ab|uml-ab) src=$("$ROOT/vm/ab-tree.sh") ;;
ab-gup)	src=$("$ROOT/vm/ab-tree.sh" --gup) ;;
ab-split|uml-ab-split) src=$("$ROOT/vm/ab-tree.sh" --split) ;;
*) die "vm/build.sh: unknown kernel kind '$kind' (patched, debug, debug-rt, stock, ab, ab-gup, ab-split, uml-patched, uml-debug, uml-stock, uml-ab, uml-ab-split)" ;;
esac
obj=$B/obj-$kind
if [ "$kind" = ab-gup ]; then
	# $B/obj-ab-gup names $B/gup/obj-ab (vm/ab-tree.sh --gup) for vm/run.
	obj=$B/gup/obj-ab
	ln -sfn gup/obj-ab "$B/obj-ab-gup"
fi
case $kind in
*ab-split)
	# $B/obj-KIND names $B/split/obj-AB for vm/run; the objects sit where
	# ab's do relative to their tree, so that ccache finds them.
	obj=$B/split/obj-${kind%-split}
	ln -sfn "split/obj-${kind%-split}" "$B/obj-$kind" ;;
esac
align=${BUILD_ALIGN:-0}
[ "$align" != 0 ] || align=
if [ -n "$align" ]; then
	case $kind in
	*ab-split) ;;
	*) die "build $kind: BUILD_ALIGN is for ab-split and uml-ab-split" ;;
	esac
	# A sibling of the plain object folder: the same relative paths to the
	# tree, so ccache finds what another build of this layout compiled.
	obj=$obj-a$align
	ln -sfn "split/$(basename "$obj")" "$B/obj-$kind-a$align"
fi
[ -f "$src/Makefile" ] || die "build $kind: no source tree at $src (run make series-apply)"
need gcc make flex bison bc libelf-dev libssl-dev ccache cpio
mkdir -p "$obj" "$CCACHE_DIR"
KMAKE=(make -s -C "$src" O="$obj" ARCH="$arch" CC="ccache gcc" HOSTCC="ccache gcc" -j"$JOBS"
	${align:+KCFLAGS=-falign-functions=$align})

# Configure only when the fragments or the source's Kconfig changed.
key=$(cat $frags | sha1sum | cut -c1-16)
if [ "$(cat "$obj/.cma-config" 2>/dev/null)" != "$key" ] || [ ! -f "$obj/.config" ]; then
	stage "build $kind: configuring"
	"${KMAKE[@]}" tinyconfig >"$obj/config.log" 2>&1 || die "build $kind: tinyconfig failed (see $obj/config.log)"
	# shellcheck disable=SC2086
	(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $frags) \
		>>"$obj/config.log" 2>&1 || die "build $kind: merge_config failed (see $obj/config.log)"
	"${KMAKE[@]}" olddefconfig >>"$obj/config.log" 2>&1 || die "build $kind: olddefconfig failed"
	# Every option the fragments ask for must have stuck.  As in
	# merge_config.sh, the last fragment to name an option decides
	# (vm/debug-rt.fragment turns off vm/config.fragment's THP).
	missing=
	# shellcheck disable=SC2086
	while IFS= read -r line; do
		v=${line#*=}
		if [ "$v" = n ]; then
			grep -q "^${line%%=*}=" "$obj/.config" && missing="$missing ${line%%=*}(not n)"
		else
			grep -qx "$line" "$obj/.config" || missing="$missing $line"
		fi
	done < <(cat $frags | awk -F= '/^CONFIG_[A-Za-z0-9_]+=/ { if (!($1 in v)) o[++n] = $1; v[$1] = $0 }
		END { for (i = 1; i <= n; i++) print v[o[i]] }')
	[ -z "$missing" ] || die "build $kind: options did not take:$missing"
	echo "$key" >"$obj/.cma-config"
fi

stage "build $kind: compiling"
"${KMAKE[@]}" "$target" >"$obj/build.log" 2>&1 || {
	grep -E 'error|Error' "$obj/build.log" | head -20 >&2
	die "build $kind: kernel build failed (see $obj/build.log)"
}
if [ -f "$src/mm/gup_stock.h" ]; then
	# The stock copy of GUP must define nothing under a name of its own
	# (vm/ab-tree.sh --split): every global symbol carries stock_.
	bad=$(nm -g --defined-only "$obj/mm/gup_stock.o" | awk '$3 !~ /^(__pfx_|__cfi_)?stock_/ { print $3 }')
	[ -z "$bad" ] || die "build $kind: mm/gup_stock.o defines unprefixed symbols: $bad"
	nm -u "$obj/mm/process_vm_access.o" | grep -q ' stock_pin_user_pages_remote$' ||
		die "build $kind: mainline's file does not call the stock copy of GUP"
fi
echo "$obj/$image"
