#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-fresh: the README's two commands on a fresh Debian 12 machine.
# Builds a pristine Debian 12 (bookworm) minbase root with debootstrap,
# adding only git, make and ca-certificates; clones the committed HEAD of
# this repository into it as /root/project; and runs `make run`, then
# `make check` there as root, as a newcomer would.  Prints one line per
# command with its status and wall time, and fails if either fails.
#
# Shared with the host, so that nothing is compiled or downloaded twice:
# the ccache ($CCACHE_DIR, mounted at the newcomer's default
# /root/.cache/cma-ccache) and apt's .deb cache (/var/cache/apt/archives).
# Everything else (installed packages, base tree, series, kernels' object
# trees, initramfs) starts from nothing.  The mirror and suites come from
# the host's own apt sources, read at run time.
#
# The pristine root is kept as a tarball beside the ccache, in
# $FRESH_CACHE (default ~/.cache/cma-fresh), so that a new clone (CI)
# need not debootstrap again; it is made again when the mirror changes or
# it is older than FRESH_MAX_DAYS (default 14).  No project command ever
# runs in it: every run unpacks a new copy.  A root where a command failed
# stays in $B/fresh/root for a look (/root/project/build/check) until the
# next run; one where all passed is removed, its make check logs kept in
# $B/fresh/check.  The mounts live in a private mount namespace (unshare):
# they never show on the host, and vanish when the run ends, however it
# ends.
#   FRESH_CMDS="run check"   the make targets to run (default both); e.g.
#                            FRESH_CMDS=clients-check for make clients' pass/fail part;
#                            "targets" stands for every documented target with
#                            its smallest arguments (TARGETS below), one after
#                            the other in the same root
#   FRESH_TARGETS="a b"      run only these labels of TARGETS
#   FRESH_TIMEOUT=S          the limit of one command (default 5400 s)
# Each command's log: $B/fresh/make-LABEL.log; "LABEL SECONDS EXIT" lines
# in $B/fresh/times.txt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SUITE=bookworm
INCLUDE=git,make,ca-certificates
F=$B/fresh
FRESH_CACHE=${FRESH_CACHE:-$HOME/.cache/cma-fresh}
root=$F/root
inside_ccache=/root/.cache/cma-ccache
apt_cache=/var/cache/apt/archives

# FRESH_CMDS=targets: every make target the README documents, with the
# smallest arguments that still run all of it (one cell, one boot, one
# trace, no hpcc table), in an order that builds each kernel once: "LABEL
# COMMAND" (bash, run in /root/project).  Not here: run and check (the
# default FRESH_CMDS; CI runs them), check-fresh (this script), clients
# and clients-hpcc (hpcc: 25 to 35 minutes per kernel; clients-check is
# their pass/fail part), mutants (a kernel build and a boot per mutant;
# not in CI), clean.
TARGETS=$(cat <<'LIST'
help          make help
deps          make deps
series        make series
series-check  make series-check
bench         BENCH_ARGS=--quick make bench
bench-ab      BOOTS=1 AB_ARGS='-s 4K -P 4k -G -n 5 -t 10' AA_ARGS='-b 310,311 -s 4K -P 4k -G -n 5 -t 10' make bench-ab
bench-ab-uml  BOOTS=1 AB_ARGS='-s 4K -P 4k -G -n 5 -t 10' AA_ARGS='-b 310,311 -s 4K -P 4k -G -n 5 -t 10' make bench-ab-uml
uml-profile   make uml-profile
icount        ICOUNT_SIZES=4K ICOUNT_SHAPES= ICOUNT_SIDES=B make icount
kernel        make kernel
selftests     make selftests
demo          make demo
vm-shell      while sleep 20; do printf 'echo VM-SHELL-$((6*7))\nreboot -f\n'; done | timeout 1200 make vm-shell >/tmp/vm-shell.out 2>&1; rc=$?; cat /tmp/vm-shell.out; [ $rc = 0 ] && grep -q VM-SHELL-42 /tmp/vm-shell.out
kernel-stock  make kernel-stock
bench-vm      ROUNDS=1 BENCH_VM_ARGS='-t cma-read,memcpy -p sweep -s 4K,64K -P 4k -r 5 --target-ms 10' make bench-vm
bench-uml     ROUNDS=1 BENCH_VM_ARGS='-t cma-read,memcpy -p sweep -s 4K,64K -P 4k -r 5 --target-ms 10' make bench-uml
clients-check make clients-check
check-gup     GUP_ARGS=--quick make check-gup
check-uml     make check-uml
check-debug   DEBUG_SECONDS=1 DEBUG_ITERATIONS=200 DEBUG_ABIS=x86_64 DEBUG_SMP=1 DEBUG_MEM=1G DEBUG_SKIP=size_64m,writeback,read_page_cache_miss,writeback_while_pinned,page_cache_miss make check-debug
LIST
)

