#!/usr/bin/env bash
# cross-test.sh - build libdssm and its unit tests for the Raspberry Pi's
# CPUs (aarch64, and 32-bit armhf where size_t is 4 bytes and 64-bit atomics
# need ldrexd/strexd) and run them under qemu-user. Skips, saying why, where
# a cross compiler, qemu or the foreign cmocka or GnuTLS is missing.
set -u
cd "$(dirname "$0")/.."
tests="test_crc test_pool test_stream test_read test_times test_shared_handle test_segment test_wait test_crash test_concurrency test_ssm_compat test_wire test_container test_container_chunks test_impostor test_writers test_ssmlog test_ssm_clock test_decoder"
status=0 ran=0
for arch in aarch64:aarch64-linux-gnu:qemu-aarch64 armhf:arm-linux-gnueabihf:qemu-arm; do
	IFS=: read -r name triple qemu <<<"$arch"
	cc=$triple-gcc
	libdir=/usr/lib/$triple
	if ! command -v "$cc" >/dev/null; then echo "  skip $name: no $cc (apt-get install gcc-$triple)"; continue; fi
	if ! command -v "$qemu" >/dev/null; then echo "  skip $name: no $qemu (apt-get install qemu-user)"; continue; fi
	if [ ! -e "$libdir/libcmocka.so" ]; then echo "  skip $name: no libcmocka-dev for $name"; continue; fi
	# GnuTLS: the -dev package, or its runtime library (libgnutls30:ARCH; the
	# headers are the build machine's, the same for every architecture)
	gnutls=-lgnutls
	[ -e "$libdir/libgnutls.so" ] || gnutls=-l:libgnutls.so.30
	if [ ! -e "$libdir/libgnutls.so.30" ]; then echo "  skip $name: no libgnutls30 for $name"; continue; fi
	# the chunks' compressors (test_container's compressed modes): the
	# runtime libraries (libzstd1:ARCH ...), linked by their file names
	codecs=
	for l in liblz4.so.1 libzstd.so.1 libbz2.so.1.0 libz.so.1; do
		if [ -e "$libdir/$l" ] || [ -e "/lib/$triple/$l" ]; then codecs="$codecs -l:$l"; fi
	done
	if [ "$(wc -w <<<"$codecs")" -ne 4 ]; then echo "  skip $name: no liblz4-1, libzstd1, libbz2-1.0 or zlib1g for $name"; continue; fi
	build=build/cross-$name
	if ! make --no-print-directory -s BUILD=$build CC=$cc AR=$triple-ar GNUTLS_LIBS=$gnutls CODEC_LIBS="$codecs" \
		$(for t in $tests; do echo $build/tests/$t; done) >$build.log 2>&1; then
		echo "  FAIL $name: build failed"; sed 's/^/    /' $build.log | tail -20; status=1; continue
	fi
	# The layout must be the same on every architecture: the static asserts
	# compiled; also check pointer and size_t widths really differ on armhf.
	echo "  $name: built with $cc ($(file -b $build/tests/test_stream | cut -d, -f1-2))"
	bins=()
	for t in $tests; do bins+=("$build/tests/$t"); done
	bins+=("$build/tests/test_container@DSSM_TEST_COMPRESS=zstd" "$build/tests/test_container@DSSM_TEST_COMPRESS=lz4")
	if ! QEMU_LD_PREFIX=/ DSSM_TEST_SECONDS=1 BUILD=$build bash tests/run-tests.sh \
		$(for b in "${bins[@]}"; do echo "$b"; done) \
		--qemu "$qemu"; then
		status=1
	fi
	ran=1
done
[ $ran -eq 1 ] || echo "  cross tests skipped"
exit $status
