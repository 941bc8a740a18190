#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make run: the main job for a newcomer.  Build the base tree, the series
# and the kernel; boot it; run the demo and a short benchmark; summarise.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
T0=$(date +%s)

"$ROOT/vm/base.sh"
"$ROOT/vm/series.sh" apply
stage "building the patched kernel (first time: several minutes; ccache makes rebuilds fast)"
"$ROOT/vm/build.sh" patched >/dev/null
"$ROOT/vm/userspace.sh" selftests demo bench

stage "booting the patched kernel in QEMU: demo, then a short benchmark"
"$ROOT/vm/run" --timeout 900 --add "$B/add/demo" --add "$B/add/bench" -- \
	sh -c '/demo/run-demo && echo && /bench/cmabench --quick' |
	sed -u 's#cmabench: round [0-9]*/[0-9]*, [0-9]* cells measured *##g' | tee "$B/run-main.log"

cat <<SUMMARY

==== summary ====
kernel:   $B/obj-patched/arch/x86/boot/bzImage (the series in series/ on Debian linux-source-6.12)
series:   $(ls "$ROOT"/series/*.patch | wc -l) files in series/ (cover letter + patches)
demo:     $(grep -q 'demo: OK' "$B/run-main.log" && echo "OK: two processes exchanged data with process_vm_readv/writev" || echo FAILED)
bench:    the table above was measured inside QEMU (TCG emulation): only ratios
          between transports in the same run mean anything, not absolute MB/s.
time:     $(($(date +%s) - T0)) s
next:     make check (all tests), vm/run -- CMD (run anything in the VM), make vm-shell
SUMMARY
grep -q 'demo: OK' "$B/run-main.log"
