#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the patched kernel with vm/debug.fragment (KASAN,
# KFENCE, UBSAN, lockdep, DEBUG_VM, DEBUG_PAGEALLOC, KMEMLEAK,
# HARDENED_USERCOPY, fault injection), booted with the selftests, the fuzzer (also under fault
# injection), a stress phase and a kmemleak scan (vm/debug-tests.sh).  The
# log gate fails the run on any kernel report.
#   DEBUG_SECONDS=N     fault-injection fuzz and churn budget per phase and
#                       ABI (default 60)
#   DEBUG_ITERATIONS=N  plain fuzzer iterations per ABI (default 40000)
#   DEBUG_ABIS="..."    ABIs to test (default: x86_64 i386 x32)
#   DEBUG_BUILT=1       the debug kernel is built already (make check)
#   DEBUG_SKIP=a,b      selftests to leave out (make check: size_64m)
#   DEBUG_SMP=N         VM CPUs (default 2; make check: 1)
#   DEBUG_MEM=M         VM memory (default 3G; make check: 1G, which
#                       makes the boot and the kmemleak scans shorter)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

secs=${DEBUG_SECONDS:-60}
iters=${DEBUG_ITERATIONS:-40000}
abis=${DEBUG_ABIS:-x86_64 i386 x32}
[ -d "$B/tree" ] || "$ROOT/vm/series.sh" apply
[ "${DEBUG_BUILT:-0}" = 1 ] || "$ROOT/vm/build.sh" debug >/dev/null
[ -x "$B/add/selftests/cma/run-tests" ] || "$ROOT/vm/userspace.sh" selftests
add=$B/add/debug
rm -rf "$add"
mkdir -p "$add"
cp "$ROOT/vm/debug-tests.sh" "$add/debug-tests.sh"
chmod +x "$add/debug-tests.sh"
"$ROOT/vm/run" --kernel debug --smp "${DEBUG_SMP:-2}" --mem "${DEBUG_MEM:-3G}" --timeout 3000 --add "$B/add/selftests" --add "$add" -- \
	/debug-tests.sh "$secs" "$iters" "$abis" "${DEBUG_SKIP:-}"
