#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Check every man page under man/ with man(1)'s own warnings: any output on
# stderr is a failure.  Pages that only source another page (".so") are
# skipped: their target is checked on its own.
#
#   man/check.sh [DIR]     DIR defaults to the directory of this script

dir=${1:-$(dirname "$0")}
status=0
checked=0

# One page per line; no globbing of the names.
set -f
IFS='
'
for page in $(find "$dir" -type f -name '*.[1-9]' | sort); do
	# A page whose only non-comment line is a .so request.
	if [ "$(grep -v '^\.\\"' "$page" | grep -c .)" -eq 1 ] &&
	   grep -q '^\.so ' "$page"; then
		continue
	fi
	out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
	rc=$?
	checked=$((checked + 1))
	if [ $rc -ne 0 ] || [ -n "$out" ]; then
		echo "$page: man --warnings reported (exit $rc):"
		printf '%s\n' "$out" | sed 's/^/    /'
		status=1
	fi
done

if [ "$checked" -eq 0 ]; then
	echo "man/check.sh: no man pages found under $dir"
	exit 1
fi
[ $status -eq 0 ] && echo "man/check.sh: $checked page(s) clean"
exit $status
