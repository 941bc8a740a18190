# SPDX-License-Identifier: GPL-2.0
#
# Cross Memory Attach: the series, its test VM and its benchmarks.
#   make run      build everything, boot the VM, run the demo and a short bench
#   make check    all tests: series checks, builds, kselftests in the VM and
#                 natively, the log gate; ends with "N passed, N failed"
#   make check-fresh  make run and make check in a fresh Debian 12 root
#   make clients  strace, Open MPI, UCX and hpcc on our kernel and stock 6.12
#   make clients-check  the same without hpcc: the pass/fail lines only
#   make mutants  the kernel broken on purpose (vm/mutants/): each caught?
# Build output goes to build/ (override with BUILD=dir).

BUILD ?= $(CURDIR)/build
export BUILD

.PHONY: all run check deps base series series-check series-apply kernel \
	kernel-stock selftests demo vm-shell bench bench-vm bench-uml bench-ab bench-ab-uml icount uml-profile \
	check-debug check-uml check-fresh check-gup clients clients-check clients-hpcc \
	mutants clean help

all: kernel

help:
	@sed -n '3,11p' Makefile

deps:
	@vm/deps.sh

base: deps
	@vm/base.sh

series: base
	@vm/series.sh gen

series-check: base
	@vm/series.sh check

series-apply: base
	@vm/series.sh apply

kernel: series-apply
	@vm/build.sh patched >/dev/null

kernel-stock: base
	@vm/build.sh stock >/dev/null

selftests: series-apply
	@vm/userspace.sh selftests

demo: kernel
	@vm/userspace.sh demo
	@vm/run --add $(BUILD)/add/demo -- /demo/run-demo

vm-shell: kernel
	@vm/userspace.sh selftests demo
	@vm/run --shell --add $(BUILD)/add/selftests --add $(BUILD)/add/demo

run: deps
	@vm/run-main.sh

check: deps
	@vm/check.sh

# The README's two commands on a fresh machine: a Debian 12 minbase root
# with only git and make, a clone of HEAD (vm/check-fresh.sh).
check-fresh:
	@vm/check-fresh.sh

check-debug: deps series-apply
	@vm/check-debug.sh

# GUP's and COW's mm selftests on our kernel and stock 6.12, the full
# gup_test matrix (make check runs a shorter one: GUP_ARGS=--quick).
check-gup: deps series-apply
	@vm/gup-tests.sh $(GUP_ARGS)

check-uml: deps
	@STAGES="base series-am selftests-build uml-selftests uml-debug-selftests" vm/check.sh

# Each patch of vm/mutants/ applied to the built tree, its kernel rebuilt and
# the tests that must catch it run; then the clean kernels, which must pass
# them.  MUTANTS="a b": only those.  Not in make check (a build and a boot
# per mutant).
mutants: deps series-apply
	@vm/mutants.sh

# Real clients on the host's userland in the VM (vm/run --hostfs), on our
# kernel and on stock 6.12: pass/fail lines, then the hpcc table.
clients: deps series-apply
	@vm/clients.sh

# The pass/fail part alone (no hpcc): what make check-fresh can afford,
# e.g. FRESH_CMDS=clients-check vm/check-fresh.sh.
clients-check: deps series-apply
	@vm/clients.sh --no-hpcc

clients-hpcc: deps series-apply
	@vm/clients.sh --hpcc-only

bench-vm: deps
	@vm/bench-vm.sh

bench-uml: deps
	@vm/bench-vm.sh --uml

# Ours against mainline in one kernel, call for call (vm/ab-tree.sh).
bench-ab: deps
	@vm/bench-ab.sh

bench-ab-uml: deps
	@vm/bench-ab.sh --uml

# Guest instructions per call, ours against mainline (gdb single-steps).
# ICOUNT_SIZES=4K: one size (vm/icount.sh SIZES).
icount: deps
	@vm/icount.sh $(ICOUNT_SIZES)

# Where the A/B kernel's time goes under UML: host perf on the UML process.
uml-profile: deps
	@vm/uml-profile.sh

bench: deps
	@$(MAKE) -C bench bench O=$(BUILD)/bench-native

clean:
	rm -rf $(BUILD)
