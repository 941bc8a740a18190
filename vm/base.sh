#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the base tree: Debian's linux-source-6.12 committed as-is (tag
# "stock"), then with the in-tree Cross Memory Attach removed by the edits
# below (tag "cma-base").  No mainline CMA code is stored in this repository:
# the removal is done by pattern, and checked.  A rerun is a no-op unless the
# package version changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need "$PKG" git xz-utils
ver=$(dpkg-query -W -f='${Version}' "$PKG")
# The cache key: the package version and this script.
key="$ver $(sha1sum <"$0" | cut -c1-12)"
tarball=/usr/src/$PKG.tar.xz
[ -f "$tarball" ] || die "$PKG $ver is installed but $tarball is missing: package layout changed"

if [ -d "$BASE/.git" ] && [ "$(cat "$B/base.version" 2>/dev/null)" = "$key" ] &&
   git -C "$BASE" rev-parse -q --verify cma-base >/dev/null; then
	exit 0
fi

stage "base: unpacking $PKG $ver"
rm -rf "$BASE" "$B/base.version"
mkdir -p "$BASE"
tar -xJf "$tarball" -C "$BASE" --strip-components=1 || die "unpacking $tarball"
[ -f "$BASE/Makefile" ] && [ -f "$BASE/mm/process_vm_access.c" ] ||
	die "$tarball does not hold a kernel tree with mm/process_vm_access.c: package layout changed"

cd "$BASE"
git init -q -b stock-branch
git config core.autocrlf false
git config gc.auto 0
git add -A -f
git commit -q -m "Debian $PKG $ver, unmodified"
git tag stock

stage "base: removing the in-tree Cross Memory Attach"

# edit FILE EXPECTED PERL: run a perl -0777 substitution on FILE, which must
# delete exactly EXPECTED lines; anything else means the layout changed.
edit() {
	local f=$1 want=$2 expr=$3 before after
	[ -f "$f" ] || die "base: $f missing: package layout changed"
	before=$(wc -l <"$f")
	perl -0777 -pi -e "$expr" "$f"
	after=$(wc -l <"$f")
	[ $((before - after)) -eq "$want" ] ||
		die "base: $f: expected to remove $want lines, removed $((before - after)): package layout changed"
}

git rm -q mm/process_vm_access.c
edit mm/Makefile 4 's/\nifdef CONFIG_CROSS_MEMORY_ATTACH\n[^\n]*process_vm_access\.o\nendif\n//'
edit init/Kconfig 10 's/config CROSS_MEMORY_ATTACH\n(?:(?!config )[^\n]*\n)*//'
edit include/uapi/asm-generic/unistd.h 4 's/#define __NR_process_vm_(?:readv|writev) \d+\n__SYSCALL\(__NR_process_vm_\w+, \w+\)\n//g'
edit include/linux/syscalls.h 12 's/asmlinkage long sys_process_vm_(?:readv|writev)\([^;]*\);\n//g'
edit kernel/sys_ni.c 4 's/COND_SYSCALL(?:_COMPAT)?\(process_vm_(?:readv|writev)\);\n//g'
tables=$(git grep -l -E '\sprocess_vm_(readv|writev)\s' -- '*.tbl' ':!tools')
n=0
for t in $tables; do
	edit "$t" "$(grep -c -E '\sprocess_vm_(readv|writev)\s' "$t")" \
		's/^[^\n]*\sprocess_vm_(?:readv|writev)\s[^\n]*\n//mg'
	n=$((n + 1))
done
[ "$n" -ge 17 ] || die "base: only $n syscall tables named process_vm_*: package layout changed"

# Comments that merely mention the syscalls (include/linux/ptrace.h) stay.
left=$(git grep -n -E 'process_vm_(readv|writev)|process_vm_access' -- . ':!tools' ':!Documentation' |
	grep -v -E '^[^:]+:[0-9]+:\s*(/?\*|#)' || true)
[ -z "$left" ] || die "base: references left after the removal:
$left"

git add -A -f
git commit -q -m "Remove the in-tree Cross Memory Attach

Removed by vm/base.sh, so that the series adds it back from scratch."
git tag cma-base
echo "$key" >"$B/base.version"
stage "base: ready at $(git rev-parse --short cma-base) ($n syscall tables edited)"