# fresh_entries: "LABEL<TAB>COMMAND" for each command FRESH_CMDS asks for.
fresh_entries() {
	local c label cmd
	for c in ${FRESH_CMDS:-run check}; do
		if [ "$c" = targets ]; then
			while read -r label cmd; do
				[ -n "$label" ] || continue
				[ -z "${FRESH_TARGETS:-}" ] || [[ " $FRESH_TARGETS " == *" $label "* ]] || continue
				printf '%s\t%s\n' "$label" "$cmd"
			done <<<"$TARGETS"
		else
			printf '%s\tmake %s\n' "$c" "$c"
		fi
	done
}

# mounts_under DIR: the host's mount points at or below DIR.
mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
}

# Second half, in a private mount namespace (see the end of this file):
# mount, chroot, run the commands.
if [ "${1:-}" = --inside ]; then
	# kill_root: whatever still runs in the root (a VM, a build) is ours.
	kill_root() {
		local p
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
		done
		return 0
	}
	# shellcheck disable=SC2317 # called by the trap
	cleanup() {
		local p
		kill_root
		for p in $(mounts_under "$root" | sort -r); do
			umount -l "$p" 2>/dev/null || true
		done
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --bind /dev "$root/dev"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts"
	mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
	mkdir -p "$root$inside_ccache"
	mount --bind "$CCACHE_DIR" "$root$inside_ccache"
	mount --bind "$apt_cache" "$root$apt_cache"
	env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
	[ -z "${CI:-}" ] || env+=("CI=$CI")
	# The caller's locale, as a login on this machine has it: ccache keys
	# its results on LANG and LC_*, so without it nothing would hit.
	while IFS= read -r v; do env+=("$v"); done < <(env | grep -E '^(LANG|LANGUAGE|LC_[A-Z]+)=' || true)
	fails=0
	: >"$F/times.txt"
	while IFS=$'\t' read -r label cmd <&3; do
		t0=$(date +%s)
		rc=0
		# In the background, so that a signal ends the wait at once.
		timeout -k 30 "${FRESH_TIMEOUT:-5400}" \
			chroot "$root" /usr/bin/env -i "${env[@]}" /bin/bash -c "cd /root/project && $cmd" \
			</dev/null >"$F/make-$label.log" 2>&1 &
		wait $! || rc=$?
		kill_root
		t=$(($(date +%s) - t0))
		echo "$label $t $rc" >>"$F/times.txt"
		if [ $rc -eq 0 ]; then
			printf 'PASS fresh root: make %-13s %5ss  (%dm%02ds)\n' "$label" $t $((t / 60)) $((t % 60))
		else
			fails=$((fails + 1))
			[ $rc -ne 124 ] || label="$label (timed out)"
			printf 'FAIL fresh root: make %-13s %5ss  exit %d (log: %s)\n' "$label" $t $rc "$F/make-${label%% *}.log"
			tail -n 25 "$F/make-${label%% *}.log" | sed 's/^/     /'
			disk_full_note "$F" | sed 's/^/     /'
		fi
		case $label in
		run) grep -E '^demo:' "$F/make-$label.log" | sed 's/^/     /' || true ;;
		check | clients*) grep -E '^[0-9]+ passed, [0-9]+ failed' "$F/make-$label.log" | sed 's/^/     /' || true ;;
		esac
	done 3< <(fresh_entries)
	exit $fails
fi

T_ALL=$(date +%s)
need debootstrap git
need_cmd unshare chroot mount timeout
[ "$(id -u)" = 0 ] || die "check-fresh: run as root (debootstrap, chroot and mounts)"

