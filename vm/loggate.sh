#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/loggate.sh LOG: fail if a VM console log holds a kernel report: a
# WARNING, BUG, Oops, KASAN, UBSAN, KFENCE, lockdep or kmemleak report, a
# hung task or a panic.  A sleep in atomic context is a BUG ("BUG: sleeping
# function called from invalid context", "BUG: scheduling while atomic",
# lockdep's "[ BUG: Invalid wait context ]"), as every lockdep report is a
# BUG or a WARNING line.  Only kernel lines are looked at: the dmesg dump
# between the markers, console lines that carry a printk timestamp, and
# console lines that start as a report's first line starts.
set -euo pipefail
log=${1:?usage: vm/loggate.sh LOG}
pat='WARNING:|BUG:|BUG |Oops|KASAN|UBSAN|KFENCE|kernel BUG|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|lockdep is turned off|DEBUG_LOCKS_WARN_ON|lock held when returning|unreferenced object|Kernel panic|blocked for more than|Call Trace:'
# How a report begins, for console lines without a timestamp (each also
# matches $pat, which picks the reports from the lines collected).
start='BUG: |Oops: |kernel BUG at |Kernel panic - not syncing|WARNING: CPU: '
kernel_lines() {
	sed -n '/^CMA-VM-DMESG-BEGIN$/,/^CMA-VM-DMESG-END$/p' "$log"
	grep -E '^\[ *[0-9]+\.[0-9]+\]' "$log" || true
	# kmemleak's report is printed by /init just before the dmesg dump.
	grep -E '^unreferenced object' "$log" || true
	# A kernel that is dying may print its report without a timestamp
	# (an Oops on an overrun stack did), and never reach the dmesg dump:
	# lines that start as a report starts count too.
	grep -E "^($start)" "$log" || true
}
hits=$(kernel_lines | grep -E "$pat" | grep -v 'lockdep: fixing up alternatives' | sort -u | head -20 || true)
if [ -n "$hits" ]; then
	printf '%s\n' "$hits" >&2
	echo "FAIL: log gate: the kernel reported a problem in $log" >&2
	exit 1
fi
