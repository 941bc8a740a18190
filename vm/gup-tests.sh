#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/gup-tests.sh [--quick] [--kernels "patched stock"] [--build-only]
#
# Guard GUP itself: the kernel's own mm selftests that pin pages and break
# COW (gup_test through CONFIG_GUP_TEST's debugfs file, gup_longterm, cow,
# uffd-unit-tests, ksm_functional_tests, mkdirty, madv_populate), built
# from the patched tree ($B/tree, tools/testing/selftests/mm) as static
# binaries and run in the VM on our kernel and on stock 6.12.  Every case
# (a TAP line, a "Testing ..." line of uffd-unit-tests, a program's exit
# status, the FOLL_PIN balance of /proc/vmstat at the end) and our own
# vm/gup-cow-write.c (a write pin over many COW-shared pages) must give the
# same result on both kernels; a case that fails on both is a failure
# that was there before us: it is listed, and does not fail the run.
#   --quick     the make check subset: a smaller gup_test matrix, only the
#               fork/pin cases of uffd-unit-tests, no ksm_functional_tests
#   --kernels   which kernels (default "patched stock"); one kernel alone
#               is only run and summed up, not compared
#   --build-only  build the selftests into $B/add/gup and stop
# GUP_REUSE="stock": take that kernel's results from the last run (when
# only the other kernel changed, e.g. for a mutation test); GUP_TIMEOUT:
# the VM's timeout in seconds.
# Logs and per-case results in $B/gup-tests/quick/ (or full/).  Exits 1
# on a case whose result differs (a failure ours has and stock has not
# included), or on a VM run that failed (the log gate: any WARNING or BUG
# in the kernel log).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

quick=0 kernels="patched stock" build_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--kernels) kernels=$2; shift 2 ;;
	--build-only) build_only=1; shift ;;
	*) die "vm/gup-tests.sh: unknown option '$1'" ;;
	esac
done

PROGS="gup_test gup_longterm cow uffd-unit-tests ksm_functional_tests mkdirty madv_populate"
# Our own check, beside them (vm/gup-cow-write.c).
OWN="gup_cow_write"
OUT=$B/gup-tests
ADD=$B/add/gup

build() {
	local src=$B/tree/tools/testing/selftests/mm dst=$ADD/mm key p hdr=$B/hdr
	[ -d "$src" ] || die "gup-tests: $src missing (run make series-apply)"
	need gcc make liburing-dev
	key=$( (cd "$B/tree" && find tools/testing/selftests/mm tools/testing/selftests/kselftest*.h \
		mm/gup_test.h include/uapi -type f ! -name 'local_config.*' | LC_ALL=C sort |
		xargs sha1sum; cat "$ROOT/vm/gup-tests.sh" "$ROOT/vm/gup-cow-write.c" | sha1sum; gcc --version) | sha1sum | cut -c1-16)
	if [ "$(cat "$dst/.key" 2>/dev/null)" = "$key" ] && [ -x "$dst/run-gup-tests" ]; then
		stage "gup-tests: selftests up to date in $dst"
		return 0
	fi
	make -s -C "$B/tree" O="$B/obj-hdr" ARCH=x86_64 headers_install \
		INSTALL_HDR_PATH="$hdr" >/dev/null || die "gup-tests: headers_install failed"
	rm -rf "$dst"
	mkdir -p "$dst"
	# Static, for the busybox initramfs; check_config.sh finds the static
	# liburing, so cow and gup_longterm test io_uring fixed buffers too.
	# shellcheck disable=SC2046
	make -C "$src" OUTPUT="$dst" CC="gcc -static" KHDR_INCLUDES="-isystem $hdr/include" \
		$(for p in $PROGS; do echo "$dst/$p"; done) >"$OUT/build.log" 2>&1 || {
		tail -n 30 "$OUT/build.log" >&2
		die "gup-tests: build failed (see $OUT/build.log)"
	}
	# Ours: a write pin over many COW-shared pages breaks every COW.
	gcc -Wall -Wextra -Werror -O2 -static -o "$dst/gup_cow_write" "$ROOT/vm/gup-cow-write.c" ||
		die "gup-tests: vm/gup-cow-write.c does not build"
	grep -q 'LOCAL_CONFIG_HAVE_LIBURING' "$src/local_config.h" ||
		die "gup-tests: liburing not found by check_config.sh: the io_uring cases would skip"
	write_runner >"$dst/run-gup-tests"
	chmod +x "$dst/run-gup-tests"
	echo "$key" >"$dst/.key"
	stage "gup-tests: built into $dst"
}

