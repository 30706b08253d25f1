#!/usr/bin/env bash
# install-test.sh - `make install PREFIX=...` into a scratch prefix, then
# build SSM 1.0.6 programs (unchanged, C and C++) and a dssm program against it with
# pkg-config, the way other projects would, and run both. Also what a
# Debian user expects beside them: man pages, bash completion, a systemd unit;
# and the Python package: the installed one with Debian's python3 and the
# paths the install message names, and `pip install .` offline (root only:
# `unshare -n` takes the network away) at the root and in python/.
set -eu
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
make --no-print-directory -s install PREFIX="$prefix" >"$prefix/install.log"
for f in include/ssm.h include/ssm-time.h include/libssm.h include/ssm.hpp include/ssmp.hpp include/ssm-log.hpp \
	include/ssm-remote.hpp include/ssmtype/bumper.h include/ssmtype/ultrasonic.h include/dssm/dssm.h lib/libssm.so lib/libdssm.a \
	bin/ssm-coordinator \
	lib/pkgconfig/dssm.pc lib/pkgconfig/ssm.pc bin/dssm share/man/man1/dssm.1 \
	share/bash-completion/completions/dssm lib/systemd/system/dssm-proxy.service; do
	[ -e "$prefix/$f" ] || { echo "  FAIL: make install did not install $f"; exit 1; }
done
# The shared libraries export their public API only (scripts/lib*.map).
leaked=$(nm -D --defined-only "$prefix/lib/libdssm.so.0" | awk '{print $3}' | grep -v '^dssm_[a-z]' | head -5)
[ -z "$leaked" ] || { echo "  FAIL: libdssm.so exports internals: $leaked"; exit 1; }
leaked=$(nm -D --defined-only "$prefix/lib/libssm.so.0" | awk '{print $3}' | grep -v '^dssm_[a-z]' | grep -v -e SSM -e '^getTID' -e '^waitTID$' -e '^damp$' | head -5)
[ -z "$leaked" ] || { echo "  FAIL: libssm.so exports internals: $leaked"; exit 1; }
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig LD_LIBRARY_PATH=$prefix/lib
export DSSM_NAMESPACE=install-$$
# The SSM program with the flags an SSM user has always used: -lssm.
cc -Wall -o "$prefix/sensor_a" tests/ssm_program/sensor_a.c $(pkg-config --cflags --libs ssm)
cc -std=c11 -Wall -o "$prefix/uses_dssm" tests/ssm_program/uses_dssm.c $(pkg-config --cflags --libs dssm)
# SSM's workflow: the coordinator first (build scripts look for it on PATH),
# the programs, then the coordinator stops and takes the unused streams.
PATH=$prefix/bin:$PATH command -v ssm-coordinator >/dev/null ||
	{ echo "  FAIL: no ssm-coordinator on PATH after make install"; exit 1; }
