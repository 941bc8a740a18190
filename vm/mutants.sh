#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make mutants (vm/mutants.sh): the kernel broken on purpose, one small
# patch at a time, and the test that must notice each.  vm/mutants/*.patch
# are patches against files of the built tree ($B/tree), each with a
# header of "Key: value" lines before its diff:
#   Kernel:    the kernel to build: patched (the default) or debug-rt
#   Stage:     the make check stage that catches it (for the reader)
#   Run:       a program of the selftests and its arguments, run in the VM
#              as /cma/x86_64/PROGRAM ARGS (the harness's -r FIXTURE.VARIANT.TEST
#              picks cases); one line per program
#   Caught-by: what must fail: case names (fixture.variant.test) that must
#              report "not ok", a PROGRAM that must exit non-zero, or
#              "loggate: TEXT", a kernel report the log gate must fail on
# For each mutant: apply it to $B/tree, rebuild that kernel incrementally
# (vm/build.sh), boot it (vm/run; --disk for the patched kernel) with the
# Run lines, and print "mutant NAME: caught by WHAT" or "mutant NAME:
# SURVIVED"; the tree is put back whatever happens.  At the end the clean
# kernels are rebuilt and the same Run lines must pass on them (the
# control: a case that fails on the clean kernel proves nothing).  Ends
# with "N passed, N failed": a mutant that survived, did not apply or did
# not build, and a control that failed, are failures.
#   MUTANTS="a b"  only these (names of vm/mutants/NAME.patch)
# Not in make check or CI: each mutant is a kernel build and a boot.
# Logs in $B/mutants/.  It rebuilds kernels in $B: do not run it beside
# make check in the same build folder.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

need_cmd patch git flock
dir=$ROOT/vm/mutants
out=$B/mutants
mkdir -p "$out"
exec 9>"$B/.mutants.lock"
flock -n 9 || die "mutants: another vm/mutants.sh runs in $B"
[ -d "$B/tree/.git" ] || [ -f "$B/tree/.git" ] || die "mutants: no built tree at $B/tree (make series-apply)"
git -C "$B/tree" diff --quiet || die "mutants: $B/tree has changes of its own: git -C $B/tree diff"

names=${MUTANTS:-}
if [ -z "$names" ]; then
	for f in "$dir"/*.patch; do names="$names $(basename "$f" .patch)"; done
fi
for m in $names; do
	[ -f "$dir/$m.patch" ] || die "mutants: no $dir/$m.patch (MUTANTS names vm/mutants/NAME.patch)"
done

# field FILE KEY: the values of KEY: in FILE's header, one a line.
field() { sed -n '/^--- /q; s/^'"$2"': *//p' "$1"; }
kernel_of() {
	local k
	k=$(field "$1" Kernel)
	echo "${k:-patched}"
}
# changed FILE: the tree files the patch changes.
changed() { sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1"; }

# vm_cmds FILE...: the VM's shell commands for the Run lines of FILEs.
vm_cmds() {
	local f line
	echo 'cd /cma || exit 1'
	for f in "$@"; do
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			printf 'echo "# mutant-run: %s"; ./x86_64/%s; echo "# mutant-rc: %s $?"\n' \
				"$line" "$line" "${line%% *}"
		done < <(field "$f" Run)
	done
}

# boot KERNEL LOG FILE...: the Run lines of FILEs on KERNEL; output in LOG.
boot() {
	local kind=$1 log=$2 disk=()
	shift 2
	# The debug kernels have no block device (vm/check-stages.sh, st_debug_vm).
	[ "$kind" = patched ] && disk=(--disk)
	"$ROOT/vm/run" --kernel "$kind" "${disk[@]}" --timeout 1200 --add "$B/add/selftests" -- \
		sh -c "$(vm_cmds "$@")" >"$log" 2>&1
}

# caught FILE LOG: print what in LOG caught the mutant of FILE; fail if nothing did.
caught() {
	local f=$1 log=$2 c hit=
	while IFS= read -r c; do
		[ -n "$c" ] || continue
		case $c in
		loggate:*)
			grep -qF -- "${c#loggate: }" "$log" && grep -q '^FAIL: log gate' "$log" &&
				hit="$hit, the log gate (${c#loggate: })" ;;
		*.*)
			grep -qE "^not ok [0-9]+ ${c//./\\.}( |$)" "$log" && hit="$hit, $c" ;;
		*)
			grep -qE "^# mutant-rc: $c [1-9]" "$log" && hit="$hit, $c" ;;
		esac
	done < <(field "$f" Caught-by)
	[ -n "$hit" ] || return 1
	echo "${hit#, }"
}

