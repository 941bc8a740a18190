#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/userspace.sh WHAT...: build static userspace for the VM into
# $B/add/WHAT, ready for vm/run --add.
#   selftests  tools/testing/selftests/cma of the patched tree, as x86_64
#              and i386 binaries, with /cma/run-tests to run them all
#   demo       demo/cma_demo.c as /demo/cma_demo, with /demo/run-demo
#   bench      bench/ as /bench/...
set -euo pipefail
. "$(dirname "$0")/lib.sh"

selftests() {
	local src=$B/tree/tools/testing/selftests/cma out=$B/add/selftests/cma hdr key
	[ -d "$src" ] || die "selftests: $src missing (run make series-apply)"
	need gcc-12-multilib libc6-dev-i386 libc6-dev-x32
	# make check's background debug VM asks for them too: one at a time.
	exec 8>"$B/.selftests.lock"
	flock 8
	# Rebuilt only when their sources, the uapi headers and tables they
	# use, this script or the compiler changed (an edit of the kernel code
	# alone does not touch them).
	key=$( (cd "$B/tree" && find tools/testing/selftests/cma tools/testing/selftests/kselftest*.h \
		include/uapi arch/x86/include/uapi arch/x86/entry/syscalls -type f | LC_ALL=C sort |
		xargs sha1sum; sha1sum <"$ROOT/vm/userspace.sh"; gcc --version) | sha1sum | cut -c1-16)
	if [ "$(cat "$out/.key" 2>/dev/null)" = "$key" ] && [ -x "$out/run-tests" ]; then
		stage "selftests: up to date in $out"
		return 0
	fi
	# Headers of the patched tree (uapi: linux/process_vm.h, unistd numbers).
	hdr=$B/hdr
	make -s -C "$B/tree" O="$B/obj-hdr" ARCH=x86_64 headers_install \
		INSTALL_HDR_PATH="$hdr" >/dev/null || die "selftests: headers_install failed"
	rm -rf "$out"
	mkdir -p "$out"
	for abi in x86_64:-m64 i386:-m32 x32:-mx32; do
		mkdir -p "$out/${abi%%:*}"
		make -s -C "$src" OUTPUT="$out/${abi%%:*}" CC="gcc ${abi#*:} -static" \
			KHDR_INCLUDES="-isystem $hdr/include" >"$B/selftests-${abi%%:*}.log" 2>&1 || {
			cat "$B/selftests-${abi%%:*}.log" >&2
			die "selftests: ${abi%%:*} build failed"
		}
		grep -i 'warning' "$B/selftests-${abi%%:*}.log" >&2 && die "selftests: ${abi%%:*} build has warnings"
	done
	cp "$src/settings" "$out/" 2>/dev/null || true
	cat >"$out/run-tests" <<'RUN'
#!/bin/sh
# Run every CMA selftest binary, for each ABI given (default: all built).
# CMA_SELFTEST_ARGS: harness options for every binary (e.g. -T size_64m).
cd "$(dirname "$0")" || exit 1
abis=${*:-"x86_64 i386"}
rc=0
for abi in $abis; do
	for t in "$abi"/*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		case $t in */cma_fuzz|*/cma_churn) continue ;; esac
		echo "# cma-selftest: $t"
		s=$(date +%s)
		# shellcheck disable=SC2086
		"./$t" ${CMA_SELFTEST_ARGS:-} || rc=1
		# Wall time per program, against the timeout in settings.
		echo "# cma-selftest-time: $t $(($(date +%s) - s)) s"
	done
done
exit $rc
RUN
	chmod +x "$out/run-tests"
	echo "$key" >"$out/.key"
	stage "selftests: built into $out"
}

demo() {
	local out=$B/add/demo/demo
	rm -rf "$out"
	mkdir -p "$out"
	gcc -Wall -Wextra -Werror -O2 -static -isystem "$B/hdr/include" \
		-o "$out/cma_demo" "$ROOT/demo/cma_demo.c" || die "demo: build failed"
	cat >"$out/run-demo" <<'RUN'
#!/bin/sh
echo "== Cross Memory Attach demo on $(uname -sr) =="
/demo/cma_demo
RUN
	chmod +x "$out/run-demo"
}

bench() {
	local out=$B/add/bench/bench
	rm -rf "$out"
	mkdir -p "$out"
	make -s -C "$ROOT/bench" O="$out" >"$B/bench-build.log" 2>&1 || {
		cat "$B/bench-build.log" >&2
		die "bench: build failed"
	}
}

for what in "$@"; do
	case $what in
	selftests|demo|bench) "$what" ;;
	*) die "vm/userspace.sh: unknown target '$what'" ;;
	esac
done
