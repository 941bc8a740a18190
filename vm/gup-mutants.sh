#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/gup-mutants.sh [a|b|c]...: build kernels whose follow_pte_run()
# (our mm/gup.c change) is broken on purpose, to show that the tests
# notice (vm/gup-tests.sh, the CMA selftests):
#   a  no gup_must_unshare() check: a R/O pin takes a shared anon page
#   b  no write check: FOLL_WRITE takes a R/O PTE
#   c  one page past ctx->end: one page more than asked for
# Each is built from $B/tree with the one line changed, into
# $B/obj-gupmut-X (vm/run --kernel gupmut-X); $B/tree/mm/gup.c is put
# back afterwards (and $B/obj-patched rebuilt from it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

gup=$B/tree/mm/gup.c
[ -f "$gup" ] || die "gup-mutants: no $gup (make series-apply)"
grep -q 'follow_pte_run' "$gup" || die "gup-mutants: $gup has no follow_pte_run()"
cp "$gup" "$B/gup.c.orig"
restore() {
	cp "$B/gup.c.orig" "$gup"
	stage "gup-mutants: mm/gup.c restored; rebuilding the patched kernel"
	"$ROOT/vm/build.sh" patched >/dev/null
}
trap restore EXIT

# mutate X: the sed expression for mutation X, on follow_pte_run()'s lines
# only (the same checks in follow_page_pte() stay).
mutate() {
	local from to
	from=$(grep -n '^static .* follow_pte_run(' "$gup" | cut -d: -f1)
	to=$(awk -v f="$from" 'NR > f && /^}/ { print NR; exit }' "$gup")
	case $1 in
	a) sed -i "${from},${to}s/|| gup_must_unshare(vma, flags, page)))/|| 0))/" "$gup" ;;
	b) sed -i "${from},${to}s/((flags \& FOLL_WRITE) ||/(0 ||/" "$gup" ;;
	c) sed -i "${from},${to}s/ctx->end - address)/ctx->end + PAGE_SIZE - address)/" "$gup" ;;
	*) die "gup-mutants: unknown mutation '$1' (a, b, c)" ;;
	esac
	! cmp -s "$gup" "$B/gup.c.orig" || die "gup-mutants: mutation $1 did not apply"
}

for m in "${@:-a b c}"; do
	for m1 in $m; do
		cp "$B/gup.c.orig" "$gup"
		mutate "$m1"
		stage "gup-mutants: $m1: $(diff "$B/gup.c.orig" "$gup" | grep '^>' | sed 's/^>[[:space:]]*//')"
		"$ROOT/vm/build.sh" patched >/dev/null
		mkdir -p "$B/obj-gupmut-$m1/arch/x86/boot"
		cp "$B/obj-patched/arch/x86/boot/bzImage" "$B/obj-gupmut-$m1/arch/x86/boot/bzImage"
		cp "$B/obj-patched/.config" "$B/obj-gupmut-$m1/.config"
	done
done