# The tree is put back, and the kernels rebuilt from it, however the run ends.
KINDS=
restore() {
	local k
	if ! git -C "$B/tree" checkout -q -- . || ! git -C "$B/tree" diff --quiet; then
		stage "mutants: CANNOT RESTORE $B/tree: run make series-apply before any other target"
	fi
	for k in $KINDS; do
		stage "mutants: rebuilding the clean $k kernel"
		"$ROOT/vm/build.sh" "$k" >/dev/null ||
			stage "mutants: the clean $k kernel did not build: obj-$k may hold a mutant (vm/build.sh $k)"
	done
	KINDS=
}
trap restore EXIT
trap 'exit 130' INT TERM HUP

"$ROOT/vm/userspace.sh" selftests >/dev/null || die "mutants: the selftests did not build"
t0=$(date +%s)
pass=0 fail=0
for m in $names; do
	f=$dir/$m.patch
	kind=$(kernel_of "$f")
	[[ " $KINDS " == *" $kind "* ]] || KINDS="$KINDS $kind"
	s=$(date +%s)
	if ! patch -d "$B/tree" -p1 --fuzz=0 --dry-run -s <"$f" >"$out/$m.patch.log" 2>&1 ||
	   ! patch -d "$B/tree" -p1 --fuzz=0 --no-backup-if-mismatch -s <"$f" >>"$out/$m.patch.log" 2>&1; then
		echo "mutant $m: DOES NOT APPLY to $B/tree (see $out/$m.patch.log)"
		fail=$((fail + 1))
		continue
	fi
	if ! "$ROOT/vm/build.sh" "$kind" >"$out/$m.build.log" 2>&1; then
		echo "mutant $m: DOES NOT BUILD (see $out/$m.build.log)"
		fail=$((fail + 1))
	else
		b=$(date +%s)
		boot "$kind" "$out/$m.log" "$f"
		if what=$(caught "$f" "$out/$m.log"); then
			echo "mutant $m: caught by $what ($kind kernel; build $((b - s)) s, run $(($(date +%s) - b)) s)"
			pass=$((pass + 1))
		else
			echo "mutant $m: SURVIVED $(field "$f" Caught-by | tr '\n' ' ')($kind kernel; log: $out/$m.log)"
			fail=$((fail + 1))
		fi
	fi
	# shellcheck disable=SC2046
	git -C "$B/tree" checkout -q -- $(changed "$f") || die "mutants: cannot restore $B/tree after $m"
done

# The control: the clean kernels, and every Run line of the mutants they ran.
kinds=$KINDS
restore
for kind in $kinds; do
	files=()
	for m in $names; do
		[ "$(kernel_of "$dir/$m.patch")" = "$kind" ] && files+=("$dir/$m.patch")
	done
	s=$(date +%s)
	if boot "$kind" "$out/control-$kind.log" "${files[@]}" &&
	   ! grep -qE '^not ok |^# mutant-rc: [^ ]+ [1-9]' "$out/control-$kind.log"; then
		echo "control: the clean $kind kernel passes all ${#files[@]} mutants' runs ($(($(date +%s) - s)) s)"
		pass=$((pass + 1))
	else
		echo "control: the clean $kind kernel FAILS the mutants' runs (log: $out/control-$kind.log)"
		grep -E '^not ok |^# mutant-rc: [^ ]+ [1-9]|^FAIL' "$out/control-$kind.log" | head -n 10 | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done
echo "make mutants: $(($(date +%s) - t0)) s; logs in $out"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
