#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every test of the project, in stages.  Each stage prints one
# line; the kselftest cases of the stages that run them are counted one by
# one, per environment and ABI.  Ends with three lines: "cases: ..." (the
# kselftest cases: TAP lines of kselftest_harness, "ok N fixture.test"),
# "stages: ..." (one verdict per stage), and the closing line CI reads,
# "N passed, N failed, N skipped", which counts the stages, a stage with a
# failed case or a missing case counted as failed.  Script checks and
# fuzzer summaries inside a stage's log ("ok 1 - fault injection
# disabled", "ok 1 cma_fuzz: ...") are part of their stage, not cases.
# Exits non-zero on any failure.
# STAGES="a b" runs only the named stages (see vm/check-stages.sh; the
# EXTRA_STAGES there run only when named, e.g. by make check-uml).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

LOGS=$B/check
mkdir -p "$LOGS"
PASS=0 FAIL=0 SKIP=0
CASE_PASS=0 CASE_FAIL=0 CASE_SKIP=0
FAILED=()
T0=$(date +%s)

selected() { [ -z "${STAGES:-}" ] || [[ " $STAGES " == *" $1 "* ]]; }

# Background stages (BG_STAGES in vm/check-stages.sh) start early, beside
# the others, and are reported in their place in the list.
declare -A BG_PID BG_T0
# kill_tree PID: PID and everything it started (a VM, a build).
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill "$1" 2>/dev/null
}
# A run that ends early takes its background stages with it.
trap 'for p in "${BG_PID[@]}"; do kill_tree "$p"; done' EXIT
bg_start() {
	local name=$1
	selected "$name" || return 0
	[ -z "${BG_PID[$name]:-}" ] || return 0
	rm -f "$LOGS/$name.rc" "$LOGS/$name.cpu"
	# Detached (not a child of this shell), so that its CPU time is not
	# counted in whichever stage runs when it ends; it reports its own.
	( (
		"st_${name//-/_}" >"$LOGS/$name.log" 2>&1
		rc=$?
		child_cpu "$BASHPID" >"$LOGS/$name.cpu"
		echo $rc >"$LOGS/$name.rc"
	) </dev/null & echo $! >"$LOGS/$name.pid" )
	BG_PID[$name]=$(cat "$LOGS/$name.pid")
	BG_T0[$name]=$(date +%s)
}

# CPU seconds used so far by the finished children of this shell (or of
# the process PID).
child_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($16 + $17) / hz }' "/proc/${1:-$$}/stat"
}

# stage NAME CMD...: run CMD with its output in $LOGS/NAME.log.
# Its locals have names no stage function uses (stages run in its scope).
stage_run() {
	local name=$1 _st_t0 _st_rc _st_cpu0
	_st_t0=$(date +%s)
	_st_cpu0=$(child_cpu)
	shift
	RAN=0
	selected "$name" || return 0
	RAN=1
	if [ -n "${BG_PID[$name]:-}" ]; then
		while [ ! -s "$LOGS/$name.rc" ] && kill -0 "${BG_PID[$name]}" 2>/dev/null; do
			sleep 1
		done
		_st_rc=$(cat "$LOGS/$name.rc" 2>/dev/null || echo 1)
		_st_t0=${BG_T0[$name]}
		_st_cpu0=$(($(child_cpu) - $(cat "$LOGS/$name.cpu" 2>/dev/null || echo 0)))
		unset "BG_PID[$name]"
	else
		"$@" >"$LOGS/$name.log" 2>&1
		_st_rc=$?
	fi
	DONE=$((DONE + 1))
	_stage_ok=0
	if [ $_st_rc -eq 0 ]; then
		_stage_ok=1
		PASS=$((PASS + 1))
		printf 'PASS %-22s %4ss  (cpu %ss)\n' "$name" $(($(date +%s) - _st_t0)) $(($(child_cpu) - _st_cpu0))
	elif [ $_st_rc -eq 77 ]; then
		SKIP=$((SKIP + 1))
		printf 'SKIP %-22s %s\n' "$name" "$(tail -n 1 "$LOGS/$name.log")"
	else
		FAIL=$((FAIL + 1))
		FAILED+=("$name")
		printf 'FAIL %-22s %4ss  (log: %s)\n' "$name" $(($(date +%s) - _st_t0)) "$LOGS/$name.log"
		grep -E 'FAIL|not ok|rror' "$LOGS/$name.log" | head -n 15 | sed 's/^/     /'
		disk_full_note "$B" | sed 's/^/     /'
	fi
	return $_st_rc
}

# A kselftest_harness case's TAP line: "ok N fixture[.variant].test",
# with an optional "# SKIP reason" (a script's "ok N - ..." is none).
CASE_RE='^(not )?ok [0-9]+ [A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+( # .*)?$'

# stage_failed WHY: count the stage just reported as failed after all.
stage_failed() {
	FAILED+=("$1")
	[ "$_stage_ok" = 1 ] || return 0
	_stage_ok=0 PASS=$((PASS - 1)) FAIL=$((FAIL + 1))
}

