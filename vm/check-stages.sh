# SPDX-License-Identifier: GPL-2.0
# The stages of make check, sourced by vm/check.sh.  Each st_NAME function
# is one stage: exit status 0 pass, 77 skip, anything else fail.

CHECK_STAGES="tools base series-sync series-am checkpatch kernel-doc bisect \
stock-am stock-checkpatch stock-kernel-doc stock-same-tree stock-bisect kernel w1-sparse \
cross-i386 cross-arm64 cross-arm64-64k docs man-page selftests-build vm-exit-status vm-add loggate demo vm-selftests \
vm-fuzz vm-glibc vm-clients vm-gup native-selftests debug-vm"
# Stages that run only when STAGES names them.
EXTRA_STAGES="uml-selftests uml-debug-selftests"
# Stages that start in the background once BG_AFTER is done, beside the
# others (the debug kernel builds and boots while the rest is checked).
BG_STAGES="debug-vm"
BG_AFTER="series-am"

# Every program the scripts run is in vm/tools.list, which vm/deps.sh
# installs, and the check fails when one is missing (its self-test hides
# patch, drops it from the list, adds a script calling an unknown tool).
st_tools() { "$ROOT/vm/tools-check.sh" --self-test; }
st_base() { "$ROOT/vm/base.sh"; }
st_series_sync() { "$ROOT/vm/series.sh" check; }
st_series_am() { "$ROOT/vm/series.sh" apply; }

