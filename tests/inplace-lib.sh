# inplace-lib.sh - what the tests of files read in place (mcapview-test.sh,
# bagview-test.sh, db3view-test.sh, ssmlogview-test.sh) share, sourced after they set $tmp and $priv (a private
# TMPDIR, empty): counting checks and running a command in place.

passed=0 failed=0

ok() { echo "  ok    $1"; passed=$((passed + 1)); }
bad() { echo "  FAIL  $1"; failed=$((failed + 1)); }
same() { # same NAME FILE1 FILE2
	if cmp -s "$2" "$3"; then ok "$1 ($(wc -l <"$2") lines)"; else bad "$1"; diff "$2" "$3" | head -5; fi
}
# run in place with a private, empty TMPDIR; fail if anything is left or made there
inplace() { # inplace OUT CMD...
	local out=$1; shift
	TMPDIR=$priv "$@" >"$out" 2>"$tmp/err"
	local rc=$?
	if [ -n "$(ls -A "$priv")" ]; then
		bad "$* wrote under TMPDIR: $(ls -A "$priv" | head -3)"; rm -rf "${priv:?}"/*
	fi
	return $rc
}
# `info FILE` without --sizes lists what `info FILE --sizes` lists, with DATA
# '-' where the file's index holds no sizes (a bag, MCAP) and says so
brief_info_same() { # brief_info_same NAME FILE SIZED_INFO_OUTPUT
	inplace "$tmp/brief" "$dssm" info "$2" || bad "info $1: $(cat "$tmp/err")"
	sed -n '/^STREAM/,$p' "$3" | tr -s ' ' |
		sed -E 's/^([^ ]+ [^ ]+ [1-9][0-9]*) [0-9.]+ (B|KiB|MiB|GiB|TiB) /\1 - /' >"$tmp/brief-want"
	sed -n '/^STREAM/,$p' "$tmp/brief" | tr -s ' ' | grep -v '^sizes: ' >"$tmp/brief-got"
	same "info $1 without --sizes: the same streams, DATA '-'" "$tmp/brief-want" "$tmp/brief-got"
	grep -q "^sizes: .*--sizes" "$tmp/brief" && ok "info $1 says --sizes reads the sizes" ||
		bad "info $1 does not say its DATA is not read"
}
