# inplace-lib.sh - what the tests of files read in place (mcapview-test.sh,
# bagview-test.sh, db3view-test.sh, ssmlogview-test.sh) share, sourced
# after they set $dssm, $tmp and $priv (a private TMPDIR, empty): counting
# checks, running a command (or Python) in place, and the checks every
# file read in place passes against its import (same_listing,
# same_in_place).

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

# same_listing FILE [--summary]: FILE read in place prints what its import
# ($tmp/NAME.d, made here) prints for query and for info (its streams,
# left in $tmp/got2, and the file's size; without importing it).
# --summary: streams that only the file's summary declares (MCAP channels
# never written: no samples) are listed in place and by the import (before,
# the import left them out), in another order: the streams are compared
# sorted.
same_listing() {
	local f=$1 b
	b=$(basename "$f")
	"$dssm" import "$f" -o "$tmp/$b.d" -q >/dev/null 2>&1 || { bad "import $b"; return 1; }
	inplace "$tmp/got" "$dssm" query "$f" || bad "query $b: $(cat "$tmp/err")"
	"$dssm" query "$tmp/$b.d" >"$tmp/want" 2>/dev/null
	same "query $b in place prints what its import prints" "$tmp/want" "$tmp/got"
	inplace "$tmp/got" "$dssm" info "$f" --sizes || bad "info $b: $(cat "$tmp/err")"
	grep -q "importing" "$tmp/err" && bad "info $b imported it: $(cat "$tmp/err")"
	case $f in   # (an index without sizes: a bag's, an MCAP file's)
	*.mcap | *.bag) brief_info_same "$b" "$f" "$tmp/got" ;;
	esac
	"$dssm" info "$tmp/$b.d" >"$tmp/want" 2>/dev/null
	if [ "${2-}" = --summary ]; then
		sed -n '/^STREAM/,$p' "$tmp/want" | tr -s ' ' | sort >"$tmp/want2"
		sed -n '/^STREAM/,$p' "$tmp/got" | tr -s ' ' | sort >"$tmp/got2"
	else
		sed -n '/^STREAM/,$p' "$tmp/want" >"$tmp/want2"
		sed -n '/^STREAM/,$p' "$tmp/got" >"$tmp/got2"
	fi
	same "info $b in place lists its import's streams" "$tmp/want2" "$tmp/got2"
	grep -q "^size: .*($(stat -c %s "$f") bytes)" "$tmp/got" &&
		ok "info $b: its size is the file's" || bad "info $b size: $(grep size "$tmp/got")"
}

# same_in_place FILE [--summary]: same_listing, then cat FILE/TOPIC,
# FILE//TOPIC and FILE/NAME of its first stream with samples, info
# FILE/TOPIC and export to MCAP print what they print for the import.
same_in_place() {
	local f=$1 b topic name a
	b=$(basename "$f")
	same_listing "$@" || return 1
	topic=$(awk '$3 > 0 && NR > 1 { print $NF; exit }' "$tmp/got2")
	name=$(awk '$3 > 0 && NR > 1 { sub(/:0$/, "", $1); print $1; exit }' "$tmp/got2")
	"$dssm" cat "$tmp/$b.d/$name" -n 3 >"$tmp/want" 2>/dev/null
	for a in "$f/$topic" "$f/${topic#/}" "$f/$name"; do
		inplace "$tmp/got" "$dssm" cat "$a" -n 3 || bad "cat $a: $(cat "$tmp/err")"
		same "cat ${a#"${f%/*}"/} -n 3 in place" "$tmp/want" "$tmp/got"
	done
	inplace "$tmp/got" "$dssm" info "$f/$topic" || bad "info $b/$topic: $(cat "$tmp/err")"
	"$dssm" info "$tmp/$b.d/$name" >"$tmp/want" 2>/dev/null
	same "info $b/$topic (a stream of the file) in place" "$tmp/want" "$tmp/got"
	inplace "$tmp/got" "$dssm" export "$f" --mcap "$tmp/out.mcap" --force &&
		"$dssm" query "$tmp/out.mcap" >"$tmp/got" 2>/dev/null
	"$dssm" query "$tmp/$b.d" >"$tmp/want" 2>/dev/null
	same "export $b in place to MCAP: the same samples" "$tmp/want" "$tmp/got"
}

# inplace_python OUT CODE ARG...: Python's dssm package (python/) on the
# libdssm.so beside $dssm, run as inplace runs a command.
inplace_python() {
	local out=$1 code=$2
	shift 2
	inplace "$out" env DSSM_LIBRARY="$(dirname "$dssm")/libdssm.so" PYTHONPATH="$PWD/python" \
		PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c "$code" "$@"
}
