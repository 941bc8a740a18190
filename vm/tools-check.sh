#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/tools-check.sh [--self-test]: every program that the project's
# host-side scripts run is named in vm/tools.list, which vm/deps.sh
# installs.  make check's tools stage; seconds, nothing is built.
#
# The scripts: every tracked file whose first line runs sh or bash or
# whose name ends in .sh (vm/lib.sh, vm/check-stages.sh are sourced), and
# every Makefile's recipes, less the ones that run inside the VM on its
# busybox (IN_VM below); clients/in-vm.sh runs on the host's programs
# (vm/run --hostfs), so it counts.  vm/tools-scan.sh parses them with
# shfmt and jq and lists the commands they call (see there for what it
# cannot see).  Fails when
#   - a script calls a command that vm/tools.list does not name (so a new
#     tool cannot be used without vm/deps.sh installing it: the reason
#     make bench-ab failed on a fresh Debian 12, issue 45),
#   - a listed command is not on PATH,
#   - the package listed is not the one that provides the command here
#     (dpkg -S along its symlinks), so the list cannot name a wrong one,
#   - a listed command is called by no script and has no "#" note saying
#     who runs it (a stale entry).
# --self-test: the check passes, then must fail with patch hidden from
# PATH, with patch left out of the list, and with a script that calls an
# unlisted command; each failure must name the command.
#   TOOLS_EXTRA=FILE...   scan these files too (the self-test's mutant)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_cmd shfmt jq dpkg-query
IN_VM="vm/hostfs-init.sh vm/debug-tests.sh"

if [ "${1:-}" = --self-test ]; then
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	expect_fail() { # NAME WHAT CMD...: CMD must fail and name NAME
		local name=$1 what=$2 out rc=0
		shift 2
		out=$("$@" 2>&1) || rc=$?
		if [ $rc -eq 0 ]; then
			echo "$out" | tail -n 5
			die "tools self-test: the check passed with $what"
		fi
		echo "$out" | grep -qw -- "$name" || { echo "$out"; die "tools self-test: with $what the check failed without naming $name"; }
		echo "self-test: with $what the check fails, naming $name:"
		echo "$out" | grep -w -- "$name" | head -n 3 | sed 's/^/    /'
	}
	"$0"
	# patch hidden from PATH: a PATH of links to every program but it.
	mkdir "$t/bin"
	IFS=: read -r -a dirs <<<"$PATH"
	for d in "${dirs[@]}"; do
		# The first of a name on PATH wins (-n), as for the shell.
		[ -d "$d" ] && cp -s -n "$d"/* "$t/bin/" 2>/dev/null || true
	done
	rm -f "$t/bin/patch"
	expect_fail patch "patch hidden from PATH" env PATH="$t/bin" "$0"
	# patch left out of the list, as vm/deps.sh left it out before.
	grep -v '^patch ' "$TOOLS_LIST" >"$t/tools.list"
	expect_fail patch "patch left out of vm/tools.list" env TOOLS_LIST="$t/tools.list" "$0"
	# A script that calls a tool nobody installs.
	printf '#!/bin/bash\nset -e\nx=$(nice -n 5 cma-unlisted-tool --now)\n' >"$t/mutant.sh"
	expect_fail cma-unlisted-tool "a script that calls cma-unlisted-tool" env TOOLS_EXTRA="$t/mutant.sh" "$0"
	echo "tools self-test: the check passes here and fails in each of the three cases"
	exit 0
fi

cd "$ROOT"
files=()
while IFS= read -r f; do
	[[ " $IN_VM " == *" $f "* ]] && continue
	[ -f "$f" ] || continue
	case $f in
	Makefile | */Makefile | *.sh) files+=("$f") ;;
	*) head -n 1 "$f" | grep -qE '^#!.*[/ ](ba)?sh( |$)' && files+=("$f") ;;
	esac
done < <(git ls-files -- vm bench clients man demo .ci Makefile tools/testing/selftests/cma)
# The scan is kept per content of the scripts and the scanner.
key=$( (printf '%s\n' "${files[@]}"; cat "${files[@]}" "$ROOT/vm/tools-scan.sh") | sha1sum | cut -c1-16)
if [ -s "$B/tools-scan/$key" ]; then
	scan=$(cat "$B/tools-scan/$key")