"$prefix/bin/ssm-coordinator" -v 2>"$prefix/coord.log" &
coord=$!
"$prefix/sensor_a"
"$prefix/uses_dssm"
"$prefix/bin/dssm" ls | grep -q "^sensor_a" || { echo "  FAIL: sensor_a's stream is not listed"; exit 1; }
# stopped once it handles SIGTERM (its SigCgt), however slowly it started
for _ in $(seq 600); do
	m=$(awk '/^SigCgt:/ {print $2}' /proc/$coord/status 2>/dev/null || true)
	[ -n "$m" ] && (( (16#$m >> 14) & 1 )) && break
	sleep 0.05
done
kill -TERM $coord
wait $coord || { echo "  FAIL: ssm-coordinator exited $?: $(cat "$prefix/coord.log")"; exit 1; }
grep -q "stopping; [1-9][0-9]* unused streams\? removed" "$prefix/coord.log" &&
	! "$prefix/bin/dssm" ls | grep -q "^sensor_a" ||
	{ echo "  FAIL: ssm-coordinator did not remove the unused streams: $(cat "$prefix/coord.log")"; exit 1; }
# SSM's C++ programs: the installed headers, both compilers, C++98, C++11 and the default
for cxx in g++ clang++; do
	if ! command -v $cxx >/dev/null; then echo "  FAIL: no $cxx"; exit 1; fi
	for std in -std=c++98 -std=c++11 ""; do
		$cxx $std -Wall -Wextra -Werror -o "$prefix/sensor_cpp" tests/ssm_program/sensor_cpp.cpp \
			$(pkg-config --cflags --libs ssm)
		(cd "$prefix" && ./sensor_cpp)
		"$prefix/bin/dssm" rm sensor_cpp >/dev/null
	done
done
# a man page per subcommand, made from its --help
for c in $("$prefix/bin/dssm" --help | awk '/Commands:/ {on = 1; next} on && NF == 0 {exit} on {print $1}'); do
	page=$prefix/share/man/man1/dssm-$c.1
	[ -e "$page" ] || { echo "  FAIL: no man page dssm-$c.1"; exit 1; }
	grep -qF "dssm\\-$c \\- " "$page" || { echo "  FAIL: dssm-$c.1 has no NAME line"; exit 1; }
done
man -l "$prefix/share/man/man1/dssm-query.1" 2>/dev/null | grep -q -- "--start" ||
	{ echo "  FAIL: man dssm-query does not render its --help"; exit 1; }
# the completion script: valid bash that completes subcommands and streams
completion=$prefix/share/bash-completion/completions/dssm
bash -n "$completion" || { echo "  FAIL: bash -n rejects $completion"; exit 1; }
"$prefix/bin/dssm" write tick x --create 16 >/dev/null
got=$(PATH=$prefix/bin:$PATH bash -c 'source "$1"
	c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _dssm; echo "${COMPREPLY[*]}"; }
	c dssm qu; c dssm cat ti; c dssm ls --format ""' _ "$completion")
"$prefix/bin/dssm" rm tick >/dev/null
[ "$got" = $'query\ntick:0\ntable json' ] || { echo "  FAIL: completion gave: $got"; exit 1; }
# the systemd unit runs the installed binary
unit=$prefix/lib/systemd/system/dssm-proxy.service
grep -q "^ExecStart=$prefix/bin/dssm proxy " "$unit" || { echo "  FAIL: $unit does not start $prefix/bin/dssm"; exit 1; }
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify --man=no "$unit" || { echo "  FAIL: systemd-analyze verify $unit"; exit 1; }
fi
# The Python package, from another directory, with the paths make install named
# and nothing else (no DSSM_LIBRARY): it loads libdssm.so.0 through the loader.
msg=$(grep "is not a system prefix" "$prefix/install.log") ||
	{ echo "  FAIL: make install into $prefix printed no environment: $(cat "$prefix/install.log")"; exit 1; }
pypath=$(sed -n 's/.*PYTHONPATH=\([^ ,]*\).*/\1/p' <<<"$msg")
ldpath=$(sed -n 's/.*LD_LIBRARY_PATH=\([^ ,]*\).*/\1/p' <<<"$msg")
[ -n "$pypath" ] && [ -n "$ldpath" ] ||
	{ echo "  FAIL: the install message names no PYTHONPATH or LD_LIBRARY_PATH: $msg"; exit 1; }
"$prefix/bin/dssm" write pyinst hello --create 16 >/dev/null
# prints the stream's newest sample; fails unless the package and the
# libdssm.so.0 it mapped are the ones under $1
read_py='import sys, dssm
assert dssm.__file__.startswith(sys.argv[1]), "imported " + dssm.__file__
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libdssm.so" in l}
assert libs == {sys.argv[2] + "/libdssm.so.0"}, "mapped %s" % libs
print(dssm.open("pyinst").read_last().data.decode())'
got=$(cd "$prefix" && env -u DSSM_LIBRARY -u PYTHONPATH PYTHONPATH="$pypath" LD_LIBRARY_PATH="$ldpath" \
	/usr/bin/python3 -c "$read_py" "$pypath/dssm/" "$ldpath" 2>&1)
[ "$got" = hello ] || { echo "  FAIL: the installed Python package: $got"; exit 1; }
passed=8
# pip install . offline, at the root and in python/: a venv that sees Debian's
# numpy and cffi, no network at all
if [ "$(id -u)" -ne 0 ] || ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
	echo "  (pip install . offline: skipped: needs root for unshare -n, and python3-venv)"
else
	for dir in . python; do
		venv=$prefix/venv-${dir#.}
		/usr/bin/python3 -m venv --system-site-packages "$venv"
		(cd "$dir" && unshare -n "$venv/bin/pip" install --no-index --no-cache-dir .) >"$prefix/pip.log" 2>&1 ||
			{ echo "  FAIL: pip install . in $dir/ offline: $(tail -5 "$prefix/pip.log")"; exit 1; }
		site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
		got=$(cd "$prefix" && env -u DSSM_LIBRARY -u PYTHONPATH LD_LIBRARY_PATH="$ldpath" \
			"$venv/bin/python" -c "$read_py" "$site/dssm/" "$ldpath" 2>&1)
		[ "$got" = hello ] || { echo "  FAIL: dssm pip-installed from $dir/: $got"; exit 1; }
	done
	passed=9
fi
"$prefix/bin/dssm" rm pyinst >/dev/null
echo "install: $passed passed, 0 failed"
