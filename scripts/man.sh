#!/usr/bin/env bash
# man.sh DSSM OUTDIR VERSION - man pages from the command's own --help, by
# help2man: dssm.1, and dssm-CMD.1 for each subcommand (as git has them), so
# they never drift from what `dssm CMD --help` says. Without help2man (Debian
# package help2man; scripts/deps.sh installs it) it says so and makes none.
set -eu
dssm=$1 out=$2 version=$3
if ! command -v help2man >/dev/null; then
	echo "man.sh: help2man is not installed (apt-get install help2man): no man pages" >&2
	exit 0
fi
mkdir -p "$out"
# "  ls        list the streams of this host" lines, after "Commands:"
commands=$("$dssm" --help | awk '/Commands:/ {on = 1; next} on && NF == 0 {exit} on')
see_also=$(mktemp)
trap 'rm -f "$see_also"' EXIT
{
	echo "[SEE ALSO]"
	while read -r cmd _; do printf '.BR dssm\\-%s (1),\n' "$cmd"; done <<<"$commands"
	echo "and \`dssm help COMMAND'."
} >"$see_also"
# help2man fills the examples into one paragraph: keep them one a line
examples_verbatim() {
	awk '/^\.SS "examples?:"$/ { print; getline; if ($0 == ".IP") { print ".RS 4\n.nf"; on = 1; next } }
	     on && /^\.SH/ { print ".fi\n.RE"; on = 0 }
	     { print }
	     END { if (on) print ".fi\n.RE" }' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}
help2man -N --version-string="$version" -n "timestamped shared-memory streams for robots" \
	--include "$see_also" -o "$out/dssm.1" "$dssm"
examples_verbatim "$out/dssm.1"
while read -r cmd summary; do
	page="$out/dssm-$cmd.1"
	help2man -N --version-string="$version" -n "$summary" -o "$page" "$dssm $cmd"
	# help2man titles it DSSM and names it "dssm ls": make it dssm-ls(1)
	upper=$(tr a-z A-Z <<<"$cmd")
	sed -i -e "s/^\.TH DSSM /.TH DSSM-$upper /" -e "s/^dssm $cmd \\\\- /dssm\\\\-$cmd \\\\- /" "$page"
	examples_verbatim "$page"
done <<<"$commands"
