# args.sh - the command line of the benchmark scripts (bench/run.sh,
# bench/bridge/run.sh, bench/inplace/run.sh), sourced after they define
# usage(): one answer to --help and to an option they do not take, so that
# no script runs a whole benchmark for a mistyped option (bridge/run.sh
# --help once ran it for 4 minutes).
#
# bench_args TAKEN ARG...: -h or --help prints usage and exits 0; an
# argument not among TAKEN (a space-separated list, '' for none) is named
# on stderr with the usage, exit 2. Arguments are read in order.
bench_args() {
	local taken=$1 arg
	shift
	for arg in "$@"; do
		case $arg in -h | --help) usage; exit 0 ;; esac
		case " $taken " in
		*" $arg "*) ;;
		*) echo "$0: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
		esac
	done
}
