#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The overlay-to-series generator.  Two series come from one overlay:
#   series/        meta/series.conf onto cma-base (the feature from nothing)
#   series-stock/  meta/series-stock.conf onto stock (Debian's tree as
#                  shipped, with mainline's Cross Memory Attach): incremental
#
#   vm/series.sh gen [DIR]   commit the overlay onto the base, one commit per
#                            patch of the manifest, and write each series
#                            with git format-patch (DIR: series/ into DIR
#                            and series-stock/ into DIR-stock; default the
#                            repository's series/ and series-stock/)
#   vm/series.sh check       fail if either folder differs from a fresh
#                            generation with the author the folder has
#                            (see "The author" in README.md)
#   vm/series.sh apply       git am series/*.patch onto a fresh base, and
#                            check the result out in $B/tree for building
#   vm/series.sh apply-stock git am series-stock/*.patch onto a fresh stock
#                            tree in $B/am-stock (not checked out elsewhere)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The manifest, base tag, branch and cover letter of the series being
# generated; set by use_series.
CONF='' BASE_REF='' BRANCH='' COVER=''
use_series() {
	case $1 in
	series) CONF=$ROOT/meta/series.conf BASE_REF=cma-base BRANCH=cma-series
		COVER=$ROOT/meta/cover-letter.txt ;;
	series-stock) CONF=$ROOT/meta/series-stock.conf BASE_REF=stock BRANCH=cma-stock-series
		COVER=$ROOT/meta/cover-letter-stock.txt ;;
	*) die "series: unknown series $1" ;;
	esac
}
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
		file|present) echo "$path" ;;
		dir) overlay_files | grep "^$path/" ;;
		esac
	done <"$CONF"
}

# The series is built with plumbing in a private index of the base
# repository: no work tree is checked out, which keeps "make check" fast.
# git_idx ARGS...: git on the base repository with that index.
git_idx() { GIT_INDEX_FILE=$B/gen.index git -C "$BASE" "$@"; }

# add_file PATH [STAGEDIFF...]: note PATH (and its STAGEDIFFs, applied in
# order) for the current patch; stage_patch then puts them all into the
# index at once.
NEW=() PATCHES=() STAGES=() DIFFS=()
add_file() {
	local path=$1
	shift
	[ -f "$ROOT/$path" ] || die "series: $path (in ${CONF#"$ROOT"/}) does not exist"
	case $path in
	*.patch) PATCHES+=("$path") ;;
	*) NEW+=("$path") ;;
	esac
	STAGES+=("$@")
}

# add_diff DIFF: a kernel patch kept as it is (a small change to a file of
# the base tree, e.g. a fix to mainline's code), applied to the index as it
# stands after this patch's files.
add_diff() {
	[ -f "$ROOT/$1" ] || die "series: $1 (in ${CONF#"$ROOT"/}) does not exist"
	DIFFS+=("$1")
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
		entries=$(git -C "$BASE" ls-tree "$BASE_REF" -- "${PATCHES[@]%.patch}")
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
	if [ ${#DIFFS[@]} -gt 0 ]; then
		git_idx apply --cached "${DIFFS[@]/#/$ROOT/}" ||
			die "series: ${DIFFS[*]}: one does not apply to the tree before it"
	fi
	NEW=() PATCHES=() STAGES=() DIFFS=()
}

# gen_one NAME OUT: generate series NAME (see use_series) into OUT.
gen_one() {
	local name=$1 out=$2 kw path rest n=0 pending= head tree extra msg cc
	use_series "$name"

	# Every overlay file must belong to a patch, or (in a series onto a
	# tree that has mainline's code) be named as a change the tree already
	# carries.
	extra=$(comm -23 <(overlay_files) <(manifest_files | sort -u))
	[ -z "$extra" ] || die "series: overlay files not in ${CONF#"$ROOT"/}: $extra"

	head=$(git -C "$BASE" rev-parse "$BASE_REF")
	git_idx read-tree "$BASE_REF"
	commit() {
		[ -n "$pending" ] || return 0
		stage_patch
		tree=$(git_idx write-tree)
		[ "$tree" != "$(git -C "$BASE" rev-parse "$head^{tree}")" ] ||
			die "series: patch $pending changes nothing"
		# The messages sign off as the placeholder: sign off as the author.
		msg=$(git stripspace <"$ROOT/$pending")
		msg=${msg//"Signed-off-by: $CMA_NAME <$CMA_EMAIL>"/"Signed-off-by: $CMA_AUTHOR_NAME <$CMA_AUTHOR_EMAIL>"}
		head=$(printf '%s\n' "$msg" |
			GIT_AUTHOR_NAME=$CMA_AUTHOR_NAME GIT_AUTHOR_EMAIL=$CMA_AUTHOR_EMAIL \
			git -C "$BASE" commit-tree "$tree" -p "$head") ||
			die "series: cannot commit $pending"
	}
	while read -r kw path rest; do
		case $kw in
		''|'#'*) ;;
		present) [ -f "$ROOT/$path" ] || die "series: $path (in ${CONF#"$ROOT"/}) does not exist" ;;
		patch) commit; pending=$path; n=$((n + 1)) ;;
		file) add_file "$path" $rest ;;
		dir) for f in $(overlay_files | grep "^$path/"); do add_file "$f"; done ;;
		diff) add_diff "$path" ;;
		*) die "series: ${CONF#"$ROOT"/}: unknown line '$kw $path'" ;;
		esac
	done <"$CONF"
	commit
	rm -f "$B/gen.index"

	git -C "$BASE" update-ref "refs/heads/$BRANCH" "$head"
	git -C "$BASE" config "branch.$BRANCH.description" "$(cat "$COVER")"
	rm -rf "$out" "$out.cover"
	mkdir -p "$out"
	# Addressed as a real submission would be (scripts/get_maintainer.pl):
	# every patch to the mm list and its maintainer, with linux-kernel and
	# linux-api (the series changes the syscalls' ABI); the people and
	# lists of one patch only (kselftest, doc, arch, pidfd) are Cc:
	# trailers of its message, which git send-email adds.  The cover
	# letter goes to all of them: it is written again with every Cc:
	# trailer of the series added, but stable@: the fixes that carry
	# "Cc: stable" reach stable by themselves, the rest of the series
	# must not.  Its From: is the committer's.
	fmt() {
		GIT_COMMITTER_NAME=$CMA_AUTHOR_NAME GIT_COMMITTER_EMAIL=$CMA_AUTHOR_EMAIL \
		git -C "$BASE" -c core.abbrev=12 format-patch -q --cover-letter --cover-from-description=subject \
			--to=linux-mm@kvack.org --to="Andrew Morton <akpm@linux-foundation.org>" \
			--cc=linux-kernel@vger.kernel.org --cc=linux-api@vger.kernel.org \
			--base="$BASE_REF" --no-signature --no-thread "$@" "$BASE_REF..$BRANCH" ||
			die "series: git format-patch failed"
	}
	fmt -o "$out"
	cc=()
	while IFS= read -r msg; do
		[ -n "$msg" ] && cc+=("--cc=$msg")
	done < <(git -C "$BASE" log --reverse --format='%(trailers:key=Cc,valueonly,unfold)' "$BASE_REF..$BRANCH" |
		awk 'NF && !/stable@vger\.kernel\.org/ && !seen[$0]++')
	fmt -o "$out.cover" "${cc[@]}"
	mv "$out.cover/0000-cover-letter.patch" "$out/0000-cover-letter.patch"
	rm -rf "$out.cover"
	stage "series: $n patches written to ${out#"$ROOT"/} (onto $BASE_REF)"
}

