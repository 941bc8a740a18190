#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# clients/in-vm.sh BIN [CLIENT...]: run real users of process_vm_readv/
# writev against the running kernel (in the VM, under vm/run --hostfs) and
# print one line per check: "CLIENT PASS name: detail" or "CLIENT FAIL
# name: reason".  BIN holds the programs clients/clients.sh built.
# Clients: strace mpi ucx (default: all); mpi2 is mpi with 2 ranks only
# (make check's short run).
set -uo pipefail
bin=${1:?usage: in-vm.sh BIN [CLIENT...]}
shift
clients=${*:-strace mpi ucx}
w=$(mktemp -d /tmp/clients.XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

result() { echo "CLIENT $1 $2: $3"; }

# ---- strace --------------------------------------------------------------
# An outer strace traces an inner one (not -f: the inner must be the
# target's only tracer) and logs the inner's process_vm_readv and ptrace
# calls with up to a page of the bytes each read.  The inner's decoding is
# checked against the target's own output and fixed values.
strace_run() { # TAG [outer strace options...]
	local tag=$1
	shift
	strace -qq -e trace=process_vm_readv,ptrace -e signal=none -s 4096 "$@" -o "$w/outer-$tag.log" \
		strace -s 8192 -o "$w/inner-$tag.log" "$bin/strace-target" >"$w/out-$tag.txt" 2>"$w/err-$tag.txt"
}
# strace_decoded TAG: the inner strace decoded every argument right.
strace_decoded() {
	local t=$1 inner=$w/inner-$1.log data
	data=$(head -c 5000 "$w/out-$t.txt")
	[ ${#data} -eq 4999 ] || { echo "the target wrote ${#data} bytes, not 5000"; return 1; }
	grep -qF "write(1, \"$(printf '%s' "$data")\\n\", 5000) = 5000" "$inner" ||
		{ echo "the 5000-byte write() is not decoded as written"; return 1; }
	grep -qF 'openat(AT_FDCWD, "/nonexistent/cma-strace-path-crossing-a-page-boundary", O_RDONLY) = -1 ENOENT' "$inner" ||
		{ echo "the openat() path is not decoded right"; return 1; }
	grep -qF 'nanosleep({tv_sec=0, tv_nsec=1234567}, NULL) = 0' "$inner" ||
		{ echo "the nanosleep() timespec is not decoded right"; return 1; }
	grep -qE '^uname\(\{sysname="Linux", nodename="[^"]*", \.\.\.\}\) = 0' "$inner" ||
		{ echo "the uname() result is not decoded right"; return 1; }
}
# strace_mechanism TAG: the inner strace read the target with
# process_vm_readv (bytes of the write and of the path among what it got
# back) and never fell back to PTRACE_PEEKDATA.
strace_mechanism() {
	local outer=$w/outer-$1.log good=$w/good-$1.log ok peek
	grep -E '^process_vm_readv\(.*\) = [1-9][0-9]*$' "$outer" >"$good"
	ok=$(grep -c . "$good")
	peek=$(grep -c 'PTRACE_PEEKDATA' "$outer")
	echo "$ok successful process_vm_readv calls, $peek PTRACE_PEEKDATA"
	[ "$ok" -gt 0 ] && [ "$peek" -eq 0 ] || return 1
	grep -q 'cma-strace:' "$good" || { echo "no process_vm_readv returned the write() buffer's bytes"; return 1; }
	grep -q '/nonexistent/cma-str' "$good" || { echo "no process_vm_readv returned the openat() path's bytes"; return 1; }
}
client_strace() {
	local why
	strace_run cma || { result FAIL strace "strace failed: $(tail -n 3 "$w"/err-cma.txt)"; return; }
	why=$(strace_decoded cma) || { result FAIL strace "decoding: $why"; return; }
	why=$(strace_mechanism cma) || { result FAIL strace "mechanism: $why"; return; }
	result PASS strace "5000-byte write, page-crossing path, timespec, utsname decoded right; $why"
	# The control: process_vm_readv made to fail with ENOSYS in the inner
	# strace, which then falls back to PTRACE_PEEKDATA: the decoding must
	# stay right and the mechanism check must see the fallback.
	strace_run peek -e inject=process_vm_readv:error=ENOSYS ||
		{ result FAIL strace-control "strace failed: $(tail -n 3 "$w"/err-peek.txt)"; return; }
	why=$(strace_decoded peek) || { result FAIL strace-control "decoding with PTRACE_PEEKDATA: $why"; return; }
	if why=$(strace_mechanism peek); then
		result FAIL strace-control "with process_vm_readv failing, the mechanism check still passed ($why)"
	else
		result PASS strace-control "process_vm_readv forced to ENOSYS: decoded right through the fallback and the check caught it ($(echo "$why" | head -n 1))"
	fi
}

# ---- Open MPI ------------------------------------------------------------
# mpi-verify under strace -f (seccomp-bpf: only the CMA calls stop), for
# 2 and 4 ranks, single copy cma then none.  With cma: vader reports cma
# on every rank (MPI_T), every CMA call moved all it was asked to, and at
# least as many bytes as the messages of 64 KiB and more carried; with
# none: no CMA call at all.
# MPI_STRACE_EXTRA: more strace options, e.g. "-e inject=process_vm_readv:
# error=ENOSYS" to prove the cma checks fail when CMA does.
mpi_run() { # NP MECH
	local np=$1 mech=$2 t=$w/mpi-$1-$2
	# shellcheck disable=SC2086
	strace -f -qq --seccomp-bpf ${MPI_STRACE_EXTRA:-} -e trace=process_vm_readv,process_vm_writev -e signal=none -s 1 -o "$t.strace" \
		mpirun --oversubscribe -np "$np" --mca btl self,vader --mca btl_vader_single_copy_mechanism "$mech" \
		--mca btl_base_verbose 100 "$bin/mpi-verify" >"$t.out" 2>&1
}
mpi_check() { # NP MECH
	local np=$1 mech=$2 t=$w/mpi-$1-$2 calls bad bytes want mechs
	grep -q "^mpi-verify: $np ranks: .* 0 wrong$" "$t.out" || { tail -n 5 "$t.out"; return 1; }
	# vader, and nothing else, moved the messages.
	grep -q 'select: init of component vader returned success' "$t.out" || { echo "vader was not selected"; return 1; }
	mechs=$(sed -n 's/^mpi-verify: single copy mechanism: //p' "$t.out")
	[ "$(echo "$mechs" | grep -o " $mech\\b" | wc -l)" -eq "$np" ] ||
		{ echo "vader's single copy mechanism: $mechs (wanted $mech on all $np)"; return 1; }
	# Completed calls: "= N" lines (strace splits calls interrupted by
	# another process's output into <unfinished ...> / resumed lines).
	calls=$(grep -cE '(^|resumed>).*\) = [0-9-]+' "$t.strace")
	bad=$(grep -E '(^|resumed>).*\) = ' "$t.strace" | grep -vE 'iov_len=([0-9]+)\}\], 1, 0\) = \1$' | grep -c . )
	bytes=$(grep -oE '\) = [0-9]+$' "$t.strace" | awk '{ s += $3 } END { printf "%d", s }')
	# Messages of 64 KiB and more: sizes 65549 .. 16 MiB, 3 rounds, np-1
	# per rank per round.
	want=$(( (65549 + 262144 + 1048583 + 4194304 + 16777216) * 3 * np * (np - 1) ))
	echo "vader single copy: $mech on all $np ranks; $calls CMA calls, $bytes bytes"
	if [ "$mech" = cma ]; then
		[ "$bad" -eq 0 ] || { echo "$bad CMA calls failed or came back short:"; grep -E '\) = ' "$t.strace" |
			grep -vE 'iov_len=([0-9]+)\}\], 1, 0\) = \1$' | head -n 3; return 1; }
		[ "$bytes" -ge "$want" ] || { echo "CMA moved $bytes bytes, fewer than the $want of the large messages"; return 1; }
	else
		[ "$calls" -eq 0 ] || { echo "single copy none, yet $calls CMA calls"; return 1; }
	fi
}
client_mpi2() { client_mpi 2; }
client_mpi() { # [NP...]
	local np mech why
	for np in ${*:-2 4}; do
		for mech in cma none; do
			if ! mpi_run "$np" "$mech"; then
				result FAIL "openmpi-$mech-np$np" "mpirun failed: $(grep -vE '^\[cma-vm:[0-9]+\] (mca|select):' "$w/mpi-$np-$mech.out" | tail -n 4 | tr '\n' ' ')"
			elif why=$(mpi_check "$np" "$mech"); then
				result PASS "openmpi-$mech-np$np" "$(grep ' ranks: ' "$w/mpi-$np-$mech.out" | sed 's/^mpi-verify: //'); $why"
			else
				result FAIL "openmpi-$mech-np$np" "$(echo "$why" | tr '\n' ' ')"
			fi
		done
	done
}

# ---- UCX -----------------------------------------------------------------
# ucx_perftest: a server and a client over loopback TCP, UCT level, the
# cma transport, zero-copy put (process_vm_writev) and get
# (process_vm_readv) of 1 MiB.  The tool does not check bytes: pass when
# both ends exit 0 and strace saw complete calls of the expected kind move
# at least the measured iterations' bytes (how many warm-up iterations
# ucx_perftest really runs varies from run to run).  Then UCX with bytes checked: mpi-verify over Open MPI's
# UCX PML with UCX_TLS=self,posix,cma (UCX moves the large messages by
# rendezvous over cma), and the control UCX_TLS=self,posix (none may go
# over CMA; UCX's 8-byte probes of the transport do not count).
ucx_perftest_run() { # TEST CALL PORT
	local test=$1 call=$2 port=$3 t=$w/ucx-$1 n=200 warm=20 s=1048576 short bytes
	ucx_perftest -t "$test" -D zcopy -x cma -d memory -s $s -n $n -w $warm -p "$port" >"$t.server" 2>&1 &
	local spid=$!
	sleep 2
	strace -f -qq --seccomp-bpf -e trace=process_vm_readv,process_vm_writev -e signal=none -s 1 -o "$t.strace" \
		ucx_perftest 127.0.0.1 -t "$test" -D zcopy -x cma -d memory -s $s -n $n -w $warm -p "$port" -f >"$t.client" 2>&1
	local crc=$?
	wait $spid
	local src=$?
	[ $crc -eq 0 ] && [ $src -eq 0 ] || { echo "exit status: client $crc, server $src; $(grep -h ERROR "$t.client" "$t.server" | head -n 2)"; return 1; }
	# UCX cuts a transfer into 512 KiB calls.  Every call but the 8-byte
	# probes must move all it was asked to.
	grep -E "^[0-9]+ +$call\\(" "$t.strace" | grep -v 'iov_len=8}' >"$t.calls"
	short=$(grep -vcE 'iov_len=([0-9]+)\}\], [0-9]+, 0\) = \1$' "$t.calls")
	bytes=$(grep -oE '= [0-9]+$' "$t.calls" | awk '{ s += $2 } END { printf "%d", s }')
	echo "$(grep -c . "$t.calls") ${call} calls ($short short or failed) moved $bytes bytes for $n measured x 1 MiB; $(tail -n 1 "$t.client" | awk '{ printf "%s MB/s", $6 }')"
	[ "$short" -eq 0 ] && [ "$bytes" -ge $((n * s)) ]
}
ucx_mpi_run() { # TLS
	local tls=$1 t=$w/ucx-mpi-${1//,/-}
	strace -f -qq --seccomp-bpf -e trace=process_vm_readv,process_vm_writev -e signal=none -s 1 -o "$t.strace" \
		mpirun --oversubscribe -np 2 --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
		-x UCX_TLS="$tls" "$bin/mpi-verify" >"$t.out" 2>&1 || { tail -n 4 "$t.out"; return 1; }
	grep -q '^mpi-verify: 2 ranks: .* 0 wrong$' "$t.out" || { tail -n 4 "$t.out"; return 1; }
	grep -E '\) = [0-9]+$' "$t.strace" | grep -v 'iov_len=8}' >"$t.big"
	echo "$(grep ' ranks: ' "$t.out" | sed 's/^mpi-verify: //'); $(grep -c . "$t.big") CMA calls above 8 bytes, $(grep -oE '= [0-9]+$' "$t.big" | awk '{ s += $2 } END { printf "%d", s }') bytes"
}
client_ucx() {
	# UCX sends 64 KiB eagerly over posix: count the sizes from 256 KiB.
	local why want=$(( (262144 + 1048583 + 4194304 + 16777216) * 3 * 2 ))
	if why=$(ucx_perftest_run put_bw process_vm_writev 13371); then
		result PASS ucx-perftest-put "$why"
	else
		result FAIL ucx-perftest-put "$(echo "$why" | tr '\n' ' ')"
	fi
	if why=$(ucx_perftest_run get process_vm_readv 13372); then
		result PASS ucx-perftest-get "$why"
	else
		result FAIL ucx-perftest-get "$(echo "$why" | tr '\n' ' ')"
	fi
	if ! why=$(ucx_mpi_run self,posix,cma); then
		result FAIL ucx-mpi-cma "$(echo "$why" | tr '\n' ' ')"
	elif [ "$(echo "$why" | sed -n 's/.* \([0-9]*\) bytes$/\1/p')" -ge "$want" ]; then
		result PASS ucx-mpi-cma "UCX_TLS=self,posix,cma: $why"
	else
		result FAIL ucx-mpi-cma "UCX_TLS=self,posix,cma: $why, fewer than the $want bytes of the messages of 256 KiB and more"
	fi
	if ! why=$(ucx_mpi_run self,posix); then
		result FAIL ucx-mpi-nocma "$(echo "$why" | tr '\n' ' ')"
	elif echo "$why" | grep -q ' 0 CMA calls above 8 bytes'; then
		result PASS ucx-mpi-nocma "UCX_TLS=self,posix (control): $why"
	else
		result FAIL ucx-mpi-nocma "UCX_TLS=self,posix (control), yet: $why"
	fi
}

for c in $clients; do
	t0=$(date +%s)
	"client_$c"
	echo "==> client $c: $(($(date +%s) - t0))s"
done