# The script run in the VM: /mm/run-gup-tests [quick].  Each program's
# output follows a "# gup-test: LABEL" line and ends with "gup-exit: RC".
write_runner() {
	cat <<'RUN'
#!/bin/sh
# Run GUP's and COW's mm selftests (vm/gup-tests.sh).
cd "$(dirname "$0")" || exit 1
quick=${1:-}
# Huge pages for the hugetlb cases of gup_test, gup_longterm, cow and
# uffd-unit-tests (two 32 MiB areas); the THP cases need THP on madvise.
echo 80 >/proc/sys/vm/nr_hugepages
echo madvise >/sys/kernel/mm/transparent_hugepage/enabled
grep -E 'HugePages_(Total|Free)' /proc/meminfo | sed 's/^/# /'
t() {
	label=$1; shift
	echo "# gup-test: $label"
	t0=$(date +%s)
	"$@" 2>&1
	echo "gup-exit: $? ($(($(date +%s) - t0)) s)"
}
# gup_test: -U get_user_pages, -b pin_user_pages, -L pin_user_pages
# FOLL_LONGTERM (the slow path, where follow_page_pte() batches); -u and
# -a the fast paths.  -w/-W write or not, -S a shared mapping of
# /dev/zero, -n pages per call (1: no batch; 123: runs cut in the middle
# of a page table; 512: whole page tables), -T no THP, -t THP, -H
# hugetlb, -m MiB.  -z leaves the pages to GUP to fault in; it sets
# gup_flags 0x2, which the test calls FOLL_TOUCH but which is FOLL_GET in
# 6.12: harmless for -U and -u, a WARNING (FOLL_PIN with FOLL_GET) and
# -EINVAL for -b, -L and -a, so -z goes with -U and -u only.
g() { t "gup_test $*" ./gup_test "$@"; }
if [ "$quick" = quick ]; then
	for cmd in -U -b -L; do
		for n in 1 123 512; do
			g -m 4 -T $cmd -w -n $n
		done
		g -m 4 -T $cmd -W -n 123
		g -m 4 -T $cmd -w -S -n 123
		g -m 4 -t $cmd -w -n 123
		g -m 4 -H $cmd -w -n 123
	done
	g -m 4 -T -z -U -w -n 512
	g -m 4 -T -z -U -W -n 123
	g -m 4 -T -u -w -n 512
	g -m 4 -T -a -w -n 512
else
	for cmd in -U -b -L -u -a; do
		for w in -w -W; do
			for s in "" -S; do
				for n in 1 123 512; do
					g -m 8 -T $cmd $w $s -n $n
				done
			done
			for n in 123 512; do
				g -m 8 -t $cmd $w -n $n
				g -m 8 -H $cmd $w -n $n
			done
			case $cmd in -U|-u)
				g -m 8 -T -z $cmd $w -n 512
				g -m 8 -T -z $cmd $w -S -n 123 ;;
			esac
		done
	done
	g -m 16 -T -b -w -n 1024 -r 4
fi
# Dump pages 0, 19 and 4096 with pin_user_pages (run_vmtests.sh's case).
t "gup_test -ct -F 0x1 0 19 0x1000" ./gup_test -ct -F 0x1 0 19 0x1000
t "gup_test -ct -p 0 19 0x1000" ./gup_test -ct -p 0 19 0x1000
t gup_longterm ./gup_longterm
t cow ./cow
if [ "$quick" = quick ]; then
	# The uffd-wp cases with fork and a GUP pin (wp-fork, wp-fork-pin and
	# their -with-event variants, every memory type); the whole program
	# takes 3 to 5 minutes under TCG.
	t "uffd-unit-tests -f wp-fork" ./uffd-unit-tests -f wp-fork