# checkpatch --strict on every patch: 0 errors, 0 warnings, 0 checks.
# The patches are checked side by side, one checkpatch per CPU.  A verdict
# is kept per patch content (without its "From <sha>" line, which changes
# whenever an earlier patch does) and checkpatch version: after an edit
# only the patches that changed are checked again.
# Three checkpatch questions answered elsewhere: whether a Fixes: commit
# id exists (the Debian tree has no upstream history; the ids were looked
# up upstream); whether a patch that adds files needs a MAINTAINERS update
# (st_docs checks that get_maintainer.pl names our entry for every file
# the series adds); and whether a stable fix without Fixes: needs one (the
# liovcnt fix names the releases instead: its commit was not found).
export CHECKPATCH_IGNORE="--ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES,MISSING_FIXES_TAG"
checkpatch_clean() {
	grep -q '^total: 0 errors, 0 warnings, 0 checks' "$1" && ! grep -q 'Traceback' "$1"
}
st_checkpatch() { checkpatch_series series "$B/am" "$B/checkpatch"; }
st_stock_checkpatch() { checkpatch_series series-stock "$B/am-stock" "$B/checkpatch-stock"; }
# checkpatch_series FOLDER TREE OUT: the patches of FOLDER, with TREE's
# checkpatch.pl, reports in OUT.
checkpatch_series() {
	local folder=$1 tree=$2 out=$3 p t bad=0 cache=$B/checkpatch-cache ver todo=() key
	mkdir -p "$out" "$cache"
	rm -f "$out"/*.out
	ver=$( (cat "$tree/scripts/checkpatch.pl" "$tree/scripts/spelling.txt" "$tree/scripts/const_structs.checkpatch"; echo "$CHECKPATCH_IGNORE") | sha1sum | cut -c1-16)
	for p in $(ls "$ROOT/$folder"/0*.patch | grep -v '/0000-cover-letter.patch$'); do
		key=$( (echo "$ver"; sed 1d "$p") | sha1sum | cut -c1-16)
		if [ -f "$cache/$key" ]; then
			cp "$cache/$key" "$out/$(basename "$p").out"
		else
			todo+=("$p:$key")
		fi
	done
	# Debian's python3 (with python3-ply) for checkpatch's SPDX check.
	[ ${#todo[@]} -eq 0 ] || printf '%s\n' "${todo[@]}" |
		(cd "$tree" && PATH=/usr/bin:$PATH xargs -P "$JOBS" -I{} sh -c \
			'p=${1%:*}; perl scripts/checkpatch.pl --strict $CHECKPATCH_IGNORE "$p" >"$2/$(basename "$p").out" 2>&1' - {} "$out")
	for p in "$out"/*.out; do
		tail -n 3 "$p"
		checkpatch_clean "$p" || { cat "$p"; bad=1; }
	done
	# Keep the clean verdicts only: a finding is reported again every run.
	for t in "${todo[@]}"; do
		p=$out/$(basename "${t%:*}").out
		checkpatch_clean "$p" && cp "$p" "$cache/${t##*:}"
	done
	echo "checked now: ${#todo[@]} patch(es); the others unchanged since a clean check"
	[ "$(ls "$out" | wc -l)" = "$(ls "$ROOT/$folder"/0*.patch | grep -vc '/0000-cover-letter.patch$')" ] ||
		{ echo "checkpatch did not report on every patch"; return 1; }
	return $bad
}

# kernel-doc -Wall on every C file and header the series adds.
st_kernel_doc() {
	local files out
	files=$(cd "$B/am" && git diff --name-only --diff-filter=A cma-base HEAD -- '*.c' '*.h' |
		grep -v '^tools/')
	[ -n "$files" ] || { echo "no files"; return 1; }
	# shellcheck disable=SC2086
	out=$(cd "$B/am" && perl scripts/kernel-doc -Wall -none $files 2>&1)
	echo "checked: $files"
	[ -z "$out" ] || { echo "$out"; return 1; }
}

# kernel-doc -Wall on every C file and header that series-stock/ adds or
# changes (mainline's file, which it rewrites, is not kernel-doc clean
# before; so the check is of the final tree).  mm/gup.c and mm/internal.h,
# which it edits, have warnings of their own in stock: there the count may
# not grow.
st_stock_kernel_doc() {
	local files out f before after
	files=$(cd "$B/am-stock" && git diff --name-only --diff-filter=AM stock HEAD -- '*.c' '*.h' |
		grep -v '^tools/' | grep -vx -e 'mm/gup.c' -e 'mm/internal.h')
	[ -n "$files" ] || { echo "no files"; return 1; }
	# shellcheck disable=SC2086
	out=$(cd "$B/am-stock" && perl scripts/kernel-doc -Wall -none $files 2>&1)
	echo "checked: $files"
	[ -z "$out" ] || { echo "$out"; return 1; }
	for f in mm/gup.c mm/internal.h; do
		git -C "$B/am-stock" show "stock:$f" >"$B/kdoc-before.${f##*.}"
		before=$(cd "$B/am-stock" && perl scripts/kernel-doc -Wall -none "$B/kdoc-before.${f##*.}" 2>&1 | grep -c .)
		after=$(cd "$B/am-stock" && perl scripts/kernel-doc -Wall -none "$f" 2>&1 | grep -c .)
		echo "  kernel-doc $f: $before -> $after warning(s)"
		[ "$after" -le "$before" ] || return 1
	done
}

st_stock_am() { "$ROOT/vm/series.sh" apply-stock; }

# The two series end in the same kernel: the trees after series/ (onto
# cma-base) and after series-stock/ (onto stock) differ only in files
# that vm/base.sh edits to strip mainline's Cross Memory Attach (the
# syscall wiring, which series/ adds back and stock keeps as it is, in
# other words: Kconfig help, Makefile lines, declarations), never in the
# syscall tables or numbers, and never in our own file.  So the kernel that make check boots and tests
# is the one series-stock/ gives, but for those lines.
st_stock_same_tree() {
	local a b stripped diff f bad=0
	a=$(git -C "$B/am" rev-parse HEAD) b=$(git -C "$B/am-stock" rev-parse HEAD)
	# The syscall tables and unistd.h are the ABI: they must be the same.
	stripped=$(git -C "$BASE" diff --name-only stock cma-base |
		grep -v -e '^mm/process_vm_access\.c$' -e '\.tbl$' -e '^include/uapi/asm-generic/unistd\.h$')
	diff=$(git -C "$BASE" diff --name-only "$a" "$b")
	for f in $diff; do
		if printf '%s\n' "$stripped" | grep -qxF "$f"; then
			echo "differs, as allowed (syscall wiring): $f"
		else
			echo "differs, NOT allowed: $f"
			bad=1
		fi
	done
	echo "the two final trees differ in $(printf '%s' "$diff" | grep -c .) file(s)$([ $bad = 1 ] ||
		echo "; everything else (our file, the uapi header, kernel/pid.c, the selftests, the documentation, MAINTAINERS, the syscall tables) is the same")"
	git -C "$BASE" diff --stat "$a" "$b"
	# The lines that differ, for the log: the wiring in either form.
	git -C "$BASE" diff "$a" "$b" | head -200
	return $bad
}

# Each patch builds on its own: the objects it touches, in a tree at that
# patch (x86_64 VM config).
st_bisect() { bisect_series "$B/am" cma-base "$B/bisect" "$B/obj-bisect"; }
# One worktree for both series (1.7 GiB less on disk; its objects stay apart).
st_stock_bisect() { bisect_series "$B/am-stock" stock "$B/bisect" "$B/obj-bisect-stock"; }
# kdoc_no_worse WT C: each C file or header (outside tools/) that commit C
# changes has no more kernel-doc -Wall warnings after it than before: the
# fixes to mainline's file, which is not kernel-doc clean, add none, and
# every state of our own file is clean.
kdoc_no_worse() {
	local wt=$1 c=$2 f before after
	for f in $(git -C "$wt" diff --name-only "$c^" "$c" -- '*.c' '*.h' ':!tools'); do
		[ -f "$wt/$f" ] || continue
		after=$(cd "$wt" && perl scripts/kernel-doc -Wall -none "$f" 2>&1 | grep -c .)
		before=0
		if git -C "$wt" cat-file -e "$c^:$f" 2>/dev/null; then
			git -C "$wt" show "$c^:$f" >"$B/kdoc-before.${f##*.}"
			before=$(cd "$wt" && perl scripts/kernel-doc -Wall -none "$B/kdoc-before.${f##*.}" 2>&1 | grep -c .)
		fi
		echo "  kernel-doc $f: $before -> $after warning(s)"
		[ "$after" -le "$before" ] || { (cd "$wt" && perl scripts/kernel-doc -Wall -none "$f"); return 1; }
	done
}

# bisect_series AM BASE_REF WORKTREE OBJ: every commit of AM after BASE_REF.
bisect_series() {
	local am=$1 ref=$2 wt=$3 obj=$4 commits c objs f n=0
	commits=$(git -C "$am" rev-list --reverse "$ref..HEAD")
	for c in $commits; do
		n=$((n + 1))
		worktree_at "$wt" "$c"
		objs=
		for f in $(git -C "$wt" diff --name-only "$c^" "$c"); do
			case $f in
			tools/*|Documentation/*) ;;
			*.c) objs="$objs ${f%.c}.o" ;;
			arch/x86/entry/syscalls/*.tbl)
				objs="$objs arch/x86/entry/syscall_64.o arch/x86/entry/syscall_32.o arch/x86/entry/syscall_x32.o" ;;
			esac
		done
		echo "patch $n ($(git -C "$wt" log -1 --format=%s)): ${objs:-nothing to compile}"
		kdoc_no_worse "$wt" "$c" || { echo "patch $n adds kernel-doc warnings"; return 1; }
		[ -n "$objs" ] || continue
		kconfig_for "$wt" "$obj" x86_64 "" || return 1
		# shellcheck disable=SC2086
		make -s -C "$wt" O="$obj" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" -j"$JOBS" \
			W=1 $(echo $objs | tr ' ' '\n' | sort -u) || { echo "patch $n does not build"; return 1; }
	done
}

# kconfig_for SRC OBJ ARCH CROSS [FRAGMENTS]: tinyconfig + the VM fragment
# (x86) or a minimal one (others), plus FRAGMENTS, kept while the
# fragments are unchanged.
kconfig_for() {
	local src=$1 obj=$2 arch=$3 cross=$4 frag key has=cma
	frag=$ROOT/vm/config.fragment
	[ "$arch" = x86_64 ] || frag=$ROOT/vm/cross-$arch.fragment
	frag="$frag ${5:-}"
	# A tree before the series' core patch (the GUP patches come first)
	# has no CROSS_MEMORY_ATTACH option yet.
	grep -q '^config CROSS_MEMORY_ATTACH' "$src/init/Kconfig" || has=nocma
	# shellcheck disable=SC2086
	key=$( (cat $frag; echo $has) | sha1sum | cut -c1-16)
	mkdir -p "$obj"
	[ "$(cat "$obj/.cma-config" 2>/dev/null)" = "$key" ] && return 0
	make -s -C "$src" O="$obj" ARCH="$arch" CROSS_COMPILE="$cross" tinyconfig >/dev/null &&
	# shellcheck disable=SC2086
	(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $frag) >/dev/null &&
	make -s -C "$src" O="$obj" ARCH="$arch" CROSS_COMPILE="$cross" olddefconfig >/dev/null || return 1
	[ $has = nocma ] || grep -q '^CONFIG_CROSS_MEMORY_ATTACH=y' "$obj/.config" ||
		{ echo "$arch: CMA not enabled"; return 1; }
	echo "$key" >"$obj/.cma-config"
}

st_kernel() { "$ROOT/vm/build.sh" patched; }

# W=1 and sparse (C=2 forces the check) on our file: no warnings at all.
st_w1_sparse() {
	local out
	need sparse
	touch "$B/tree/mm/process_vm_access.c"
	# The same CC and HOSTCC as vm/build.sh: any other value makes the
	# next kernel build reconfigure and recompile every object.
	out=$(make -s -C "$B/tree" O="$B/obj-patched" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" \
		W=1 C=2 KCFLAGS=-fstack-usage mm/process_vm_access.o 2>&1)
	echo "$out"
	echo "$out" | grep -E 'process_vm_access|process_vm\.h' | grep -qiE 'warning|error' && return 1
	stack_report "$B/obj-patched"
	# Our mm/gup.c change: W=1-clean, and sparse reports only the three
	# context imbalances that stock 6.12's mm/gup.c has (lock helpers that
	# sparse cannot follow).
	touch "$B/tree/mm/gup.c"
	out=$(make -s -C "$B/tree" O="$B/obj-patched" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" \
		W=1 C=2 mm/gup.o 2>&1)
	echo "$out"
	echo "$out" | grep -iE 'warning|error' |
		grep -vE "context imbalance in '(follow_page_pte|get_gate_page|gup_fast_pte_range)' - unexpected unlock" |
		grep -q . && return 1
	echo "mm/gup.o: W=1 clean; sparse: only stock's lock-helper context imbalances"
}

# The final tree also builds our code and syscall tables for i386 and arm64.
st_cross_i386() {
	kconfig_for "$B/tree" "$B/obj-i386" i386 "" || return 1
	cross_build i386 "" "$B/obj-i386" arch/x86/entry/syscall_32.o
}
st_cross_arm64() {
	need gcc-aarch64-linux-gnu
	kconfig_for "$B/tree" "$B/obj-arm64" arm64 aarch64-linux-gnu- || return 1
	cross_build arm64 aarch64-linux-gnu- "$B/obj-arm64" arch/arm64/kernel/sys.o arch/arm64/kernel/sys32.o
}
# 64 KiB pages: the limits are in bytes, and the stack frames stay under the
# default FRAME_WARN (a larger frame is a warning, and fails W=1 here).
st_cross_arm64_64k() {
	need gcc-aarch64-linux-gnu
	kconfig_for "$B/tree" "$B/obj-arm64-64k" arm64 aarch64-linux-gnu- "$ROOT/vm/cross-arm64-64k.fragment" ||
		return 1
	grep -q '^CONFIG_ARM64_64K_PAGES=y' "$B/obj-arm64-64k/.config" || { echo "64 KiB pages not set"; return 1; }
	echo "FRAME_WARN: $(sed -n 's/^CONFIG_FRAME_WARN=//p' "$B/obj-arm64-64k/.config")"
	cross_build arm64 aarch64-linux-gnu- "$B/obj-arm64-64k" arch/arm64/kernel/sys.o
}

# cross_build ARCH CROSS OBJDIR TABLE_OBJS...: our file with W=1 (no
# warning allowed), then the syscall table objects (the tables themselves
# warn under W=1 in any tree, so they are built with the default flags).
cross_build() {
	local arch=$1 cross=$2 obj=$3 out
	shift 3
	local kmake=(make -s -C "$B/tree" O="$obj" ARCH="$arch" CROSS_COMPILE="$cross"
		     CC="ccache ${cross}gcc" HOSTCC="ccache gcc" -j"$JOBS")
	rm -f "$obj/mm/process_vm_access.o" "$obj/mm/gup.o"
	out=$("${kmake[@]}" W=1 KCFLAGS=-fstack-usage mm/process_vm_access.o mm/gup.o 2>&1)
	echo "$out"
	echo "$out" | grep -qiE 'warning|error' && return 1
	test -f "$obj/mm/process_vm_access.o" && test -f "$obj/mm/gup.o" || return 1
	stack_report "$obj"
	"${kmake[@]}" "$@" || return 1
	for o in "$@"; do test -f "$obj/$o" || return 1; done
	echo "$arch: mm/process_vm_access.o and mm/gup.o (W=1, clean) and $* built"
}

# stack_report OBJ: the stack frames of our functions (-fstack-usage),
# largest first.
stack_report() {
	echo "stack frames (bytes) of mm/process_vm_access.c in $(basename "$1"):"
	sort -t'	' -k2,2nr "$1/mm/process_vm_access.su" | awk -F'\t' '{ n = split($1, a, ":"); printf "  %6s %-8s %s\n", $2, $3, a[n] }'
}

st_selftests_build() { "$ROOT/vm/userspace.sh" selftests demo; }

# vm/run reports the command's exit status (three boots side by side).
st_vm_exit_status() {
	local a b c
	"$ROOT/vm/run" --timeout 120 -- true & a=$!
	"$ROOT/vm/run" --timeout 120 -- false & b=$!
	"$ROOT/vm/run" --timeout 120 -- sh -c 'exit 3' & c=$!
	wait $a || { echo "vm/run -- true failed"; return 1; }
	wait $b
	[ $? -eq 1 ] || { echo "vm/run -- false did not exit 1"; return 1; }
	wait $c
	[ $? -eq 3 ] || { echo "vm/run -- exit 3 did not exit 3"; return 1; }
	echo "vm/run exit status: true 0, false 1, exit 3 3"
	# --hostfs: the status of a host program, and the log gate, pass
	# through the chroot too.
	"$ROOT/vm/run" --hostfs --timeout 180 -- /bin/bash -c 'exit 5'
	[ $? -eq 5 ] || { echo "vm/run --hostfs -- bash -c 'exit 5' did not exit 5"; return 1; }
	if "$ROOT/vm/run" --hostfs --timeout 180 -- /bin/sh -c 'echo "WARNING: CPU: 0 PID: 1 at provoked-by-vm-exit-status" >/dev/kmsg'; then
		echo "vm/run --hostfs: a kernel WARNING did not fail the run"; return 1
	fi
	echo "vm/run --hostfs: exit 5 5, a provoked WARNING fails the run"
}

# One boot runs the demo, a static binary from --add; the stages vm-add,
# demo and vm-glibc each check their part of its output.
DEMO_OUT=
demo_boot() {
	[ -n "$DEMO_OUT" ] && { cat "$DEMO_OUT"; return 0; }
	DEMO_OUT=$LOGS/demo.out
	"$ROOT/vm/run" --timeout 300 --add "$B/add/demo" -- /demo/run-demo >"$DEMO_OUT" 2>&1 ||
		{ cat "$DEMO_OUT"; DEMO_OUT=; return 1; }
	cat "$DEMO_OUT"
}

# vm/run --add DIR runs a static binary from DIR.
st_vm_add() { demo_boot && grep -q '^== Cross Memory Attach demo on' "$DEMO_OUT"; }

# The log gate fails a run whose kernel log has a report, even when the
# command succeeded, and passes a clean one.
st_loggate() {
	local d=$B/loggate-test rep
	mkdir -p "$d"
	printf 'hello\nCMA-VM-DMESG-BEGIN\n[    0.1] Linux version\n[    4.3] rcu: \tRCU lockdep checking is enabled.\nCMA-VM-DMESG-END\nCMA-VM-EXIT=0\n' >"$d/clean"
	"$ROOT/vm/loggate.sh" "$d/clean" || { echo "clean log rejected"; return 1; }
	for rep in "WARNING: CPU: 0 PID: 1 at mm/gup.c:100 foo+0x1/0x2" "BUG: KASAN: slab-out-of-bounds in bar" \
		   "Oops: general protection fault" "WARNING: possible circular locking dependency detected" \
		   "UBSAN: shift-out-of-bounds in mm/x.c:1:2" "Kernel panic - not syncing: Fatal exception" \
		   "INFO: lockdep is turned off." "BUG: sleeping function called from invalid context" \
		   "BUG: scheduling while atomic: cma_basic/93/0x00000002" "[ BUG: Invalid wait context ]" \
		   "WARNING: inconsistent lock state"; do
		printf 'CMA-VM-DMESG-BEGIN\n[    1.0] %s\nCMA-VM-DMESG-END\nCMA-VM-EXIT=0\n' "$rep" >"$d/bad"
		if "$ROOT/vm/loggate.sh" "$d/bad" 2>/dev/null; then
			echo "log gate missed: $rep"
			return 1
		fi
	done
	# A report with no timestamp, from a kernel that never reached the
	# dmesg dump (an Oops on an overrun stack, as a broken GUP gave).
	printf 'ok 5 basic\nBUG: unable to handle page fault for address: ffffea0001fcc148\nThread overran stack, or stack corrupted\nOops: Oops: 0011 [#1] SMP\n' >"$d/bad"
	if "$ROOT/vm/loggate.sh" "$d/bad" 2>/dev/null; then
		echo "log gate missed a report without a timestamp"
		return 1
	fi
	# And a real run: a kernel WARNING provoked inside the VM fails vm/run.
	if [ -e "$B/obj-patched/.config" ] && grep -q '^CONFIG_DEBUG_FS=y' "$B/obj-patched/.config"; then
		"$ROOT/vm/run" --timeout 120 -- sh -c 'echo "WARNING: from userspace is not a kernel report"; true' ||
			{ echo "userspace text tripped the gate"; return 1; }
	fi
	echo "log gate rejects all report kinds and passes clean logs"
}

# The demo shows both calls, and the pidfd flag.
st_demo() { demo_boot && grep -q 'PROCESS_VM_PIDFD  ->' "$DEMO_OUT"; }

# --disk: cma_disk writes back and drops file pages of an ext4 file system
# on a virtio disk (the VM's /tmp is tmpfs, which has no writeback).
st_vm_selftests() {
	"$ROOT/vm/run" --disk --timeout 2400 --add "$B/add/selftests" -- /cma/run-tests x86_64 i386 x32
}

# glibc's own wrappers work unchanged: the demo (static, glibc) calls
# process_vm_readv/writev through them and checks every byte.
st_vm_glibc() { demo_boot && grep -q 'demo: OK' "$DEMO_OUT"; }

# Real clients on our kernel, on the host's userland (vm/run --hostfs):
# strace read its tracee with process_vm_readv (and the check catches the
# PTRACE_PEEKDATA fallback), Open MPI's vader moved verified messages with
# CMA, and with single copy none made no CMA call (2 ranks).  make clients
# runs the rest (4 ranks, UCX, stock 6.12, hpcc).
st_vm_clients() { "$ROOT/vm/clients.sh" --quick; }

# GUP's and COW's own mm selftests (gup_test, gup_longterm, cow,
# uffd-unit-tests, ksm_functional_tests, mkdirty, madv_populate) on our
# kernel and on stock 6.12, case for case the same results: our mm/gup.c
# change must not show.  make check-gup runs the full gup_test matrix.
st_vm_gup() { "$ROOT/vm/gup-tests.sh" --quick; }

# The same selftests natively on the host kernel (mainline CMA): nothing
# may fail; cases for our extensions skip there.
# NATIVE_ABIS: the ABIs run, for the count of cases (vm/tapcheck.sh).
NATIVE_ABIS=
st_native_selftests() {
	local abis= a
	for a in x86_64 i386 x32; do
		"$B/add/selftests/cma/$a/cma_errors" -l >/dev/null 2>&1
		if [ $? -ne 126 ]; then
			abis="$abis $a"
		else
			echo "# the host kernel cannot run $a binaries: not run natively"
		fi
	done
	[ -n "$abis" ] || return 1
	NATIVE_ABIS=$abis
	# Some cases change host settings (nr_hugepages, Yama's ptrace_scope,
	# the 64 KiB THP setting) and put them back in their teardown, which an
	# interrupted run skips: the stage restores them itself, however it ends.
	(
		saved=$(native_settings)
		trap 'native_restore "$saved"' EXIT
		trap 'exit 130' INT TERM HUP
		# shellcheck disable=SC2086
		"$B/add/selftests/cma/run-tests" $abis || exit 1
		# The fuzzer's model against mainline's code, on every landing;
		# with FUZZ_SEED=N, the seed of vm-fuzz's x86_64 run (3N).
		"$B/add/selftests/cma/x86_64/cma_fuzz" --mainline --shapes \
			--seed "$(( ${FUZZ_SEED:-$(date +%s)} * 3 ))" --seconds "${FUZZ_SECONDS:-4}" \
			--iterations 100000000 --check-pins
	)
}

# The host settings that native-selftests may change: "FILE VALUE" lines.
NATIVE_KNOBS="/proc/sys/vm/nr_hugepages /proc/sys/kernel/yama/ptrace_scope
/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
/sys/kernel/mm/ksm/run /sys/kernel/mm/ksm/pages_to_scan /sys/kernel/mm/ksm/sleep_millisecs"
native_settings() {
	local f
	for f in $NATIVE_KNOBS; do
		[ -r "$f" ] && echo "$f $(sed 's/.*\[\(.*\)\].*/\1/' "$f")"
	done
}
native_restore() {
	local f v
	while read -r f v; do
		[ -n "$f" ] || continue
		[ "$(native_settings | grep "^$f " | cut -d' ' -f2-)" = "$v" ] && continue
		echo "# native-selftests: restoring $f to $v"
		echo "$v" >"$f" 2>/dev/null || echo "# native-selftests: cannot restore $f"
	done <<<"$1"
}