# tap_count LABEL LOG: add the kselftest cases of LOG to the case totals;
# any failed case, failed script check or an empty log fails the stage.
tap_count() {
	local label=$1 log=$2 cases p f s other
	cases=$(grep -E "$CASE_RE" "$log")
	p=$(grep -cE '^ok ' <<<"$cases")
	s=$(grep -cE '^ok [0-9]+ [^ ]+ # SKIP' <<<"$cases")
	f=$(grep -cE '^not ok ' <<<"$cases")
	p=$((p - s))
	CASE_PASS=$((CASE_PASS + p)) CASE_FAIL=$((CASE_FAIL + f)) CASE_SKIP=$((CASE_SKIP + s))
	printf '     %s: %d cases passed, %d failed, %d skipped\n' "$label" "$p" "$f" "$s"
	[ "$f" -eq 0 ] || { stage_failed "$label"; grep -E '^not ok' <<<"$cases" | head -n 20 | sed 's/^/     /'; }
	other=$(grep -E '^not ok [0-9]+ ' "$log" | grep -vE "$CASE_RE")
	[ -z "$other" ] || { stage_failed "$label: script checks failed"; head -n 10 <<<"$other" | sed 's/^/     /'; }
	[ $((p + f + s)) -gt 0 ] || stage_failed "$label: no test ran"
}

# tap_check ENV LOG "ABIS" ["EXCLUDED"]: every case of the sources ran, and
# every skip is allowed in ENV (vm/tapcheck.sh, vm/skips/ENV).
tap_check() {
	local out
	out=$(CMA_SELFTEST_SRC=$B/tree/tools/testing/selftests/cma "$ROOT/vm/tapcheck.sh" "$@")
	if [ $? -eq 0 ]; then
		echo "$out" | tail -n 1 | sed 's/^/     /'
	else
		echo "$out" | head -n 20 | sed 's/^/     /'
		stage_failed "$1: cases missing or skipped ($(basename "$2"))"
	fi
}

. "$ROOT/vm/check-stages.sh"
# No stage before BG_AFTER in this run: background stages start at once.
selected "$BG_AFTER" || for b in $BG_STAGES; do bg_start "$b"; done

# Every selected stage must report: a script error that leaves the loop
# early fails the run instead of passing it.
DONE=0 WANT=0
for s in $CHECK_STAGES $EXTRA_STAGES; do
	[[ " $EXTRA_STAGES " == *" $s "* ]] && [[ " ${STAGES:-} " != *" $s "* ]] && continue
	selected "$s" && WANT=$((WANT + 1))
done
for s in $CHECK_STAGES $EXTRA_STAGES; do
	[[ " $EXTRA_STAGES " == *" $s "* ]] && [[ " ${STAGES:-} " != *" $s "* ]] && continue
	stage_run "$s" "st_${s//-/_}"
	case $s in
	"$BG_AFTER") for b in $BG_STAGES; do bg_start "$b"; done ;;
	esac
	case $s in
	vm-selftests) [ "$RAN" = 1 ] && tap_count "kselftests in the VM (x86_64, i386, x32)" "$LOGS/$s.log" &&
		tap_check vm "$LOGS/$s.log" "x86_64 i386 x32" ;;
	native-selftests) [ "$RAN" = 1 ] && tap_count "kselftests on the host kernel $(uname -r)" "$LOGS/$s.log" &&
		tap_check native "$LOGS/$s.log" "$NATIVE_ABIS" ;;
	uml-selftests) [ "$RAN" = 1 ] && tap_count "kselftests under User-Mode Linux (x86_64)" "$LOGS/$s.log" &&
		tap_check uml "$LOGS/$s.log" x86_64 ;;
	uml-debug-selftests) [ "$RAN" = 1 ] && tap_count "kselftests under User-Mode Linux with lockdep and DEBUG_VM (x86_64)" "$LOGS/$s.log" &&
		tap_check uml "$LOGS/$s.log" x86_64 ;;
	# vm/check-debug.sh ran vm/tapcheck.sh on each kernel's selftests.
	debug-vm) [ "$RAN" = 1 ] && tap_count "debug VM, ${CHECK_DEBUG_KERNELS:-debug-rt} (selftests and checks)" "$LOGS/$s.log" &&
		grep '^tapcheck (' "$LOGS/$s.log" | sed 's/^/     /' ;;
	esac
done

if [ "$DONE" -ne "$WANT" ]; then
	FAIL=$((FAIL + 1))
	FAILED+=("make check stopped after $DONE of $WANT stages")
fi
echo
echo "make check: $(($(date +%s) - T0))s; logs in $LOGS"
[ ${#FAILED[@]} -eq 0 ] || echo "failed: ${FAILED[*]}"
echo "cases: $CASE_PASS passed, $CASE_FAIL failed, $CASE_SKIP skipped (kselftest cases, per environment and ABI)"
echo "stages: $PASS passed, $FAIL failed, $SKIP skipped"
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" -eq 0 ] && [ "$CASE_FAIL" -eq 0 ]
