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

# The series is built with plumbing in a private index of the base
# repository: no work tree is checked out, which keeps "make check" fast.
# git_idx ARGS...: git on the base repository with that index.
git_idx() { GIT_INDEX_FILE=$B/gen.index git -C "$BASE" "$@"; }

# add_file PATH [STAGEDIFF]: note PATH (and STAGEDIFF) for the current
# patch; stage_patch then puts them all into the index at once.
NEW=() PATCHES=() STAGES=()
add_file() {
	local path=$1 stage=${2:-}
	[ -f "$ROOT/$path" ] || die "series: $path (in meta/series.conf) does not exist"
	case $path in
	*.patch) PATCHES+=("$path") ;;
	*) NEW+=("$path") ;;
	esac
	[ -z "$stage" ] || STAGES+=("$stage")
}

stage_patch() {
	local p blobs entries i=0
	if [ ${#NEW[@]} -gt 0 ]; then
		blobs=($(printf "$ROOT/%s\n" "${NEW[@]}" | git -C "$BASE" hash-object -w --stdin-paths)) ||
			die "series: cannot store ${NEW[*]}"
		for p in "${NEW[@]}"; do
			if [ -x "$ROOT/$p" ]; then printf '100755'; else printf '100644'; fi
			printf ' %s\t%s\n' "${blobs[i]}" "$p"
			i=$((i + 1))
		done | git_idx update-index --add --index-info || die "series: cannot add ${NEW[*]}"
	fi
	if [ ${#PATCHES[@]} -gt 0 ]; then
		# A .patch is relative to the base: start from the base's files.
		entries=$(git -C "$BASE" ls-tree cma-base -- "${PATCHES[@]%.patch}")
		[ "$(printf '%s\n' "$entries" | grep -c .)" = ${#PATCHES[@]} ] ||
			die "series: a file of ${PATCHES[*]} is not in the base"
		printf '%s\n' "$entries" | git_idx update-index --index-info
		git_idx apply --cached --whitespace=nowarn "${PATCHES[@]/#/$ROOT/}" ||
			die "series: ${PATCHES[*]}: one does not apply to the base"
	fi
	if [ ${#STAGES[@]} -gt 0 ]; then
		git_idx apply --cached "${STAGES[@]/#/$ROOT/}" ||
			die "series: ${STAGES[*]}: one no longer applies: update it (see meta/series.conf)"
	fi
	NEW=() PATCHES=() STAGES=()
}

gen() {
	local out=${1:-$ROOT/series} kw path rest n=0 pending= head tree

	"$ROOT/vm/base.sh"
	# Every overlay file must belong to a patch.
	local extra
	extra=$(comm -23 <(overlay_files) <(manifest_files | sort -u))
	[ -z "$extra" ] || die "series: overlay files not in meta/series.conf: $extra"

	head=$(git -C "$BASE" rev-parse cma-base)
	git_idx read-tree cma-base
	commit() {
		[ -n "$pending" ] || return 0
		stage_patch
		tree=$(git_idx write-tree)
		[ "$tree" != "$(git -C "$BASE" rev-parse "$head^{tree}")" ] ||
			die "series: patch $pending changes nothing"
		head=$(git stripspace <"$ROOT/$pending" | git -C "$BASE" commit-tree "$tree" -p "$head") ||
			die "series: cannot commit $pending"
	}
	while read -r kw path rest; do
		case $kw in
		''|'#'*) ;;
		patch) commit; pending=$path; n=$((n + 1)) ;;
		file) add_file "$path" $rest ;;
		dir) for f in $(overlay_files | grep "^$path/"); do add_file "$f"; done ;;
		*) die "series: meta/series.conf: unknown line '$kw $path'" ;;
		esac
	done <"$CONF"
	commit
	rm -f "$B/gen.index"

	git -C "$BASE" update-ref refs/heads/cma-series "$head"
	git -C "$BASE" config branch.cma-series.description "$(cat "$ROOT/meta/cover-letter.txt")"
	rm -rf "$out"
	mkdir -p "$out"
	# Addressed as a real submission would be: the mm list and its
	# maintainer, the API list for the new flags, the kselftest and doc
	# lists for the tests and the documentation.
	git -C "$BASE" -c core.abbrev=12 format-patch -q --cover-letter --cover-from-description=subject \
		--to=linux-mm@kvack.org --to="Andrew Morton <akpm@linux-foundation.org>" \
		--cc=linux-kernel@vger.kernel.org --cc=linux-api@vger.kernel.org \
		--cc=linux-kselftest@vger.kernel.org --cc=linux-doc@vger.kernel.org \
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
