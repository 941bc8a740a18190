#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The overlay-to-series generator.
#   vm/series.sh gen [DIR]   commit the overlay onto the base, one commit per
#                            patch of meta/series.conf, and write the series
#                            with git format-patch into DIR (default series/)
#   vm/series.sh check       fail if series/ differs from a fresh generation
#   vm/series.sh apply       git am series/*.patch onto a fresh base, and
#                            check the result out in $B/tree for building
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONF=$ROOT/meta/series.conf
# Overlay files live at kernel paths under these top-level names.
OVERLAY_TOP=(arch include init kernel mm scripts tools Documentation MAINTAINERS.patch)

overlay_files() {
	(cd "$ROOT" && git ls-files -co --exclude-standard -- "${OVERLAY_TOP[@]}" | sort -u)
}

# Expand the manifest's file/dir lines to overlay paths, one per line.
manifest_files() {
	local kw path rest
	while read -r kw path rest; do
		case $kw in
		file) echo "$path" ;;
		dir) overlay_files | grep "^$path/" ;;
		esac
	done <"$CONF"
}

# add_file WORKTREE PATH [STAGEDIFF]
add_file() {
	local wt=$1 path=$2 stage=${3:-} target
	[ -f "$ROOT/$path" ] || die "series: $path (in meta/series.conf) does not exist"
	case $path in
	*.patch)
		# A .patch is relative to the base: start from the base's file.
		target=${path%.patch}
		git -C "$wt" checkout -q cma-base -- "$target"
		git -C "$wt" apply --whitespace=nowarn "$ROOT/$path" ||
			die "series: $path does not apply to $target"
		;;
	*)
		target=$path
		mkdir -p "$wt/$(dirname "$path")"
		cp "$ROOT/$path" "$wt/$path"
		;;
	esac
	if [ -n "$stage" ]; then
		git -C "$wt" apply "$ROOT/$stage" ||
			die "series: $stage no longer applies to $target: update it (see meta/series.conf)"
	fi
	git -C "$wt" add -f -- "$target"
}

gen() {
	local out=${1:-$ROOT/series} wt=$B/gen kw path rest n=0 pending=

	"$ROOT/vm/base.sh"
	# Every overlay file must belong to a patch.
	local extra
	extra=$(comm -23 <(overlay_files) <(manifest_files | sort -u))
	[ -z "$extra" ] || die "series: overlay files not in meta/series.conf: $extra"

	worktree_at "$wt" cma-base
	git -C "$wt" checkout -q -B cma-series

	commit() {
		[ -n "$pending" ] || return 0
		git -C "$wt" diff --cached --quiet && die "series: patch $pending changes nothing"
		git -C "$wt" commit -q --cleanup=whitespace -F "$ROOT/$pending"
	}
	while read -r kw path rest; do
		case $kw in
		''|'#'*) ;;
		patch) commit; pending=$path; n=$((n + 1)) ;;
		file) add_file "$wt" "$path" $rest ;;
		dir) for f in $(overlay_files | grep "^$path/"); do add_file "$wt" "$f"; done ;;
		*) die "series: meta/series.conf: unknown line '$kw $path'" ;;
		esac
	done <"$CONF"
	commit

	git -C "$wt" config branch.cma-series.description "$(cat "$ROOT/meta/cover-letter.txt")"
	rm -rf "$out"
	mkdir -p "$out"
	git -C "$wt" -c core.abbrev=12 format-patch -q --cover-letter --cover-from-description=subject \
		--base=cma-base --no-signature --no-thread -o "$out" cma-base..cma-series ||
		die "series: git format-patch failed"
	stage "series: $n patches written to ${out#"$ROOT"/}"
}

check() {
	local tmp=$B/series-check
	gen "$tmp"
	if ! diff -r -q "$ROOT/series" "$tmp" >/dev/null 2>&1; then
		diff -r -u "$ROOT/series" "$tmp" | head -40 >&2
		die "series/ is not what the overlay generates: run 'make series' and commit"
	fi
	stage "series: series/ matches the overlay"
}

apply() {
	local am=$B/am
	"$ROOT/vm/base.sh"
	worktree_at "$am" cma-base
	ls "$ROOT"/series/0*.patch >/dev/null 2>&1 || die "series: no patches in series/ (run make series)"
	local patches
	patches=$(ls "$ROOT"/series/*.patch | grep -v '/0000-cover-letter.patch$')
	# shellcheck disable=SC2086
	if ! git -C "$am" am -q $patches >"$B/am.log" 2>&1; then
		git -C "$am" am --abort 2>/dev/null || true
		die "series: git am of series/ onto the base failed (see $B/am.log)"
	fi
	worktree_at "$B/tree" "$(git -C "$am" rev-parse HEAD)"
	stage "series: applied $(git -C "$am" rev-list --count cma-base..HEAD) patches, tree at $B/tree"
}

case ${1:-} in
gen) gen "${2:-}" ;;
check) check ;;
apply) apply ;;
*) die "usage: vm/series.sh gen [DIR] | check | apply" ;;
esac