# Documentation/cma.rst parses cleanly with docutils; get_maintainer.pl
# names our MAINTAINERS entry for our files.
st_docs() {
	local f out
	need python3-docutils
	out=$(/usr/bin/python3 - "$B/tree/Documentation/cma.rst" <<'PY' 2>&1
import sys, docutils.core
docutils.core.publish_doctree(open(sys.argv[1]).read(), source_path=sys.argv[1],
                              settings_overrides={'report_level': 2, 'halt_level': 2})
PY
)
	[ -z "$out" ] || { echo "$out"; return 1; }
	echo "Documentation/cma.rst: docutils clean"
	for f in $(git -C "$B/am" diff --name-only --diff-filter=A cma-base HEAD); do
		out=$(cd "$B/tree" && perl scripts/get_maintainer.pl --no-git --no-git-fallback -f "$f" 2>&1)
		echo "$f: $(echo "$out" | tr '\n' ' ')"
		echo "$out" | grep -q "$CMA_EMAIL" || { echo "get_maintainer does not name the entry for $f"; return 1; }
	done
}

st_man_page() { need man-db groff-base; sh "$ROOT/man/check.sh"; }

# The seeded fuzzer in the VM, every ABI, with the pin balance checked: its
# random draws, then --shapes (structured vectors over 2048-page arenas).
# FUZZ_SECONDS sets each budget per ABI.  Each ABI has its own seed,
# derived from one base seed (FUZZ_SEED, else the time): ABI k of
# x86_64, i386, x32 (k = 0, 1, 2) gets base * 3 + k, so no two ABIs or
# runs share one; the stage prints them all, the fuzzer prints its own,
# and FUZZ_SEED=base replays the three.
st_vm_fuzz() {
	local secs=${FUZZ_SECONDS:-4} base=${FUZZ_SEED:-$(date +%s)} abi seed k=0 cmds=
	echo "vm-fuzz: base seed $base (FUZZ_SEED=$base replays every ABI)"
	for abi in x86_64 i386 x32; do
		seed=$((base * 3 + k))
		k=$((k + 1))
		echo "vm-fuzz: $abi seed $seed"
		cmds="$cmds
			/cma/$abi/cma_fuzz --seed $seed --seconds $secs --iterations 100000000 --check-pins || exit 1
			/cma/$abi/cma_fuzz --shapes --seed $seed --seconds $secs --iterations 100000000 --check-pins || exit 1"
	done
	"$ROOT/vm/run" --timeout 900 --add "$B/add/selftests" -- sh -c "$cmds"
}