else
	scan=$("$ROOT/vm/tools-scan.sh" "${files[@]}") || die "tools: vm/tools-scan.sh failed"
	mkdir -p "$B/tools-scan"
	rm -f "$B/tools-scan"/*
	echo "$scan" >"$B/tools-scan/$key"
fi
if [ -n "${TOOLS_EXTRA:-}" ]; then
	# shellcheck disable=SC2086 # file names, split
	scan="$scan
$("$ROOT/vm/tools-scan.sh" $TOOLS_EXTRA)" || die "tools: vm/tools-scan.sh failed"
	# shellcheck disable=SC2206
	files+=($TOOLS_EXTRA)
fi

# Shell builtins and keywords, and the scripts' own functions, are no programs.
declare -A skip
while read -r w; do skip[$w]=1; done < <(bash -c 'compgen -b; compgen -k')
while read -r _ w; do skip[$w]=1; done < <(echo "$scan" | grep '^FUNC ')
declare -A where listed note
while read -r c w; do
	[ -n "${skip[$c]:-}" ] && continue
	where[$c]="${where[$c]:-}${where[$c]:+ }$w"
done < <(echo "$scan" | grep -v '^FUNC ')
while read -r c p rest; do
	case $c in '' | '#'*) continue ;; esac
	[ -z "${listed[$c]:-}" ] || die "tools: $TOOLS_LIST names $c twice"
	listed[$c]=$p
	case $rest in '#'*) note[$c]=1 ;; esac
done <"$TOOLS_LIST"

bad=0
fail() { echo "FAIL: $*"; bad=1; }
for c in $(printf '%s\n' "${!where[@]}" | LC_ALL=C sort); do
	[ -n "${listed[$c]:-}" ] && continue
	# shellcheck disable=SC2086
	fail "$c is called by $(echo ${where[$c]} | tr ' ' '\n' | head -n 3 | paste -sd' ')" \
		"but vm/tools.list does not name it: add \"$c PACKAGE\" there, so that vm/deps.sh installs it"
done

# Each listed command on PATH, and the files along its symlinks (with
# their /bin <-> /usr/bin aliases: Debian 12 registers some under /bin).
declare -A paths
allpaths=()
for c in $(printf '%s\n' "${!listed[@]}" | LC_ALL=C sort); do
	p=$(command -v "$c" 2>/dev/null) || true
	case $p in
	/*) ;;
	*) fail "$c not found on PATH (vm/tools.list: Debian package ${listed[$c]}; run make deps)"; continue ;;
	esac
	chain=()
	for _ in 1 2 3 4 5 6 7 8; do
		chain+=("$p")
		case $p in
		/usr/bin/* | /usr/sbin/*) chain+=("${p#/usr}") ;;
		/bin/* | /sbin/*) chain+=("/usr$p") ;;
		esac
		[ -L "$p" ] || break
		n=$(readlink "$p")
		case $n in /*) p=$n ;; *) p=$(dirname "$p")/$n ;; esac
	done
	# A command found first elsewhere (pyenv's python3, /usr/local) must
	# still have the package's own copy, which is what a fresh machine runs.
	chain+=("/usr/bin/$c" "/usr/sbin/$c" "/bin/$c" "/sbin/$c")
	paths[$c]="${chain[*]}"
	allpaths+=("${chain[@]}")
done
# One dpkg -S for all: "pkg[:arch][, pkg...]: path" lines.
declare -A owner
while IFS= read -r line; do
	case $line in diversion*) continue ;; esac
	pk=${line%%: /*} path=${line#*: }
	for q in ${pk//,/ }; do owner[$path]="${owner[$path]:-} ${q%%:*}"; done
done < <(dpkg -S "${allpaths[@]}" 2>/dev/null || true)
for c in $(printf '%s\n' "${!paths[@]}" | LC_ALL=C sort); do
	found=
	for p in ${paths[$c]}; do found="$found ${owner[$p]:-}"; done
	[[ " $found " == *" ${listed[$c]} "* ]] ||
		fail "$c: vm/tools.list says Debian package ${listed[$c]}, but here $(command -v "$c") comes from:${found:- no package}"
done

for c in $(printf '%s\n' "${!listed[@]}" | LC_ALL=C sort); do
	[ -n "${where[$c]:-}" ] || [ -n "${note[$c]:-}" ] ||
		fail "$c is in vm/tools.list, but no script calls it: remove it, or add a '#' note saying who runs it"
done

[ $bad = 0 ] || die "tools: see above (vm/tools.list, vm/tools-check.sh)"
echo "tools: ${#files[@]} scripts call ${#where[@]} programs; vm/tools.list names them and $((${#listed[@]} - ${#where[@]})) more that run unseen, each on PATH and from the package it names"