else
	t uffd-unit-tests ./uffd-unit-tests
	t ksm_functional_tests ./ksm_functional_tests
fi
t mkdirty ./mkdirty
t gup_cow_write ./gup_cow_write
t madv_populate ./madv_populate
# Every FOLL_PIN taken has been released once the programs are gone
# (the per-CPU parts of the counters folded in first, as cma_pins.h does).
echo 1 >/proc/sys/vm/stat_refresh
a=$(sed -n 's/^nr_foll_pin_acquired //p' /proc/vmstat)
r=$(sed -n 's/^nr_foll_pin_released //p' /proc/vmstat)
echo "# gup-test: pin-balance"
echo "# nr_foll_pin_acquired $a, nr_foll_pin_released $r"
if [ -n "$a" ] && [ "$a" = "$r" ]; then echo "ok 1 FOLL_PIN balance"; else echo "not ok 1 FOLL_PIN balance"; fi
echo "gup-exit: 0"
exit 0
RUN
}

# results LOG: one line per case, "LABEL | CASE<TAB>RESULT" with RESULT
# ok, FAIL or SKIP, from the runner's output.
results() {
	awk '
	function emit(name, res) { printf "%s | %s\t%s\n", label, name, res }
	/^# gup-test: / { label = substr($0, 13); run = ""; pending = ""; next }
	/^# \[RUN\] / { run = substr($0, 9); next }
	# gup_test reports a short pin as "# Truncated (size: BYTES)" and still
	# passes: a case of its own here (one page too many shows like this).
	/^# Truncated \(size: / { trunc = $4; sub(/\)$/, "", trunc); next }
	/^gup-exit: / {
		if (pending != "") emit(pending, "LOST")
		pending = ""
		if (label ~ /^gup_test /)
			emit("every page of the area pinned", trunc == "" ? "ok" : "FAIL (" trunc " bytes)")
		trunc = ""
		emit("exit status", $2 == 0 ? "ok" : "exit " $2)
		next
	}
	# uffd-unit-tests: "Testing NAME... done | failed [..] | skipped [..]",
	# the verdict sometimes on a later line.
	/^Testing / {
		if (pending != "") emit(pending, "LOST")
		i = index($0, "... ")
		pending = substr($0, 9, i - 9)
		rest = substr($0, i + 4)
		$0 = rest
	}
	pending != "" && /(^|[^a-z])done$/ { emit(pending, "ok"); pending = ""; next }
	pending != "" && /failed \[reason/ { emit(pending, "FAIL"); pending = ""; next }
	pending != "" && /skipped \[reason/ { emit(pending, "SKIP"); pending = ""; next }
	/^(not )?ok [0-9]+/ {
		res = ($1 == "not") ? "FAIL" : "ok"
		n = ($1 == "not") ? $3 : $2
		desc = $0
		sub(/^(not )?ok [0-9]+ ?/, "", desc)
		if (desc ~ /# SKIP/) { res = "SKIP"; sub(/ *# SKIP.*/, "", desc) }
		if (run != "") desc = run (desc != "" ? " (" desc ")" : "")
		emit(sprintf("%03d %s", n, desc), res)
		run = ""
	}' "$1"
}

run_kernel() {
	local kind=$1 args=""
	[ "$quick" = 1 ] && args=quick
	if [[ " ${GUP_REUSE:-} " == *" $kind "* ]] && [ -s "$OUT/$kind.results" ]; then
		echo "$kind: results of the last run reused (GUP_REUSE)"
		return 0
	fi
	if [ "$kind" = stock ]; then
		"$ROOT/vm/build.sh" stock >/dev/null || return 1
	fi
	[ -f "$B/obj-$kind/arch/x86/boot/bzImage" ] || die "gup-tests: no $kind kernel (make kernel)"
	# Stock 6.12 is the reference and seldom changes: its results are kept
	# for the same kernel image, selftests and matrix (a run without a
	# failed case only).
	local key=
	if [ "$kind" = stock ]; then
		key=$( (sha1sum <"$B/obj-$kind/arch/x86/boot/bzImage"; cat "$ADD/mm/.key"; echo "$args") |
			sha1sum | cut -c1-16)
		if [ "$(cat "$OUT/$kind.key" 2>/dev/null)" = "$key" ] && [ -s "$OUT/$kind.results" ]; then
			echo "$kind: results kept from the last run of the same kernel and tests"
			return 0
		fi
		rm -f "$OUT/$kind.key"
	fi
	stage "gup-tests: $kind kernel"
	local t0 rc=0
	t0=$(date +%s)
	"$ROOT/vm/run" --kernel "$kind" --mem 2G --timeout "${GUP_TIMEOUT:-1800}" \
		--add "$ADD" -- /mm/run-gup-tests $args >"$OUT/$kind.log" 2>&1 || rc=$?
	results "$OUT/$kind.log" >"$OUT/$kind.results"
	# Kept only if every case passed or skipped: a flaky failure of the
	# reference must be run again, not compared against for good.
	[ -z "$key" ] || [ $rc != 0 ] || grep -qv $'\t\(ok\|SKIP\)$' "$OUT/$kind.results" ||
		echo "$key" >"$OUT/$kind.key"
	printf '%s: VM run %s in %ss, %d cases: %d ok, %d failed, %d skipped\n' "$kind" \
		"$([ $rc = 0 ] && echo passed || echo "FAILED (exit $rc)")" $(($(date +%s) - t0)) \
		"$(wc -l <"$OUT/$kind.results")" "$(grep -c $'\tok$' "$OUT/$kind.results")" \
		"$(grep -vc $'\t\\(ok\\|SKIP\\)$' "$OUT/$kind.results")" "$(grep -c $'\tSKIP$' "$OUT/$kind.results")"
	[ $rc = 0 ] || { tail -n 20 "$OUT/$kind.log"; return 1; }
}

mkdir -p "$OUT"
build
# The quick and the full runs keep their results apart.
OUT=$OUT/$([ "$quick" = 1 ] && echo quick || echo full)
mkdir -p "$OUT"
[ "$build_only" = 0 ] || exit 0
bad=0
for k in $kernels; do
	run_kernel "$k" || bad=1
done

# Per program: cases ok/failed/skipped on each kernel.
set -- $kernels
printf '\n%-28s' program
for k in "$@"; do printf ' %-19s' "$k ok/fail/skip, s"; done
echo
for p in $PROGS $OWN pin-balance; do
	printf '%-28s' "$p"
	for k in "$@"; do
		awk -F'\t' -v p="$p" 'index($1, p) == 1 && $1 !~ / \| exit status$/ {
			n++; if ($2 == "ok") o++; else if ($2 == "SKIP") s++; else f++ }
			END { printf " %-13s", (o + 0) "/" (f + 0) "/" (s + 0) }' "$OUT/$k.results"
		# Seconds in the VM (TCG), from the runner's "gup-exit: RC (N s)".
		awk -v p="$p" '/^# gup-test: / { on = index(substr($0, 13), p) == 1 }
			on && /^gup-exit: / { sub(/^\(/, "", $3); t += $3 }
			END { printf " %4ss", t + 0 }' "$OUT/$k.log"
	done
	echo
done

if [ $# -ge 2 ]; then
	echo
	# The same cases with the same results, line for line.
	if diff -u "$OUT/$2.results" "$OUT/$1.results" >"$OUT/diff"; then
		echo "gup-tests: $1 and $2 agree on all $(wc -l <"$OUT/$1.results") cases"
	else
		echo "gup-tests: $1 and $2 DIFFER ('-' $2, '+' $1):"
		grep '^[-+][^-+]' "$OUT/diff" | head -n 40
		bad=1
	fi
	if grep -v $'\t\\(ok\\|SKIP\\)$' "$OUT/$1.results" >"$OUT/failing"; then
		echo "gup-tests: failing on $1 (a failure on both kernels was there before us):"
		while IFS= read -r l; do
			if grep -qxF "$l" "$OUT/$2.results"; then
				echo "  on both:  $l"
			else
				echo "  $1 only: $l"
			fi
		done <"$OUT/failing"
	fi
fi
[ $bad = 0 ]
