#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm/tools-scan.sh FILE...: the programs that shell scripts (and the
# recipes of Makefiles) run, found by parsing them (shfmt --to-json, read
# with jq), one "COMMAND FILE:LINE" line per call, after a "FUNC NAME"
# line for each function the files define.  Used by vm/tools-check.sh.
#
# A command is the first word of a simple command when that word is a
# literal (not "$VAR", "${arr[@]}" or a path into the repository); an
# absolute path counts as its base name.  Wrappers are looked through:
# nice, timeout, xargs, env, exec, command (not -v), setsid, nohup, chroot
# ROOT, flock FD, perf record ... --, and sh/bash -c 'LITERAL' is parsed
# in turn.  Functions defined in any of the files and "FUNC" lines of the
# output let the caller leave them out; shell builtins are the caller's to
# filter (bash knows them: compgen -b -k).  Not seen: a command held in a
# variable or an array ("${KMAKE[@]}"), text that another program runs
# (awk's system(), gdb scripts, the command of vm/run, which runs in the
# VM), and Makefile variables other than $(MAKE) and $(CC).
set -euo pipefail

# The jq program: from shfmt's syntax tree of one text, "F NAME" for a
# function it defines, "C NAME FILE:LINE" for a command it runs and
# "S LINE JSON" for the literal string of a sh/bash -c, to be parsed in
# turn ($off: the lines before the text in FILE).
# shellcheck disable=SC2016 # jq's variables, not the shell's
JQ='
# The literal value of a word, or null if it expands anything.
def lit:
	reduce (.Parts // [])[] as $p ("";
		if . == null then null
		elif $p.Type == "Lit" or $p.Type == "SglQuoted" then . + ($p.Value // "")
		elif $p.Type == "DblQuoted" then
			reduce ($p.Parts // [])[] as $q (.;
				if . == null or $q.Type != "Lit" then null else . + $q.Value end)
		else null end);
def assign: test("^[A-Za-z_][A-Za-z0-9_]*=");
def among($set): . as $x | any($set[]; . == $x);
# From word . of $w on, past the options of a wrapper ($flags take an
# argument), to its command, or to the word after "--".
def options($w; $flags):
	if . >= ($w | length) then .
	else $w[.] as $a
	| if $a == null then .
	elif $a == "--" then . + 1
	elif $a | among($flags) then . + 2 | options($w; $flags)
	elif ($a | startswith("-")) and $a != "-" then . + 1 | options($w; $flags)
	else . end
	end;
# The commands that the words $w run from word . on: [NAME, INDEX] for
# the first word, and for the command each wrapper runs.
def chain($w):
	. as $i
	| ($w | length) as $n
	| if $i >= $n then empty
	else $w[$i] as $word
	| if $word == null or $word == "" or ($word | assign) then empty
	elif ($word | contains("/")) and ($word | startswith("/") | not) then empty
	else ($word | sub(".*/"; "")) as $c
	| ($i + 1) as $j
	| [$c, $i],
	( if $c | among(["exec", "builtin", "nohup", "setsid", "time", "sudo"]) then
		$j | options($w; ["-a"]) | chain($w)
	elif $c == "command" then
		if $j < $n and ($w[$j] | among(["-v", "-V"])) then empty
		else $j | options($w; []) | chain($w) end
	elif $c == "nice" then $j | options($w; ["-n"]) | chain($w)
	elif $c == "timeout" then $j | options($w; ["-k", "-s"]) | . + 1 | chain($w)
	elif $c == "env" then
		$j | options($w; ["-u", "-C", "-S"])
		| until(. >= $n or $w[.] == null or ($w[.] | assign | not); . + 1)
		| chain($w)
	elif $c == "xargs" then
		$j | options($w; ["-P", "-n", "-I", "-L", "-s", "-d", "-a", "-E", "-i"])
		| if . >= $n then ["echo", . - 1] else chain($w) end
	elif $c == "chroot" then $j | options($w; []) | . + 1 | chain($w)
	elif $c == "perf" then
		first(range($j; $n) | select($w[.] == "--")) // null
		| if . == null then empty else . + 1 | chain($w) end
	else empty end )
	end
	end;
..
| objects
| if .Type == "FuncDecl" then "F\t" + .Name.Value
elif .Type == "CallExpr" and (.Args // [] | length) > 0 then
	[.Args[] | lit] as $w
	| (.Pos.Line + $off) as $line
	| 0 | chain($w)
	| .[0] as $c | .[1] as $i
	| "C\t\($c) \($src):\($line)",
	(if ($c | among(["sh", "bash"])) and $i + 2 < ($w | length)
		and $w[$i + 1] == "-c" and $w[$i + 2] != null
	then "S\t\($line)\t\($w[$i + 2] | tojson)" else empty end)
else empty end
'

# A Makefile's recipe lines as shell, each at the line where it starts
# (its continuation lines joined to it), every other line empty; $$ is the
# shell's $, $(MAKE) and $(CC) are make and cc, and any other make variable
# is a shell one ($MK_NAME, $MK_auto).
make_recipes() {
	awk '
	function shell(cmd, out, name) {
		sub(/^[-@+ ]+/, "", cmd)
		gsub(/\$\$/, "\001", cmd)
		gsub(/\$\(MAKE\)/, "make", cmd)
		gsub(/\$\(CC\)/, "cc", cmd)
		out = ""
		while (match(cmd, /\$[({][^)}]*[)}]/)) {
			name = substr(cmd, RSTART + 2, RLENGTH - 3)
			gsub(/[^A-Za-z0-9_]/, "_", name)
			out = out substr(cmd, 1, RSTART - 1) "$MK_" name
			cmd = substr(cmd, RSTART + RLENGTH)
		}
		cmd = out cmd
		gsub(/\$[@<^*?+|%]/, "$MK_auto", cmd)
		gsub(/\001/, "$", cmd)
		return cmd
	}
	function flush(k) {
		print shell(cmd)
		for (k = 0; k < blanks; k++)
			print ""
		inrecipe = 0
	}
	inrecipe {
		line = $0
		sub(/^\t+/, "", line)
		cmd = substr(cmd, 1, length(cmd) - 1) " " line
		blanks++
		if (cmd !~ /\\$/)
			flush()
		next
	}
	# A continued line of a rule or an assignment is no recipe.
	continued { print ""; continued = /\\$/; next }
	/^\t/ {
		cmd = substr($0, 2)
		blanks = 0
		if (cmd ~ /\\$/)
			inrecipe = 1
		else
			print shell(cmd)
		next
	}
	{ print ""; continued = /\\$/ }
	END { if (inrecipe) flush() }
	' "$1"
}

