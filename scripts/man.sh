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
# An OPTIONS section from the parser's own table (`dssm CMD --complete-
# options`, what completion offers): each option with the value the usage
# lines show it taking, and the sentences of the --help text that name it
# (the --help texts are prose, which help2man alone makes no list of).
options_section() { # CMD... > help2man --include text
	local opts
	opts=$("$dssm" "$@" --complete-options 2>/dev/null) || return 0
	[ -n "$opts" ] || return 0
	"$dssm" "$@" --help | OPTS="$opts" perl -e '
		my @lines = <STDIN>;
		my ($usage, $prose) = ("", "");
		my $in_usage = 1;
		for (@lines) {
			if ($in_usage && /^\s*$/) { $in_usage = 0; next; }
			last if !$in_usage && /^examples?:/;
			if ($in_usage) { $usage .= $_ } else { $prose .= $_ }
		}
		$prose =~ s/\s+/ /g;
		my @sentences = split /(?<=[.])\s+(?=[A-Z(`-])/, $prose;
		my @opts = split /\n/, $ENV{OPTS};
		my %long_of;   # -f => --follow, when the text pairs them
		for my $o (grep { /^--/ } @opts) {
			for my $s (grep { !/^--/ } @opts) {
				$long_of{$s} = $o if $prose =~ /\Q$o\E \(\Q$s\E\)|\Q$s\E, \Q$o\E\b|\Q$s\E\/\Q$o\E\b|\Q$o\E\/\Q$s\E\b/
				                  || $usage =~ /\Q$s\E\|\Q$o\E\b|\Q$o\E\|\Q$s\E\b/;
			}
		}
		my %short_of = reverse %long_of;
		sub roff { my $t = shift; $t =~ s/\\/\\e/g; $t =~ s/-/\\-/g; $t =~ s/^([.\x27])/\\&$1/; $t }
		print "[OPTIONS]\n";
		for my $o (@opts) {
			next if $o !~ /^--/ && $long_of{$o};
			my @names = grep { defined } ($short_of{$o}, $o);
			my $value = "";
			for my $n (@names) {
				$value = $1 if !$value && $usage =~ /(?<![\w-])\Q$n\E[ =]([^\s\[\]-][^\s\[\]]*)/;
			}
			my $re = join "|", map { quotemeta } @names;
			my @said = grep { /(?<![\w-])(?:$re)(?![\w-])/ } @sentences;
			@said = @said[0 .. 1] if @said > 2;
			my $text = @said ? join(" ", @said) : "As described above.";
			print ".TP\n", join(", ", map { "\\fB" . roff($_) . "\\fR" } @names),
			      ($value ? " \\fI" . roff($value) . "\\fR" : ""), "\n", roff($text), "\n";
		}'
}
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
options=$(mktemp)
trap 'rm -f "$see_also" "$options"' EXIT
while read -r cmd summary; do
	page="$out/dssm-$cmd.1"
	include=()
	options_section "$cmd" >"$options"
	[ -s "$options" ] && include=(--include "$options")
	help2man -N --version-string="$version" -n "$summary" "${include[@]}" -o "$page" "$dssm $cmd"
	# help2man titles it DSSM and names it "dssm ls": make it dssm-ls(1)
	upper=$(tr a-z A-Z <<<"$cmd")
	sed -i -e "s/^\.TH DSSM /.TH DSSM-$upper /" -e "s/^dssm $cmd \\\\- /dssm\\\\-$cmd \\\\- /" "$page"
	examples_verbatim "$page"
done <<<"$commands"
