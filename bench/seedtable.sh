#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# seedtable.sh RESULTS.csv: the 2010 CMA RFC's table shape from a cmabench
# CSV, as Markdown: rows = hpcc-like tests, columns = transports, each cell
# the medians in MB/s at the measured process counts ("a / b / c").
# Ping-pong is always 2 processes.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 results.csv" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 1; }

awk -F, '
	/^# cmabench:/ && !machine { machine = substr($0, 3) }
	/^#/ || $1 == "pattern" { next }
	$7 != "MB/s" || $3 != "4k" { next }
	$1 == "ring" || $1 == "random" || ($1 == "pingpong" && $5 > 8) {
		if (!($2 in tseen)) { tseen[$2] = 1; tr[nt++] = $2 }
		if ($1 != "pingpong" && !(($1, $4) in pseen)) {
			pseen[$1, $4] = 1
			if ($1 == "ring") procs[np++] = $4
		}
		v[$1, $2, $4] = $8
		if ($1 == "pingpong") msg = $5
	}
	function cell(pat, t, list,    i, s, p) {
		s = ""
		for (i = 0; i < np; i++) {
			p = procs[i]
			s = s (i ? " / " : "") ((pat, t, p) in v ? sprintf("%.0f", v[pat, t, p]) : "-")
		}
		return s
	}
	END {
		print "<!-- " machine " -->"
		printf "| test (MB/s) |"
		for (i = 0; i < nt; i++) printf " %s |", tr[i]
		printf "\n|---|"
		for (i = 0; i < nt; i++) printf "---|"
		printf "\n"
		pl = ""
		for (i = 0; i < np; i++) pl = pl (i ? " / " : "") procs[i]
		printf "| Naturally ordered ring, %s procs |", pl
		for (i = 0; i < nt; i++) printf " %s |", cell("ring", tr[i])
		printf "\n| Randomly ordered ring, %s procs |", pl
		for (i = 0; i < nt; i++) printf " %s |", cell("random", tr[i])
		printf "\n| Ping-pong, 2 procs, %d bytes |", msg
		for (i = 0; i < nt; i++) {
			t = tr[i]; p = (t == "memcpy") ? 1 : 2
			printf " %s |", (("pingpong", t, p) in v) ? sprintf("%.0f", v["pingpong", t, p]) : "-"
		}
		printf "\n"
	}
' "$1"
