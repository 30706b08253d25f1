#!/usr/bin/env bash
# install-test.sh - `make install PREFIX=...` into a scratch prefix, then
# build an SSM 1.0.6 program (unchanged) and a dssm program against it with
# pkg-config, the way other projects would, and run both.
set -eu
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
make --no-print-directory -s install PREFIX="$prefix" >/dev/null
for f in include/ssm.h include/ssm-time.h include/dssm/dssm.h lib/libssm.so lib/libdssm.a \
	lib/pkgconfig/dssm.pc lib/pkgconfig/ssm.pc bin/dssm; do
	[ -e "$prefix/$f" ] || { echo "  FAIL: make install did not install $f"; exit 1; }
done
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig LD_LIBRARY_PATH=$prefix/lib
export DSSM_NAMESPACE=install-$$
# The SSM program with the flags an SSM user has always used: -lssm.
cc -Wall -o "$prefix/sensor_a" tests/ssm_program/sensor_a.c $(pkg-config --cflags --libs ssm)
cc -std=c11 -Wall -o "$prefix/uses_dssm" tests/ssm_program/uses_dssm.c $(pkg-config --cflags --libs dssm)
"$prefix/sensor_a"
"$prefix/uses_dssm"
"$prefix/bin/dssm" rm sensor_a >/dev/null
echo "install: 3 passed, 0 failed"