# scan FILE OFFSET <TEXT: the "F" and "C" lines of the jq program for
# TEXT, which starts after line OFFSET of FILE, and of each sh -c string
# in it.
scan() {
	local src=$1 off=$2 json lines tag a b
	json=$(shfmt --to-json -ln bash 2>"$tmp/err") ||
		die "$src: shfmt cannot parse it: $(cat "$tmp/err")"
	lines=$(jq -r --arg src "$src" --argjson off "$off" "$JQ" <<<"$json")
	while IFS=$'\t' read -r tag a b; do
		case $tag in
		F | C) printf '%s\t%s\n' "$tag" "$a" ;;
		S) jq -j . <<<"$b" | scan "$src" $((a - 1)) ;;
		esac
	done <<<"$lines"
}

die() {
	printf 'tools-scan: %s\n' "$*" >&2
	exit 2
}

shopt -s inherit_errexit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(
	for f; do
		case ${f##*/} in
		Makefile) make_recipes "$f" | scan "$f" 0 ;;
		*)
			# shellcheck disable=SC2094 # scan writes stdout, not "$f"
			scan "$f" 0 <"$f"
			;;
		esac
	done
)
printf '%s\n' "$out" | sed -n 's/^F\t/FUNC /p' | LC_ALL=C sort -u
printf '%s\n' "$out" | sed -n 's/^C\t//p'
