#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# debug-tests.sh SECONDS [ITERATIONS [ABIS]]: the test run of make
# check-debug, inside the debug VM (busybox sh).  Expects the static selftests under /cma/<abi>/ and
# /cma/run-tests.  Stages:
#   1. the selftests, every ABI;
#   2. cma_fuzz with a fixed seed, ITERATIONS per ABI (default 40000, and
#      ITERATIONS/20 with --shapes: structured vectors over large arenas; a
#      seed and a count replay exactly), pins checked;
#   3. cma_fuzz --faults with failslab, fail_page_alloc and fail_usercopy
#      (task-filter: only tasks with make-it-fail; the fuzzer sets its own
#      make-it-fail around the calls under test), SECONDS per ABI;
#   4. cma_churn for every ABI at once for SECONDS, THP advised and
#      khugepaged scanning fast; then the pin counters of /proc/vmstat must
#      balance and no process may be left over;
#   5. kmemleak: two scans, nothing may be reported.
# Prints TAP-like ok/not ok lines; exits 1 if any failed.
#   DEBUG_SEED=N        base fuzzer seed (default 20100915); ABI k of ABIS
#                       (from 0) runs with seed 3N + k, as make check's
#                       vm-fuzz does, so that the ABIs do not repeat one
#                       sequence; the seeds are printed
#   DEBUG_FAIL_PROB=P   fault injection probability in percent (default 5)

secs=${1:-20}
iters=${2:-40000}
case $secs$iters in
''|*[!0-9]*) echo "usage: $0 SECONDS [ITERATIONS [ABIS [SKIP]]]" >&2; exit 2 ;;
esac
[ "$secs" -ge 1 ] || secs=1
seed=${DEBUG_SEED:-20100915}
prob=${DEBUG_FAIL_PROB:-5}
abis=
for a in ${3:-x86_64 i386 x32}; do
	[ -x "/cma/$a/cma_fuzz" ] && abis="$abis $a"
done
# SKIP: selftest names left out of stage 1 (make check's short budget
# leaves out size_64m, which the normal VM runs for every ABI).
export CMA_SELFTEST_ARGS=
for t in $(echo "${4:-}" | tr ',' ' '); do
	CMA_SELFTEST_ARGS="$CMA_SELFTEST_ARGS -T $t"
done
dbg=/sys/kernel/debug
thp=/sys/kernel/mm/transparent_hugepage
# Every step is bounded: a hang fails the step, not the whole VM.
limit=$((secs * 3 + 120))
n=0
failed=0
t0=$(date +%s)

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }
stage() { echo "=== debug-tests [$(($(date +%s) - t0)) s]: $*"; }
# check NAME CMD...: run CMD with a time limit, one ok/not ok line for it.
check() {
	name=$1
	shift
	timeout "$limit" "$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$name"
	else
		not_ok "$name (exit status $rc)"
	fi
}
# put VALUE FILE: write a knob, failing the stage's step if it cannot.
put() {
	echo "$1" >"$2" 2>/dev/null && return 0
	echo "# cannot write '$1' to $2"
	return 1
}
pins() {
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	awk '$1 == "nr_foll_pin_acquired" { a = $2 } $1 == "nr_foll_pin_released" { r = $2 }
	     END { if (a == "" || r == "") exit 1; print a, r }' /proc/vmstat
}

stage "start: $iters fuzz iterations and ${secs} s per phase, ABIs:$abis, base seed $seed, $(uname -r)"
[ -n "$abis" ] || { not_ok "no /cma/<abi>/cma_fuzz found"; exit 1; }
grep -qs debugfs /proc/mounts || mount -t debugfs debugfs $dbg 2>/dev/null
if [ -e $dbg/kmemleak ]; then
	# Suspects from before the tests (boot) are shown, then cleared, so
	# that stage 5 reports only what these tests leaked.  The boot took
	# longer than kmemleak's minimum age of 5 s: no need to wait for it.
	echo scan >$dbg/kmemleak
	boot=$(grep -c '^unreferenced object' $dbg/kmemleak)
	echo "# kmemleak: $boot suspect(s) from boot, cleared before the tests"
	sed 's/^/# boot: /' $dbg/kmemleak | head -40
	echo clear >$dbg/kmemleak
fi

stage "1: selftests"
# Their time does not scale with SECONDS (x86_64 in make check's 1-CPU
# debug VM: 36 s on a quiet host, over 129 s on a busy one): a bound of
# their own, which still turns a hang into a failure.
save=$limit
limit=900
check "selftests:$abis" /cma/run-tests $abis
limit=$save

# abi_seed K: the fuzzer seed of the K-th ABI (from 0).
abi_seed() {
	echo $((seed * 3 + $1))
}

stage "2: fuzzer, base seed $seed, $iters iterations per ABI"
save=$limit
limit=$((iters / 100 + 300))
k=0
for a in $abis; do
	s=$(abi_seed $k)
	k=$((k + 1))
	check "cma_fuzz $a --seed $s --iterations $iters" /cma/$a/cma_fuzz \
		--seed "$s" --seconds 100000 --iterations "$iters" --check-pins
	# Structured remote vectors over 2048-page arenas (strides, sparse
	# shuffles, far/near mixes): where the window choice is weakest.
	check "cma_fuzz $a --shapes --seed $s --iterations $((iters / 20 + 1))" /cma/$a/cma_fuzz \
		--shapes --seed "$s" --seconds 100000 --iterations $((iters / 20 + 1)) --check-pins
done
limit=$save

