# SPDX-License-Identifier: GPL-2.0
# Common settings for the vm/ scripts.  Sourced, not executed.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${BUILD:-$ROOT/build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
mkdir -p "$B"

# The base tree: Debian's linux-source-6.12 in a git repository.
PKG=linux-source-6.12
BASE=$B/base
JOBS=${JOBS:-$(nproc)}

# Fixed identity and date so that the generated series is reproducible.
CMA_NAME="Cross Memory Attach Team"
CMA_EMAIL="cma-devel@lists.cma-project.org"
CMA_DATE="2026-12-01T12:00:00+00:00"
# The series' author (its From: and Signed-off-by:): whoever generates it,
# as git knows them here (user.name, user.email; read before the global
# configuration is hidden below), or CMA_AUTHOR_NAME and CMA_AUTHOR_EMAIL
# if both are set; the placeholder above only when no identity is
# configured.  The base tree and the series' committer keep the fixed
# identity, so no commit id but the series' own depends on who runs this;
# vm/series.sh check compares with the identity the committed series has.
if [ -z "${CMA_AUTHOR_NAME:-}" ] || [ -z "${CMA_AUTHOR_EMAIL:-}" ]; then
	CMA_AUTHOR_NAME=$(git -C "$ROOT" config user.name 2>/dev/null || true)
	CMA_AUTHOR_EMAIL=$(git -C "$ROOT" config user.email 2>/dev/null || true)
	if [ -z "$CMA_AUTHOR_NAME" ] || [ -z "$CMA_AUTHOR_EMAIL" ]; then
		CMA_AUTHOR_NAME=$CMA_NAME CMA_AUTHOR_EMAIL=$CMA_EMAIL
	fi
fi
export CMA_AUTHOR_NAME CMA_AUTHOR_EMAIL
export GIT_AUTHOR_NAME="$CMA_NAME" GIT_AUTHOR_EMAIL="$CMA_EMAIL"
export GIT_COMMITTER_NAME="$CMA_NAME" GIT_COMMITTER_EMAIL="$CMA_EMAIL"
export GIT_AUTHOR_DATE="$CMA_DATE" GIT_COMMITTER_DATE="$CMA_DATE"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/cma-ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# The kernel embeds build paths; make ccache hits survive a new clone.
export CCACHE_BASEDIR=$B CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime

stage() { printf '==> %s\n' "$*" >&2; }
die() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# pc_funcs MAP PCFILE: "FUNCTION COUNT" for the addresses in PCFILE (one
# per line, hex, as wide as MAP's), by the text symbols of MAP (a
# System.map) they fall in.
pc_funcs() {
	{ awk '$2 ~ /^[tTwW]$/ { print $1, 0, $3 }' "$1"
	  awk '{ print $1, 1 }' "$2"; } | LC_ALL=C sort -k1,1 -k2,2n |
		awk '$2 == 0 { cur = $3; next } { n[cur]++ }
		     END { for (f in n) print f, n[f] }' | LC_ALL=C sort
}

# need PKG...: install Debian packages that are missing.
need() {
	local missing=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	stage "installing:$missing"
	if [ ! -e "$B/.apt-updated" ]; then
		apt-get update -q >"$B/apt.log" 2>&1 || die "apt-get update failed (see $B/apt.log)"
		touch "$B/.apt-updated"
	fi
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing \
		>>"$B/apt.log" 2>&1 || die "apt-get install$missing failed (see $B/apt.log)"
}

# The programs the scripts run, with their Debian packages: vm/tools.list
# ("COMMAND PACKAGE"); vm/deps.sh installs them, vm/tools-check.sh checks
# that the list names every command the scripts call.
TOOLS_LIST=${TOOLS_LIST:-$ROOT/vm/tools.list}
# tool_pkg COMMAND: its package in vm/tools.list (empty if not listed);
# plain bash, so that it works whatever PATH lacks.
tool_pkg() {
	local c p _
	while read -r c p _; do
		[ "$c" = "$1" ] && { echo "$p"; return 0; }
	done <"$TOOLS_LIST"
}
# tool_packages: every package vm/tools.list names.
tool_packages() { awk '$1 !~ /^#/ && NF >= 2 { print $2 }' "$TOOLS_LIST" | sort -u; }
# need_cmd COMMAND...: fail, naming the command and its package, unless
# each is on PATH.
need_cmd() {
	local c p
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && continue
		p=$(tool_pkg "$c")
		die "$c not found: run make deps (vm/deps.sh installs it${p:+: Debian package $p})"
	done
}
# A command that is not found anywhere in these scripts says what to do
# (bash calls this function, in a subshell, before it returns 127).
command_not_found_handle() {
	local p what
	p=$(tool_pkg "$1")
	what="it: Debian package $p"
	[ -n "$p" ] || what="what vm/tools.list names; $1 is not listed there"
	printf 'FAIL: %s not found: run make deps (vm/deps.sh installs %s)\n' "$1" "$what" >&2
	return 127
}

# Worktree $1 of the base repository, detached at commit $2.  Only files that
# differ are rewritten, so incremental kernel builds stay incremental.
worktree_at() {
	local dir=$1 rev=$2
	if [ ! -e "$dir/.git" ]; then
		rm -rf "$dir"
		git -C "$BASE" worktree prune
		git -C "$BASE" worktree add -q --detach "$dir" "$rev" || die "worktree $dir"
	else
		git -C "$dir" checkout -q -f --detach "$rev" || die "checkout $rev in $dir"
		git -C "$dir" clean -q -fdx
	fi
}

# disk_free_mib DIR: MiB free on the file system that holds DIR.
disk_free_mib() {
	df -Pm "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'
}
# disk_full_note DIR: a line saying so when that file system is nearly
# full (under 1 GiB free), so that a failure from a full disk (git's
# "unable to write file", a linker's short write) reads as what it is.
disk_full_note() {
	local m
	m=$(disk_free_mib "$1")
	[ -n "$m" ] && [ "$m" -lt 1024 ] || return 0
	echo "the disk that holds $1 has $m MiB free: it filled up (make check needs about 12 GiB, check-fresh about 13 GiB more)"
}