# The host's enabled apt sources of type deb, one "URI SUITE COMPONENT..."
# line each, from one-line (.list) and deb822 (.sources) files.
host_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
			awk '$1 == "deb" && NF >= 4 { $1 = ""; sub(/^ +/, ""); print }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
		function flush(   n, m, i, j, U, S) {
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no") {
				n = split(uris, U); m = split(suites, S)
				for (i = 1; i <= n; i++)
					for (j = 1; j <= m; j++)
						print U[i], S[j], comps
			}
			types = uris = suites = comps = enabled = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[^ \t][^:]*:/ {
			i = index($0, ":")
			key = tolower(substr($0, 1, i - 1)); val = substr($0, i + 1)
			gsub(/^[ \t]+/, "", val); gsub(/[ \t]+$/, "", val)
			if (key == "types") types = val
			else if (key == "uris") uris = val
			else if (key == "suites") suites = val
			else if (key == "components") comps = val
			else if (key == "enabled") enabled = val
		}
		END { flush() }' "$f"
	done
}
# Debian 12's suites among them: bookworm, bookworm-updates, -security...
sources=$(host_sources | awk -v s="$SUITE" '$2 == s || index($2, s "-") == 1' | awk '!seen[$0]++')
mirror=$(echo "$sources" | awk -v s="$SUITE" '$2 == s { print $1; exit }')
[ -n "$mirror" ] || die "check-fresh: the host's apt sources have no '$SUITE' entry to take a mirror from"

mkdir -p "$F" "$FRESH_CACHE" "$CCACHE_DIR" "$apt_cache"
[ -z "$(mounts_under "$root")" ] || die "check-fresh: something is mounted under $root: $(mounts_under "$root")"

# The pristine root, as a tarball: made once, unpacked fresh every run.
tarball=$FRESH_CACHE/$SUITE-minbase.tar
key="$SUITE $INCLUDE $mirror $(dpkg-query -W -f='${Version}' debootstrap)"
if [ ! -f "$tarball" ] || [ "$(cat "$tarball.key" 2>/dev/null)" != "$key" ] ||
   [ -n "$(find "$tarball" -mtime +"${FRESH_MAX_DAYS:-14}")" ]; then
	stage "check-fresh: debootstrap $SUITE (minbase + $INCLUDE)"
	t0=$(date +%s)
	rm -rf "$F/debootstrap" "$tarball" "$tarball.key"
	debootstrap --variant=minbase --include="$INCLUDE" --cache-dir="$apt_cache" \
		"$SUITE" "$F/debootstrap" "$mirror" >"$F/debootstrap.log" 2>&1 ||
		die "check-fresh: debootstrap failed (see $F/debootstrap.log)"
	tar --numeric-owner -C "$F/debootstrap" -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
	echo "$key" >"$tarball.key"
	rm -rf "$F/debootstrap"
	stage "check-fresh: pristine root made in $(($(date +%s) - t0))s"
fi

rm -rf "$root"
mkdir -p "$root"
tar --numeric-owner -C "$root" -xf "$tarball"
# The machine's network and package sources, as a fresh install has them.
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "$sources" | awk '{ print "deb", $0 }' >"$root/etc/apt/sources.list"
git clone -q --no-hardlinks "$ROOT" "$root/root/project" || die "check-fresh: git clone of $ROOT failed"
head=$(git -C "$root/root/project" log -1 --format='%h %s')
[ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] ||
	stage "check-fresh: the work tree has uncommitted changes; testing the committed HEAD only"
stage "check-fresh: $head, in a fresh $SUITE minbase root ($(echo "$sources" | awk '{ print $2 }' | paste -sd' '))"
echo "check-fresh: $(($(disk_free_mib "$F") / 1024)) GiB free in $F; the root takes about 13 GiB"

rc=0
unshare --mount --propagation private "$0" --inside &
inner=$!
trap 'kill -TERM "$inner" 2>/dev/null; wait "$inner"; die "check-fresh: interrupted"' INT TERM
wait "$inner" || rc=$?
trap - INT TERM
[ -z "$(mounts_under "$root")" ] || die "check-fresh: mounts left under $root: $(mounts_under "$root")"
n=$(fresh_entries | wc -l)
[ $rc -le "$n" ] || die "check-fresh: stopped (exit $rc)"
t=$(($(date +%s) - T_ALL))
echo "check-fresh: wall time ${t}s ($((t / 60))m$(printf %02d $((t % 60)))s), the root's unpacking included"
echo "check-fresh: $((n - rc)) passed, $rc failed"
# A root that passed keeps only its logs: its kernel trees and objects
# would hold the disk until the next run.
if [ $rc -eq 0 ]; then
	rm -rf "$F/check"
	[ ! -d "$root/root/project/build/check" ] || cp -a "$root/root/project/build/check" "$F/check"
	rm -rf "$root"
	echo "check-fresh: the root removed; its logs in $F"
fi
[ $rc -eq 0 ]