# gen [DIR]: both series, into series/ and series-stock/ (or DIR and
# DIR-stock).
gen() {
	local out=${1:-$ROOT/series}
	"$ROOT/vm/base.sh"
	gen_one series "$out"
	gen_one series-stock "$out-stock"
}

# committed_author FOLDER: the author of the series committed in FOLDER,
# as two lines, name and e-mail address (nothing if it has no patch).
committed_author() {
	local p
	for p in "$1"/0001-*.patch; do break; done
	[ -f "$p" ] || return 0
	git -C "$BASE" mailinfo /dev/null /dev/null <"$p" | sed -n 's/^Author: //p; s/^Email: //p'
}

# check: generate both series again, each with the author its committed
# folder has, and compare: who generated the committed series does not
# matter, only that everything else is what the overlay gives.
check() {
	local tmp=$B/series-check s bad=0 name email
	"$ROOT/vm/base.sh"
	for s in series series-stock; do
		name='' email=''
		{ IFS= read -r name && IFS= read -r email; } < <(committed_author "$ROOT/$s") || true
		(
			if [ -n "$name" ] && [ -n "$email" ]; then
				CMA_AUTHOR_NAME=$name CMA_AUTHOR_EMAIL=$email
			fi
			gen_one "$s" "$tmp${s#series}"
		)
	done
	for s in series series-stock; do
		if ! diff -r -q "$ROOT/$s" "$tmp${s#series}" >/dev/null 2>&1; then
			diff -r -u "$ROOT/$s" "$tmp${s#series}" | head -40 >&2 || true
			bad=1
		fi
	done
	[ $bad = 0 ] || die "series/ or series-stock/ is not what the overlay generates: run 'make series' and commit"
	stage "series: series/ and series-stock/ match the overlay"
}

# am_onto DIR BASE_REF FOLDER: a worktree at BASE_REF in DIR with the
# patches of FOLDER applied by git am.
am_onto() {
	local am=$1 ref=$2 folder=$3 patches
	"$ROOT/vm/base.sh"
	worktree_at "$am" "$ref"
	ls "$ROOT/$folder"/0*.patch >/dev/null 2>&1 || die "series: no patches in $folder/ (run make series)"
	patches=$(ls "$ROOT/$folder"/*.patch | grep -v '/0000-cover-letter.patch$')
	# shellcheck disable=SC2086
	if ! git -C "$am" am -q $patches >"$am.log" 2>&1; then
		git -C "$am" am --abort 2>/dev/null || true
		die "series: git am of $folder/ onto $ref failed (see $am.log)"
	fi
}

apply() {
	am_onto "$B/am" cma-base series
	worktree_at "$B/tree" "$(git -C "$B/am" rev-parse HEAD)"
	stage "series: applied $(git -C "$B/am" rev-list --count cma-base..HEAD) patches, tree at $B/tree"
}

apply_stock() {
	am_onto "$B/am-stock" stock series-stock
	stage "series: applied $(git -C "$B/am-stock" rev-list --count stock..HEAD) patches of series-stock/ onto stock, in $B/am-stock"
}

case ${1:-} in
gen) gen "${2:-}" ;;
check) check ;;
apply) apply ;;
apply-stock) apply_stock ;;
*) die "usage: vm/series.sh gen [DIR] | check | apply | apply-stock" ;;
esac
