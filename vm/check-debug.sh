#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the patched kernel with vm/debug.fragment (KASAN,
# KFENCE, UBSAN, lockdep, DEBUG_VM, DEBUG_PAGEALLOC, KMEMLEAK,
# HARDENED_USERCOPY, fault injection), booted with the selftests, the fuzzer (also under fault
# injection), a stress phase and a kmemleak scan (vm/debug-tests.sh); then
# the same on the PREEMPT_RT build of it (vm/debug-rt.fragment: no THP),
# where a lock taken with interrupts or preemption off sleeps, and
# DEBUG_ATOMIC_SLEEP and lockdep report it.  The log gate fails a phase on
# any kernel report; vm/tapcheck.sh checks its selftests case by case
# (skips allowed by vm/skips/vm, and vm/skips/rt for the RT kernel).
#   DEBUG_KERNELS="..." the phases, in order (default: debug debug-rt)
#   DEBUG_SECONDS=N     fault-injection fuzz and churn budget per phase and
#                       ABI (default 60)
#   DEBUG_ITERATIONS=N  plain fuzzer iterations per ABI (default 40000)
#   DEBUG_ABIS="..."    ABIs to test (default: x86_64 i386 x32 on debug,
#                       x86_64 i386 on debug-rt)
#   DEBUG_BUILT=1       the debug kernels are built already (make check)
#   DEBUG_SKIP=a,b      selftests to leave out (default: cma_disk's, which
#                       need a block device that the debug kernels do not
#                       have; make check: size_64m too; empty: none)
#   DEBUG_SMP=N         VM CPUs (default 2; make check: 1)
#   DEBUG_MEM=M         VM memory (default 3G; make check: 1G, which
#                       makes the boot and the kmemleak scans shorter)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

secs=${DEBUG_SECONDS:-60}
iters=${DEBUG_ITERATIONS:-40000}
skip=${DEBUG_SKIP-writeback,read_page_cache_miss,writeback_while_pinned,page_cache_miss}
kinds=${DEBUG_KERNELS:-debug debug-rt}
[ -d "$B/tree" ] || "$ROOT/vm/series.sh" apply
if [ "${DEBUG_BUILT:-0}" != 1 ]; then
	for kind in $kinds; do "$ROOT/vm/build.sh" "$kind" >/dev/null; done
fi
[ -x "$B/add/selftests/cma/run-tests" ] || "$ROOT/vm/userspace.sh" selftests
add=$B/add/debug
rm -rf "$add"
mkdir -p "$add"
cp "$ROOT/vm/debug-tests.sh" "$add/debug-tests.sh"
chmod +x "$add/debug-tests.sh"
# Every phase runs, whichever failed before it.
failed=
for kind in $kinds; do
	case $kind in
	debug) env=vm abis=${DEBUG_ABIS:-x86_64 i386 x32} ;;
	debug-rt) env=rt abis=${DEBUG_ABIS:-x86_64 i386} ;;
	*) die "check-debug: unknown kernel '$kind' (debug, debug-rt)" ;;
	esac
	stage "check-debug: $kind kernel, ABIs $abis"
	log=$B/check-debug-$kind.log
	"$ROOT/vm/run" --kernel "$kind" --smp "${DEBUG_SMP:-2}" --mem "${DEBUG_MEM:-3G}" --timeout 3000 \
		--add "$B/add/selftests" --add "$add" -- \
		/debug-tests.sh "$secs" "$iters" "$abis" "$skip" | tee "$log" ||
		failed="$failed $kind"
	CMA_SELFTEST_SRC=$B/tree/tools/testing/selftests/cma "$ROOT/vm/tapcheck.sh" "$env" "$log" "$abis" \
		"$(echo "$skip" | tr ',' ' ')" || failed="$failed $kind(tapcheck)"
done
[ -z "$failed" ] || die "check-debug: failed:$failed (logs: $B/check-debug-KERNEL.log)"
stage "check-debug: $kinds passed"
