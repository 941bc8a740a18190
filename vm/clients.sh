#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make clients: real programs that use process_vm_readv/writev, run on the
# host's own userland (vm/run --hostfs) against our kernel and against
# stock 6.12: strace, Open MPI (vader single copy cma and none), UCX
# (ucx_perftest over cma, and Open MPI's UCX PML), each a pass/fail line;
# then hpcc (the 2010 RFC's benchmark) CMA against Base on both kernels,
# a table, not a test (its runs must complete).  Ends with "N passed, N
# failed" and exits non-zero on any failure.
#   vm/clients.sh [--no-hpcc | --hpcc-only | --quick] [--kernels "patched stock"]
# --quick (make check's stage): strace and Open MPI with 2 ranks, on our
# kernel only, no hpcc, and the kernel as built (make check's kernel stage).
# hpcc's VM runs by default on QEMU's -icount shift=HPCC_ICOUNT,sleep=off
# (HPCC_ICOUNT 0): one vCPU thread (HPCC_SMP 1), and the guest's clock
# counts guest instructions (2^SHIFT ns each) instead of host time, so
# that hpcc's figures do not depend on the host's load and repeat from
# boot to boot (within 0.3 %); HPCC_RUNS (1) runs per mechanism and kernel.
# HPCC_ICOUNT= (empty) keeps host time instead, with HPCC_SMP 2 and
# HPCC_RUNS 3 by default.  HPCC_NP (2) ranks.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kernels="patched stock" pf=1 hpcc=1 which="" build=1
while [ $# -gt 0 ]; do
	case $1 in
	--no-hpcc) hpcc=0; shift ;;
	--hpcc-only) pf=0; shift ;;
	--quick) hpcc=0 which="strace mpi2" kernels=patched build=0; shift ;;
	--kernels) kernels=$2; shift 2 ;;
	*) die "vm/clients.sh: unknown option '$1'" ;;
	esac
done
icount=${HPCC_ICOUNT-0} np=${HPCC_NP:-2} hqemu=${VM_QEMU_ARGS:-}
if [ -n "$icount" ]; then
	runs=${HPCC_RUNS:-1} hsmp=${HPCC_SMP:-1}
	hqemu="$hqemu -icount shift=$icount,sleep=off"
	# A pair of runs took 25 minutes at load 4, 33 at load 5-10.
	htimeout=$((3600 * runs))
else
	runs=${HPCC_RUNS:-3} hsmp=${HPCC_SMP:-2}
	htimeout=$((3000 * runs))
fi
need strace openmpi-bin libopenmpi-dev hpcc ucx-utils qemu-system-x86
out=$B/clients
bin=$out/bin
mkdir -p "$bin"
mpicc -O2 -Wall -Wextra -Werror -o "$bin/mpi-verify" "$ROOT/clients/mpi-verify.c" || die "clients: mpi-verify does not build"
gcc -O2 -Wall -Wextra -Werror -o "$bin/strace-target" "$ROOT/clients/strace-target.c" || die "clients: strace-target does not build"
cp "$ROOT/clients/hpccinf.txt" "$out/hpccinf.txt"

PASS=0 FAIL=0
line() { # PASS|FAIL NAME DETAIL
	printf '%s %-26s %s\n' "$1" "$2" "$3"
	if [ "$1" = PASS ]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi
}

for k in $kernels; do
	if [ "$build" = 1 ]; then
		"$ROOT/vm/build.sh" "$k" >/dev/null || { line FAIL "kernel ($k)" "vm/build.sh $k failed"; continue; }
	fi
	if [ "$pf" = 1 ]; then
		log=$out/$k.log
		t0=$(date +%s)
		# shellcheck disable=SC2086 # $which: client names, split
		"$ROOT/vm/run" --hostfs --kernel "$k" --timeout 1200 -- "$ROOT/clients/in-vm.sh" "$bin" $which >"$log" 2>&1
		rc=$?
		stage "clients ($k): VM $(($(date +%s) - t0))s, log $log"
		n=0
		while read -r _ res name detail; do
			line "$res" "${name%:} ($k)" "$detail"
			n=$((n + 1))
		done < <(grep -E '^CLIENT (PASS|FAIL) ' "$log")
		[ "$n" -gt 0 ] || line FAIL "clients ($k)" "no client reported (log: $log)"
		[ "$rc" -eq 0 ] || line FAIL "vm ($k)" "$(grep -E '^FAIL' "$log" | tail -n 1) (exit $rc, log: $log)"
	fi
	if [ "$hpcc" = 1 ]; then
		log=$out/hpcc-$k.log
		t0=$(date +%s)
		VM_QEMU_ARGS=$hqemu "$ROOT/vm/run" --hostfs --kernel "$k" --smp "$hsmp" --timeout "$htimeout" -- \
			"$ROOT/clients/hpcc-in-vm.sh" "$out/hpccinf.txt" "$runs" "$np" >"$log" 2>&1
		rc=$?
		stage "hpcc ($k): VM $(($(date +%s) - t0))s, log $log"
		if [ "$rc" -eq 0 ] && [ "$(grep -c '^HPCC [a-z]* [0-9]* Nat' "$log")" -eq $((2 * runs)) ]; then
			line PASS "hpcc ($k)" "$((2 * runs)) runs completed ($runs cma, $runs none, $np ranks)"
		else
			line FAIL "hpcc ($k)" "$(grep -E 'FAILED|^FAIL' "$log" | tail -n 1) (exit $rc, log: $log)"
		fi
	fi
done

if [ "$hpcc" = 1 ]; then
	echo
	# shellcheck disable=SC2086 # $kernels: kernel names, split
	"$ROOT/clients/hpcc-table.sh" "$out" $kernels
fi
echo
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