# The selftests under User-Mode Linux (the patched tree as ARCH=um): a
# third environment, x86_64 binaries only (UML runs no compat syscalls).
# Not in CHECK_STAGES: a cold UML build would push a cold CI run past its
# budget; make check-uml runs it.
st_uml_selftests() {
	"$ROOT/vm/build.sh" uml-patched || return 1
	"$ROOT/vm/run" --uml --timeout 900 --add "$B/add/selftests" -- /cma/run-tests x86_64
}

# The same on UML built with lockdep and DEBUG_VM (vm/uml-debug.fragment):
# a kernel without per-VMA locks or GUP-fast, so every pin goes through
# GUP's slow path under the mmap lock, with the lock and VM checks; vm/run
# fails on any warning, BUG or lockdep report.
st_uml_debug_selftests() {
	"$ROOT/vm/build.sh" uml-debug || return 1
	"$ROOT/vm/run" --uml --kernel debug --timeout 1800 --add "$B/add/selftests" -- /cma/run-tests x86_64
}

# make check-debug with a short budget, on its PREEMPT_RT kernel (KASAN,
# lockdep, DEBUG_ATOMIC_SLEEP, KMEMLEAK, fault injection... with RT's
# sleeping spinlocks and local_locks: the only kernel here that reports a
# lock taken with interrupts off; no THP) with the x86_64 selftests, the
# fuzzer, the fuzzer under fault injection, the churn and a kmemleak scan.
# THP under lockdep and KASAN stays with make check-debug's first phase
# (the PREEMPT_NONE debug kernel); here the THP cases run in vm-selftests.
# CHECK_DEBUG_KERNELS="debug debug-rt" runs both kernels (a second cold
# build: about 8 minutes more).  The 64 MiB
# selftests, which the normal VM runs for every ABI, are left out (14 s of
# KASAN under TCG; CHECK_DEBUG_SKIP= keeps them), the phases are 3 s and the
# VM has one CPU and 1 GiB (make check-debug: 2 CPUs, 3 GiB, 60 s phases).  Runs in the
# background, beside the other stages (vm/userspace.sh takes a lock while
# it builds the selftests, so this and selftests-build never race).
# Also left out: cma_disk's cases, which need a block device; the debug
# kernels have none (vm/debug.fragment goes onto vm/config.fragment alone,
# without the PCI, virtio, block layer and ext4 of vm/hostfs.fragment), and
# giving it one costs a full rebuild of the KASAN kernel for every option.
# vm-selftests runs them on the patched kernel, for both ABIs.
# vm/check-debug.sh checks the selftests of each kernel case by case
# (vm/tapcheck.sh with vm/skips/rt, or vm/skips/vm for debug).
CHECK_DEBUG_SKIP_DEFAULT=size_64m,writeback,read_page_cache_miss,writeback_while_pinned,page_cache_miss
st_debug_vm() {
	local k
	for k in ${CHECK_DEBUG_KERNELS:-debug-rt}; do
		"$ROOT/vm/build.sh" "$k" || return 1
	done
	"$ROOT/vm/userspace.sh" selftests || return 1
	DEBUG_BUILT=1 DEBUG_KERNELS=${CHECK_DEBUG_KERNELS:-debug-rt} \
		DEBUG_SECONDS=${CHECK_DEBUG_SECONDS:-3} DEBUG_ITERATIONS=${CHECK_DEBUG_ITERATIONS:-3000} \
		DEBUG_ABIS=x86_64 DEBUG_SKIP=${CHECK_DEBUG_SKIP-$CHECK_DEBUG_SKIP_DEFAULT} DEBUG_MEM=${CHECK_DEBUG_MEM:-1G} \
		DEBUG_SMP=${CHECK_DEBUG_SMP:-1} "$ROOT/vm/check-debug.sh"
}