stage "3: fuzzer under fault injection ($prob %)"
fi_ok=1
for f in failslab fail_page_alloc fail_usercopy; do
	d=$dbg/$f
	if [ ! -d $d ]; then
		echo "# no $d"
		fi_ok=0
		continue
	fi
	put 0 $d/probability || fi_ok=0
	put Y $d/task-filter || fi_ok=0
	put 1 $d/interval || fi_ok=0
	put -1 $d/times || fi_ok=0
	put 0 $d/space || fi_ok=0
	put 0 $d/verbose || fi_ok=0
done
# Sleeping and highmem (user page) allocations, order 0 too.
put N $dbg/failslab/ignore-gfp-wait || fi_ok=0
put N $dbg/fail_page_alloc/ignore-gfp-wait || fi_ok=0
put N $dbg/fail_page_alloc/ignore-gfp-highmem || fi_ok=0
put 0 $dbg/fail_page_alloc/min-order || fi_ok=0
if [ "$fi_ok" = 1 ] && [ -e /proc/self/make-it-fail ]; then
	for f in failslab fail_page_alloc fail_usercopy; do
		put "$prob" $dbg/$f/probability || fi_ok=0
	done
	# No "echo 1 >/proc/self/make-it-fail" here: exec and the fuzzer's
	# start would fail most of the time.  The fuzzer sets its own flag
	# around each call under test; with task-filter Y nothing else fails.
	k=0
	for a in $abis; do
		s=$(abi_seed $k)
		k=$((k + 1))
		check "cma_fuzz $a --faults --seed $s" /cma/$a/cma_fuzz --faults \
			--seed "$s" --seconds "$secs" --iterations 100000000 --check-pins
	done
	for f in failslab fail_page_alloc fail_usercopy; do
		echo "# $f: $(cat $dbg/$f/times 2>/dev/null) times left (-1: no limit)"
	done
else
	not_ok "fault injection: knobs missing (CONFIG_FAULT_INJECTION_DEBUG_FS, FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_USERCOPY?)"
fi
for f in failslab fail_page_alloc fail_usercopy; do
	[ -d $dbg/$f ] && echo 0 >$dbg/$f/probability
done
ok "fault injection disabled"

# Without THP (the PREEMPT_RT kernel) each target faults its 8 MiB in
# 4 KiB pages: under TCG, KASAN and lockdep a 3 s churn made no call at all
# (one CPU), so the churn runs 15 s at least there.
csecs=$secs
[ -d $thp ] || [ "$csecs" -ge 15 ] || csecs=15
stage "4: churn for $csecs s: all ABIs at once, THP, khugepaged"
thp_saved=
if [ -d $thp ]; then
	thp_saved="$(sed 's/.*\[\(.*\)\].*/\1/' $thp/enabled) $(cat $thp/khugepaged/scan_sleep_millisecs) $(cat $thp/khugepaged/alloc_sleep_millisecs)"
	put madvise $thp/enabled
	put 10 $thp/khugepaged/scan_sleep_millisecs
	put 10 $thp/khugepaged/alloc_sleep_millisecs
	put 4096 $thp/khugepaged/pages_to_scan
	echo "# THP: enabled=madvise, khugepaged scanning every 10 ms (was: $thp_saved)"
else
	echo "# no $thp: no THP in this kernel"
fi
before=$(pins) || before=
pids=
for a in $abis; do
	timeout "$limit" /cma/$a/cma_churn --seconds "$csecs" --readers 2 --writers 2 \
		>/tmp/churn-$a.log 2>&1 &
	pids="$pids $!"
done
i=0
for a in $abis; do
	i=$((i + 1))
	pid=$(echo $pids | cut -d' ' -f$i)
	wait "$pid"
	rc=$?
	cat /tmp/churn-$a.log
	if [ "$rc" -eq 0 ]; then
		ok "cma_churn $a"
	else
		not_ok "cma_churn $a (exit status $rc)"
	fi
done
if [ -d $thp ]; then
	set -- $thp_saved
	put "$1" $thp/enabled
	put "$2" $thp/khugepaged/scan_sleep_millisecs
	put "$3" $thp/khugepaged/alloc_sleep_millisecs
fi
if [ -n "$(grep -l '^State:.*[ZX]' /proc/[0-9]*/status 2>/dev/null)" ] ||
   [ -n "$(grep -lsx 'cma_churn\|cma_fuzz' /proc/[0-9]*/comm)" ]; then
	ps
	not_ok "processes left over after the churn"
else
	ok "no process left over"
fi
# Pins are released on the last unpin: nothing pins now, so the
# counters must be equal (and must have moved during the churn).
after=$(pins)
if [ -z "$after" ]; then
	not_ok "pin balance: no nr_foll_pin_* in /proc/vmstat"
else
	set -- $after
	echo "# nr_foll_pin_acquired $1, nr_foll_pin_released $2 (before the churn: ${before:-?})"
	if [ "$1" = "$2" ]; then
		ok "pin balance: acquired == released"
	else
		not_ok "pin balance: $(($1 - $2)) pins not released"
	fi
fi

stage "5: kmemleak"
if [ -e $dbg/kmemleak ]; then
	# Objects younger than 5 s are not reported: wait, scan twice.
	sleep 6
	echo scan >$dbg/kmemleak
	sleep 1
	echo scan >$dbg/kmemleak
	leaks=$(cat $dbg/kmemleak)
	if [ -z "$leaks" ]; then
		ok "kmemleak: nothing reported"
	else
		printf '%s\n' "$leaks"
		not_ok "kmemleak: $(printf '%s\n' "$leaks" | grep -c '^unreferenced object') suspected leak(s)"
	fi
else
	not_ok "kmemleak: no $dbg/kmemleak (CONFIG_DEBUG_KMEMLEAK?)"
fi

stage "done: $n checks, $failed failed, $(($(date +%s) - t0)) s"
echo "1..$n"
[ "$failed" -eq 0 ]
