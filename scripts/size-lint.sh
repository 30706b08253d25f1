#!/bin/bash
# size-lint.sh - the size rule of the code style: no source file over 600
# lines, no function over 80 lines unless the comment just above it gives the
# reason in the form "long: <reason>" (a table that reads best in one piece,
# one switch over a format's cases...).
#
# usage: scripts/size-lint.sh [FILE...]   (default: the library's and the
# command line's C sources). Prints each offender as FILE:LINE: and exits 1
# if there is one. Functions are found in the project's own layout: the
# signature ends before a line that is only "{", and the body ends at the next
# line starting with "}".
set -u
cd "$(dirname "$0")/.." || exit 2
MAX_FILE=${MAX_FILE:-600}
MAX_FUNC=${MAX_FUNC:-80}
if [ $# -eq 0 ]; then
	set -- $(ls lib/*/*.[ch] lib/ssm/programs/*.[ch] app/*/*.[ch] include/*.h include/dssm/*.h 2>/dev/null)
fi
awk -v max_file="$MAX_FILE" -v max_func="$MAX_FUNC" '
function report(msg) { print msg; bad = 1 }
FNR == 1 {
	if (prev_file != "" && prev_lines > max_file)
		report(prev_file ":1: " prev_lines " lines (over " max_file ")")
	in_body = 0; comment = ""; sig = ""; in_comment = 0
}
{ prev_file = FILENAME; prev_lines = FNR }
# The comment block and signature just above a body.
!in_body && /^\/\*/ { comment = ""; sig = ""; in_comment = 1 }
!in_body && in_comment { comment = comment " " $0; if ($0 ~ /\*\//) in_comment = 0; next }
!in_body && /^$/ { sig = ""; if (!keep_comment) comment = ""; next }
!in_body && /^\{$/ {
	in_body = 1; start = FNR
	name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
	next
}
!in_body { sig = sig $0; next }
in_body && /^\}/ {
	in_body = 0
	len = FNR - start - 1
	if (len > max_func && comment !~ /long: *[a-zA-Z]/)
		report(FILENAME ":" start - 1 ": " name "() body " len " lines (over " max_func ", no \"long: reason\" in its comment)")
	comment = ""; sig = ""
}
END {
	if (prev_file != "" && prev_lines > max_file)
		report(prev_file ":1: " prev_lines " lines (over " max_file ")")
	exit bad
}' "$@"
