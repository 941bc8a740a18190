#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/tapcheck.sh ENV LOG "ABIS" ["EXCLUDED"]: check a log of /cma/run-tests
# against the selftest sources.  A run is complete only if, for each ABI
# of ABIS and each program of TEST_GEN_PROGS, the log holds exactly the
# cases its source defines (every TEST, TEST_F and TEST_F_TIMEOUT, once per
# variant of its fixture), less the test names in EXCLUDED (left out with
# the harness's -T), and nothing else.  A program that crashed, a case
# that did not report, a program that did not run: all fail the check.
#
# Every SKIP must be allowed for the environment ENV by vm/skips/ENV:
# lines "TEST-GLOB REASON-GLOB" (shell patterns on the case's name, such
# as flags.pidfd_readv, and on the reason it printed), each with a comment
# saying why the environment cannot run the case.  Any other skip fails:
# in the VM on our kernel every case must run, so a regression that makes
# a probe fail (a flag rejected, a feature missing) cannot hide as a skip.
# Prints one line per problem and a summary; exits 1 on any problem.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

env=$1 log=$2 abis=$3 excluded=${4:-}
src=${CMA_SELFTEST_SRC:-$ROOT/tools/testing/selftests/cma}
allow=$ROOT/vm/skips/$env
[ -f "$allow" ] || { echo "tapcheck: no skip list $allow"; exit 1; }
[ -f "$log" ] || { echo "tapcheck: no log $log"; exit 1; }

# The programs as the Makefile lists them (it finds them by wildcard).
progs=$(make -s --no-print-directory -C "$src" \
	--eval 'cma-print-progs: ; @echo $(notdir $(TEST_GEN_PROGS))' cma-print-progs)
[ -n "$progs" ] || { echo "tapcheck: no TEST_GEN_PROGS in $src/Makefile"; exit 1; }

# The case names a source defines: fixture[.variant].test, as the harness
# prints them.  Variants come from FIXTURE_VARIANT_ADD() lines, or from a
# header beside the source that adds them for the fixture a macro names
# (cma_rw_variants.h: "#define CMA_RW_FIXTURE name" before its #include).
cases_of() {
	awk -v src="$1" '
	function args(s) { sub(/^[A-Z_]+\(/, "", s); sub(/\).*/, "", s); gsub(/[ \t]/, "", s); return s }
	FILENAME != src && /^[A-Z_]*FIXTURE_VARIANT_ADD\(/ {
		h = FILENAME; sub(/.*\//, "", h); split(args($0), a, ","); tvar[h, a[1]] = tvar[h, a[1]] " " a[2]
	}
	FILENAME != src { next }
	/^#define [A-Z_]+[ \t]+[a-z_0-9]+[ \t]*$/ { def[$2] = $3; next }
	/^#include "/ {
		h = $2; gsub(/"/, "", h)
		for (m in def) if ((h, m) in tvar) { var[def[m]] = var[def[m]] tvar[h, m]; delete def[m] }
		next
	}
	/^FIXTURE_VARIANT_ADD\(/ { split(args($0), a, ","); var[a[1]] = var[a[1]] " " a[2]; next }
	/^TEST_F(_TIMEOUT|_SIGNAL)?\(/ { split(args($0), a, ","); t[++n] = a[1] "," a[2]; next }
	/^TEST(_SIGNAL)?\(/ { split(args($0), a, ","); t[++n] = "global," a[1]; next }
	END {
		for (i = 1; i <= n; i++) {
			split(t[i], a, ",")
			if (var[a[1]] == "") { print a[1] "." a[2]; continue }
			k = split(var[a[1]], v, " ")
			for (j = 1; j <= k; j++)
				print a[1] "." v[j] "." a[2]
		}
	}' "$(dirname "$1")"/*.h "$1" | LC_ALL=C sort
}

bad=0 total=0 skipped=0
problem() { echo "tapcheck ($env): $*"; bad=1; }

# The allowed skips, without comments and blank lines.
rules=$(grep -vE '^[[:space:]]*(#|$)' "$allow")

for abi in $abis; do
	for p in $progs; do
		want=$(cases_of "$src/$p.c")
		for t in $excluded; do
			want=$(printf '%s\n' "$want" | grep -vE "\\.$t\$")
		done
		# The block of this program: from its "# cma-selftest:" line to
		# the next one; only harness result lines ("ok N name"), not
		# the "ok N - text" lines of the scripts around it.
		block=$(awk -v me="# cma-selftest: $abi/$p" '
			/^# cma-selftest: / { on = ($0 == me); if (on) seen++; next }
			/^# Totals: / { on = 0; next }
			on && /^(not )?ok [0-9]+ [^ -]/ { print }
			END { if (seen != 1) print "RUNS " seen + 0 }' "$log")
		if printf '%s\n' "$block" | grep -q '^RUNS '; then
			problem "$abi/$p ran $(printf '%s\n' "$block" | sed -n 's/^RUNS //p') times, not once"
			continue
		fi
		got=$(printf '%s\n' "$block" | sed -E 's/^(not )?ok [0-9]+ ([^ ]+).*/\2/' | grep . | LC_ALL=C sort)
		missing=$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$got") | grep .)
		extra=$(comm -13 <(printf '%s\n' "$want") <(printf '%s\n' "$got") | grep .)
		[ -z "$missing" ] || problem "$abi/$p: cases that did not report: $(echo $missing)"
		[ -z "$extra" ] || problem "$abi/$p: cases reported twice or unknown to the source: $(echo $extra)"
		total=$((total + $(printf '%s\n' "$want" | grep -c .)))
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			name=$(echo "$line" | sed -E 's/^ok [0-9]+ ([^ ]+) # SKIP.*/\1/')
			reason=$(echo "$line" | sed -E 's/^ok [0-9]+ [^ ]+ # SKIP ?//')
			skipped=$((skipped + 1))
			ok=0
			while read -r tglob rglob; do
				# shellcheck disable=SC2053
				[[ $name == $tglob ]] && [[ $reason == $rglob ]] && { ok=1; break; }
			done <<<"$rules"
			[ "$ok" = 1 ] || problem "$abi/$p: $name skipped (\"$reason\"), not allowed by vm/skips/$env"
		done < <(printf '%s\n' "$block" | grep -E '^ok [0-9]+ [^ ]+ # SKIP')
	done
done
echo "tapcheck ($env): $total cases expected for ABIs $abis${excluded:+ (without $excluded)}, $skipped skipped$([ $bad = 0 ] && echo ', all allowed')"
exit $bad
