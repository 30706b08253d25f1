# dssm - one non-recursive Makefile; everything it builds goes under $(BUILD).
#
#   make            libraries, the dssm command, examples, tests, benchmarks
#   make test       install missing Debian packages, build, run every test
#                   (plain, ASan+UBSan, TSan, clang, aarch64/armhf under qemu)
#   make demo       run the examples end to end on this machine
#   make bench      benchmarks, each beside its baseline (ratios)
#   make install PREFIX=/usr/local
#
# Variant builds call this Makefile again with another BUILD and flags.

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
AR ?= ar
# C++ (the SSM C++ headers' tests): the compiler of CC's family
ifeq ($(origin CXX),default)
CXX := $(if $(findstring clang,$(CC)),clang++,g++)
endif
BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
# the release: written once, in include/dssm/dssm.h (DSSM_VERSION_*)
VERSION := $(shell awk '/^.define DSSM_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $$3 } \
  END { print v }' include/dssm/dssm.h)

OPT ?= -O2 -g
SANFLAGS ?=
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Wall -Wextra -Werror -fPIC -pthread -Iinclude -I. -MMD -MP
CFLAGS_ALL = $(CFLAGS_BASE) $(OPT) $(SANFLAGS) $(CFLAGS)
CXXFLAGS_ALL = -std=c++11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -Iinclude -MMD -MP $(OPT) $(SANFLAGS) $(CXXFLAGS)
# GnuTLS: the proxy's and the connector's TLS (lib/remote/tls.c). A cross
# build without the foreign -dev package links the runtime library by name
# (tests/cross-test.sh: GNUTLS_LIBS=-l:libgnutls.so.30).
GNUTLS_LIBS ?= -lgnutls
LDLIBS_ALL = $(GNUTLS_LIBS) -lnettle -pthread -lm -lrt $(LDLIBS)
EVENT_LIBS ?= -levent_core -levent_pthreads
CMOCKA_LIBS ?= -lcmocka

# The folders are the link graph (README "Layout", docs/design.md "Layers"):
#   lib/base lib/ring lib/remote lib/store lib/decode lib/open lib/record -> libdssm
#   lib/ssm (SSM 1.0.6's API)                                             -> libssm (+ libdssm)
#   app/cli app/proxy app/bridge app/foxglove app/dds                     -> the dssm command
# A folder includes only folders below it (scripts/layer-lint.sh checks).
LIB_LAYERS := base ring remote store decode open record
# Foreign files read in place (lib/store/view.h): they need liblz4, libzstd,
# libbz2, libsqlite3 (rosbag2's .db3) and libyaml (a rosbag2 bag
# directory's metadata.yaml), so they are linked where the
# bridge is (the dssm command, the bridge tests) and into libdssm.so, not
# into libdssm's core (libdssm.a); a program turns them on with
# dssm__views_register().
VIEW_SRC := lib/store/codec.c lib/store/codec_compress.c lib/store/mcap.c lib/store/view.c lib/store/view_sizes.c lib/store/view_file.c \
  lib/store/mcap_view.c lib/store/mcap_index.c lib/store/db3.c lib/store/db3_view.c \
  lib/store/ssmlog_view.c lib/store/rosbag2_dir.c lib/store/rosbag2_meta.c lib/store/rosbag2_zstd.c lib/store/bag.c lib/store/bag_view.c \
  lib/store/bag_index.c lib/store/views.c
CORE_SRC := $(filter-out $(VIEW_SRC) lib/store/view_so.c,$(foreach l,$(LIB_LAYERS),$(wildcard lib/$(l)/*.c)))
COMPAT_SRC := $(wildcard lib/ssm/*.c)
TOOL_SRC := $(wildcard app/cli/*.c) $(wildcard app/proxy/*.c)
BRIDGE_SRC := $(wildcard app/bridge/*.c) $(VIEW_SRC)
# the Foxglove WebSocket server (app/foxglove/): in the dssm command only, not in libdssm
FOXGLOVE_SRC := $(wildcard app/foxglove/*.c)
DDS_SRC := $(wildcard app/dds/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
EXAMPLE_SRC := $(wildcard examples/*.c)
# bench/compress/: the compression benchmark's stream generator, cost meter and codec alone (issue #28)
BENCH_SRC := $(wildcard bench/bench_*.c) $(wildcard bench/compress/*.c)
CXX_TEST_SRC := $(wildcard tests/cpp/test_*.cpp)

CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
COMPAT_OBJ := $(COMPAT_SRC:%.c=$(BUILD)/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)
BRIDGE_OBJ := $(BRIDGE_SRC:%.c=$(BUILD)/%.o)
FOXGLOVE_OBJ := $(FOXGLOVE_SRC:%.c=$(BUILD)/%.o)
DDS_OBJ := $(DDS_SRC:%.c=$(BUILD)/%.o)
# Debian's libwebsockets (libwebsockets-dev) does the WebSocket framing
FOXGLOVE_LIBS ?= -lwebsockets
# dds/ is linked into the dssm command only: libdssm never depends on Cyclone DDS.
DDS_LIBS ?= $(shell pkg-config --libs CycloneDDS)
# bags and MCAP files: compression from Debian's libraries, CRC-32 from zlib
BRIDGE_LIBS ?= -llz4 -lzstd -lbz2 -lz -lsqlite3 -lyaml

LIBDSSM := $(BUILD)/libdssm.a
LIBDSSM_SO := $(BUILD)/libdssm.so
LIBSSM := $(BUILD)/libssm.a
LIBSSM_SO := $(BUILD)/libssm.so
DSSM_BIN := $(BUILD)/dssm
SSM_COORDINATOR := $(BUILD)/ssm-coordinator
TESTS := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
EXAMPLES := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)
BENCHES := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
CXX_TESTS := $(CXX_TEST_SRC:tests/cpp/%.cpp=$(BUILD)/tests/cpp/%)
SSM_CXX_HEADERS := include/ssm.hpp include/ssmp.hpp include/ssm-log.hpp include/ssm-remote.hpp \
  $(wildcard include/ssmtype/*.h)

.PHONY: all libs man test check check-unit lint demo bench install uninstall clean deps

all: libs $(DSSM_BIN) $(SSM_COORDINATOR) $(EXAMPLES) $(TESTS) $(CXX_TESTS) $(BENCHES)
libs: $(LIBDSSM) $(LIBDSSM_SO) $(LIBSSM) $(LIBSSM_SO)

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIBDSSM): $(CORE_OBJ)
	$(AR) rcs $@ $^
# libdssm.so reads foreign files in place: it carries the views (views.c
# lists them) and registers them when loaded (lib/store/view_so.c)
VIEW_SO_OBJ := $(VIEW_SRC:%.c=$(BUILD)/%.o) $(BUILD)/lib/store/view_so.o
VIEW_LIBS ?= -llz4 -lzstd -lbz2 -lz -lsqlite3 -lyaml
$(LIBDSSM_SO): $(CORE_OBJ) $(VIEW_SO_OBJ) scripts/libdssm.map
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libdssm.so.0 -Wl,--version-script=scripts/libdssm.map \
	  -o $@ $(CORE_OBJ) $(VIEW_SO_OBJ) $(VIEW_LIBS) $(LDLIBS_ALL)
	ln -sf libdssm.so $@.0  # (the name programs linked with it ask for)
# libssm carries libdssm inside, so SSM programs link with -lssm alone.
$(LIBSSM): $(CORE_OBJ) $(COMPAT_OBJ)
	$(AR) rcs $@ $^
$(LIBSSM_SO): $(CORE_OBJ) $(COMPAT_OBJ) scripts/libssm.map
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libssm.so.0 -Wl,--version-script=scripts/libssm.map \
	  -o $@ $(CORE_OBJ) $(COMPAT_OBJ) $(LDLIBS_ALL)

# SSM's programs (compat/programs/): linked with libssm as SSM's are.
$(SSM_COORDINATOR): lib/ssm/programs/ssm_coordinator.c $(LIBSSM)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIBSSM) $(LDLIBS_ALL)

# dssm play --ssm-clock drives the SSM clock (lib/ssm/ssm_clock.c); SSM logs
# name streams as SSM programs do (lib/base/ssm_name.c, in libdssm)
$(DSSM_BIN): $(TOOL_OBJ) $(BRIDGE_OBJ) $(FOXGLOVE_OBJ) $(DDS_OBJ) $(BUILD)/lib/ssm/ssm_clock.o $(LIBDSSM)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(EVENT_LIBS) $(BRIDGE_LIBS) $(FOXGLOVE_LIBS) $(DDS_LIBS) $(LDLIBS_ALL)

# The bridge tests link the bridge objects (they are not part of libdssm).
$(BUILD)/tests/test_bridge $(BUILD)/tests/test_ssmlog_io $(BUILD)/tests/test_mcapview $(BUILD)/tests/test_ssmlogview $(BUILD)/tests/test_db3view $(BUILD)/tests/test_backends $(BUILD)/tests/test_bagview: $(BUILD)/tests/%: tests/%.c $(BRIDGE_OBJ) $(LIBSSM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(BRIDGE_OBJ) $(LIBSSM) $(CMOCKA_LIBS) $(BRIDGE_LIBS) $(LDLIBS_ALL)

# The container tests run on compressed streams too (DSSM_TEST_COMPRESS),
# the recorder's on a compressed split: they link the chunks' compressors alone (codec.c, codec_compress.c), not
# the views, so the cross builds need only the codecs' libraries
# (tests/cross-test.sh gives them as CODEC_LIBS).
CODEC_OBJ := $(BUILD)/lib/store/codec.o $(BUILD)/lib/store/codec_compress.o
CODEC_LIBS ?= -llz4 -lzstd -lbz2 -lz
$(BUILD)/tests/test_container $(BUILD)/tests/test_container_chunks $(BUILD)/tests/test_container_formats $(BUILD)/tests/test_chunk_ahead $(BUILD)/tests/test_recorder: $(BUILD)/tests/%: tests/%.c $(CODEC_OBJ) $(LIBSSM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(CODEC_OBJ) $(LIBSSM) $(CMOCKA_LIBS) $(CODEC_LIBS) $(LDLIBS_ALL)

# The SSM log reader is tested alone (also on armhf: tests/cross-test.sh).
$(BUILD)/tests/test_ssmlog: tests/test_ssmlog.c $(BUILD)/app/bridge/ssmlog_read.o $(BUILD)/app/bridge/mapped.o $(LIBSSM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(BUILD)/app/bridge/ssmlog_read.o $(BUILD)/app/bridge/mapped.o $(LIBSSM) $(CMOCKA_LIBS) $(LDLIBS_ALL)

# The proxy's watchers are tested on their own (they are not part of libdssm).
$(BUILD)/tests/test_watch: tests/test_watch.c $(BUILD)/app/proxy/watch.o $(LIBSSM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(BUILD)/app/proxy/watch.o $(LIBSSM) $(CMOCKA_LIBS) $(EVENT_LIBS) $(LDLIBS_ALL)

# Two proxies in one process: the proxy engine linked as a library.
PROXY_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard app/proxy/*.c))
$(BUILD)/tests/test_proxies: tests/test_proxies.c $(PROXY_OBJ) $(LIBSSM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(PROXY_OBJ) $(LIBSSM) $(CMOCKA_LIBS) $(EVENT_LIBS) $(LDLIBS_ALL)

# The Foxglove server's socket-free parts (JSON, frames, channel mapping).
FOXGLOVE_UNIT_OBJ := $(addprefix $(BUILD)/app/foxglove/,protocol.o channels.o live.o struct_json.o)
$(BUILD)/tests/test_foxglove: tests/test_foxglove.c $(FOXGLOVE_UNIT_OBJ) $(LIBSSM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(FOXGLOVE_UNIT_OBJ) $(LIBSSM) $(CMOCKA_LIBS) $(FOXGLOVE_LIBS) $(LDLIBS_ALL)

# The time parser (the command line's and the library's) is tested alone
# (it needs only libc and error.c).
TIMEPARSE_SRC := app/cli/timeparse.c lib/base/timeparse.c lib/base/error.c
$(BUILD)/tests/test_timeparse: tests/test_timeparse.c $(TIMEPARSE_SRC) app/cli/cli.h lib/base/base.h include/dssm/dssm.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(TIMEPARSE_SRC) $(CMOCKA_LIBS)

$(BUILD)/tests/%: tests/%.c $(LIBSSM) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(LIBSSM) $(CMOCKA_LIBS) $(LDLIBS_ALL)

# SSM C++ programs: the headers over libssm, as an SSM user builds them.
$(BUILD)/tests/cpp/%: tests/cpp/%.cpp $(LIBSSM) $(SSM_CXX_HEADERS) include/ssm.h include/ssm-time.h tests/cpp/check.hpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_ALL) -Itests/cpp -o $@ $< $(LIBSSM) $(LDLIBS_ALL)

# Examples link libdssm.so, as a program built with `pkg-config --libs dssm`
# does: it reads MCAP files in place too (the demo's localizer on an MCAP
# export); the run path finds the build's library.
$(BUILD)/examples/%: examples/%.c $(LIBDSSM_SO) $(wildcard examples/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD) -ldssm -Wl,-rpath,$(abspath $(BUILD)) $(LDLIBS_ALL)

$(BUILD)/bench/%: bench/%.c $(LIBDSSM) $(wildcard bench/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIBDSSM) $(LDLIBS_ALL)

# The codec alone (#28's benchmark): it calls libzstd and liblz4 itself.
$(BUILD)/bench/compress/codec_speed: bench/compress/codec_speed.c $(LIBDSSM) $(wildcard bench/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIBDSSM) -lzstd -llz4 $(LDLIBS_ALL)

# The DDS benchmark: its hosts and ddsperf, and its latency report, in files of their own.
BENCH_DDS_SRCS := bench/bench_dds.c bench/dds_hosts.c bench/dds_report.c
$(BUILD)/bench/bench_dds: $(BENCH_DDS_SRCS) $(LIBDSSM) $(wildcard bench/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(BENCH_DDS_SRCS) $(LIBDSSM) $(LDLIBS_ALL)

# The recordings benchmark also times SQLite (rosbag2's storage). It links
# libdssm.so, as a user's program does, so that it reads the files a user's
# program reads in place (bench/inplace/run.sh).
$(BUILD)/bench/bench_bridge: bench/bench_bridge.c $(LIBDSSM_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD) -ldssm -Wl,-rpath,$(abspath $(BUILD)) -lsqlite3 $(LDLIBS_ALL)

# ---- dds/: the DDS bridge's generated type and its test programs ----
# idlc (Cyclone DDS) turns the generic type app/dds/dssm_Sample.idl into C at
# build time, in $(DDS_GEN); it is linked into the dssm command with dds/.
# opaque.c reads Cyclone's DDSI headers, whose atomics use GNU C's asm:
# it alone is compiled as gnu11. tests/dds/ holds the plain Cyclone DDS
# programs of tests/dds-test.sh (ROS 2's std_msgs/msg/String and
# geometry_msgs/msg/Pose2D, from their IDL).
DDS_GEN := $(BUILD)/app/dds/gen
IDLC ?= idlc
# (a pattern rule's targets are made together: one idlc run makes both)
$(DDS_GEN)/%.c $(DDS_GEN)/%.h: app/dds/%.idl
	@mkdir -p $(dir $@)
	$(IDLC) -o $(dir $@) $<
$(DDS_GEN)/%.o: $(DDS_GEN)/%.c $(DDS_GEN)/%.h
	$(CC) $(CFLAGS_ALL) -c $< -o $@
.SECONDARY: $(DDS_GEN)/dssm_Sample.c $(DDS_GEN)/dssm_Sample.h
$(DDS_OBJ): $(DDS_GEN)/dssm_Sample.h
$(DDS_OBJ): CFLAGS_BASE += -I$(DDS_GEN)
$(BUILD)/app/dds/opaque.o: CFLAGS_BASE += -std=gnu11
$(DSSM_BIN): $(DDS_GEN)/dssm_Sample.o
DDS_TEST_GEN := $(BUILD)/tests/dds/gen
$(DDS_TEST_GEN)/%.c $(DDS_TEST_GEN)/%.h: tests/dds/%.idl
	@mkdir -p $(dir $@)
	$(IDLC) -o $(dir $@) $<
$(BUILD)/tests/dds/ros2_string: tests/dds/ros2_string.c tests/dds/ros2_reader.h $(DDS_TEST_GEN)/String.c $(DDS_TEST_GEN)/String.h
	$(CC) $(CFLAGS_ALL) -I$(DDS_TEST_GEN) -o $@ $< $(DDS_TEST_GEN)/String.c $(DDS_LIBS) $(LDLIBS_ALL)
$(BUILD)/tests/dds/ros2_pose2d: tests/dds/ros2_pose2d.c tests/dds/ros2_reader.h $(DDS_TEST_GEN)/Pose2D.c $(DDS_TEST_GEN)/Pose2D.h
	$(CC) $(CFLAGS_ALL) -I$(DDS_TEST_GEN) -o $@ $< $(DDS_TEST_GEN)/Pose2D.c $(DDS_LIBS) $(LDLIBS_ALL)
# the DDS names (app/dds/naming.c) checked alone: it needs only libdssm
$(BUILD)/tests/dds/naming_check: tests/dds/naming_check.c $(BUILD)/app/dds/naming.o $(LIBDSSM)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/app/dds/naming.o $(LIBDSSM) $(LDLIBS_ALL)
# the limits on a ring made from DDS (app/dds/qos.c) checked alone
$(BUILD)/tests/dds/layout_check: tests/dds/layout_check.c $(BUILD)/app/dds/qos.o $(LIBDSSM)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/app/dds/qos.o $(LIBDSSM) $(DDS_LIBS) $(LDLIBS_ALL)
# a peer sending hostile dssm::msg::Sample samples (times, TIDs, types)
$(BUILD)/tests/dds/hostile_pub: tests/dds/hostile_pub.c $(DDS_GEN)/dssm_Sample.o
	$(CC) $(CFLAGS_ALL) -I$(DDS_GEN) -o $@ $< $(DDS_GEN)/dssm_Sample.o $(DDS_LIBS) $(LDLIBS_ALL)
# a writer whose topic name, as discovery sends it, holds terminal escapes
$(BUILD)/tests/dds/hostile_name: tests/dds/hostile_name.c $(DDS_TEST_GEN)/String.c $(DDS_TEST_GEN)/String.h
	$(CC) $(CFLAGS_ALL) -I$(DDS_TEST_GEN) -o $@ $< $(DDS_TEST_GEN)/String.c $(DDS_LIBS) $(LDLIBS_ALL)
# bench_dds's plain Cyclone publisher and subscriber of std_msgs/String (its one-way figure)
$(BUILD)/bench/dds_plain: bench/dds_plain.c $(DDS_TEST_GEN)/String.c $(DDS_TEST_GEN)/String.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(DDS_TEST_GEN) -o $@ $< $(DDS_TEST_GEN)/String.c $(DDS_LIBS) $(LDLIBS_ALL)
all: $(BUILD)/tests/dds/ros2_string $(BUILD)/tests/dds/ros2_pose2d $(BUILD)/tests/dds/naming_check \
	$(BUILD)/tests/dds/hostile_pub $(BUILD)/tests/dds/layout_check $(BUILD)/tests/dds/hostile_name \
	$(BUILD)/bench/dds_plain

# ---- tests ----

deps:
	@bash scripts/deps.sh

# The size rule of the code style: no file over 600 lines, no function over
# 80 without a "long: reason" in its comment (scripts/size-lint.sh); the
# layers: no folder includes one beside or above it (scripts/layer-lint.sh).
lint:
	@bash scripts/size-lint.sh
	@bash scripts/layer-lint.sh
	@for f in tests/*.sh bench/*.sh bench/*/*.sh scripts/*.sh; do bash -n "$$f" || exit 1; done

# The tests run again in other modes (TEST@VAR=VALUE: tests/run-tests.sh):
# every connector test over TLS, the secret tests in clear text
# (DSSM_TEST_TLS in tests/test_remote.c, test_hostile.c).
TLS_MODES_remote := $(BUILD)/tests/test_remote@DSSM_TEST_TLS=all $(BUILD)/tests/test_remote@DSSM_TEST_TLS=off \
  $(BUILD)/tests/test_remote_threads@DSSM_TEST_TLS=all \
  $(BUILD)/tests/test_backends@DSSM_TEST_COMPRESS=zstd
TLS_MODES_proxy := $(BUILD)/tests/test_hostile@DSSM_TEST_TLS=off $(BUILD)/tests/test_proxies@DSSM_TEST_TLS=all
# ... and the container tests and the recording backend on compressed
# streams (formats 3 and 4)
TLS_MODES_store := $(BUILD)/tests/test_container@DSSM_TEST_COMPRESS=zstd \
  $(BUILD)/tests/test_container@DSSM_TEST_COMPRESS=lz4

# Run the unit and multi-process tests of one build.
check-unit: $(TESTS) $(CXX_TESTS) $(DSSM_BIN) $(SSM_COORDINATOR) $(EXAMPLES)
	@BUILD=$(BUILD) bash tests/run-tests.sh $(TESTS) $(CXX_TESTS) $(TLS_MODES_remote) $(TLS_MODES_proxy) \
	  $(TLS_MODES_store)

# TSan: only the concurrency tests (the rest run under ASan+UBSan); test_backends
# starts the proxy of the same build; test_container has the O_DIRECT writer's
# thread. Over TLS too (#29): test_proxies (proxies and connectors in one
# process) and test_remote (the proxy it starts runs under TSan as well).
# Compressed streams (#28): their compressing threads, and the recorder's
# streams waiting for them with its lock free (test_recorder,
# test_record_follow). Threads sharing one
# remote handle, in clear text and over TLS (test_remote_threads).
# Reports go to files, so that one from a process a test started (a proxy,
# whose exit status the test may not check) fails check-tsan too.
TSAN_TESTS := test_pool test_concurrency test_times test_shared_handle test_wait test_bridge test_recorder test_record_follow test_writers test_watch test_backends test_proxies test_container test_container_chunks test_chunk_ahead test_data_map test_remote_threads
TSAN_MODES := test_proxies@DSSM_TEST_TLS=all test_remote@DSSM_TEST_TLS=all \
  test_remote_threads@DSSM_TEST_TLS=all test_container@DSSM_TEST_COMPRESS=zstd
TSAN_REPORTS := build/tsan/reports
check-tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan CC=clang OPT="-O1 -g" \
	  SANFLAGS="-fsanitize=thread" $(TSAN_TESTS:%=build/tsan/tests/%) build/tsan/tests/test_remote \
	  build/tsan/dssm
	@rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	@BUILD=build/tsan TSAN_OPTIONS="halt_on_error=1 log_path=$(abspath $(TSAN_REPORTS))/tsan" \
	  bash tests/run-tests.sh $(TSAN_TESTS:%=build/tsan/tests/%) $(TSAN_MODES:%=build/tsan/tests/%); \
	  rc=$$?; for f in $(TSAN_REPORTS)/tsan.*; do [ -e "$$f" ] || continue; \
	  echo "== ThreadSanitizer report of pid $${f##*.}:"; head -60 "$$f"; rc=1; done; exit $$rc

# ---- one layer's tests: make test-ring, test-store, ... (the unit tests of
# the folder, then its integration scripts), beside the whole `make test`.
UNITS_base := test_glob test_crc test_pool
UNITS_ring := test_stream test_read test_segment test_wait test_crash test_concurrency \
  test_shared_handle test_writers test_wlock_dead test_current test_times
UNITS_remote := test_wire test_remote test_remote_threads test_connector_timeouts test_impostor test_backends
UNITS_store := test_container test_container_chunks test_container_formats test_chunk_ahead test_data_map test_container_text test_container_cold test_recording_close test_set
UNITS_decode := test_decoder
UNITS_open := test_follow
UNITS_record := test_recorder test_record_follow
UNITS_ssm := test_ssm_compat test_ssm_clock test_ssm_times test_ssm_users
UNITS_proxy := test_watch test_hostile test_proxies test_rotate
UNITS_bridge := test_bridge test_ssmlog test_ssmlog_io test_mcapview test_ssmlogview test_db3view test_bagview
UNITS_foxglove := test_foxglove
UNITS_cli := test_timeparse
SCRIPTS_remote := tests/net-test.sh
SCRIPTS_proxy := tests/tls-cert-test.sh
SCRIPTS_record := tests/recording-test.sh tests/set-test.sh tests/gluster-test.sh
SCRIPTS_ssm := tests/install-test.sh
SCRIPTS_bridge := tests/bridge-test.sh tests/mcapview-test.sh tests/ssmlogview-test.sh tests/db3view-test.sh tests/bagview-test.sh
SCRIPTS_decode := tests/decoder-test.sh
SCRIPTS_foxglove := tests/foxglove-test.sh
SCRIPTS_dds := tests/dds-test.sh tests/dds-ls-test.sh
SCRIPTS_cli := tests/cli-test.sh tests/usage-test.sh
MODULES := base ring remote store decode open record ssm proxy bridge foxglove dds cli
.PHONY: $(MODULES:%=test-%) test-python
# (a unit named in a table but not yet written is left out)
$(MODULES:%=test-%): test-%: all
	@BUILD=$(BUILD) bash tests/run-tests.sh $(filter $(addprefix $(BUILD)/tests/,$(UNITS_$*)),$(TESTS)) \
	  $(if $(filter ssm,$*),$(CXX_TESTS)) $(TLS_MODES_$*)
	@set -e; for s in $(SCRIPTS_$*); do case $$s in tests/net-test.sh|tests/install-test.sh) bash $$s ;; \
	  tests/usage-test.sh) bash $$s $(BUILD) ;; \
	  *) bash $$s $(DSSM_BIN) ;; esac; done
test-python: all
	@bash tests/python-test.sh $(BUILD)

test: deps
	@$(MAKE) --no-print-directory all
	@echo "== unit + multi-process tests (gcc -O2)"
	@$(MAKE) --no-print-directory check-unit
	@echo "== same tests under AddressSanitizer + UBSan (clang)"
	@$(MAKE) --no-print-directory BUILD=build/asan CC=clang OPT="-O1 -g" \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" check-unit
	@echo "== concurrency tests under ThreadSanitizer (clang)"
	@$(MAKE) --no-print-directory check-tsan
	@echo "== fuzzing the wire codec, the bag/MCAP/db3/SSM-log readers, the container reader, MCAP and rosbag2 .db3 (plain or zstd) read in place and the message decoder (libFuzzer, 10 s each)"
	@bash tests/fuzz-test.sh 10
	@echo "== command-line integration tests"
	@bash tests/cli-test.sh build/dssm
	@echo "== every benchmark and example: --help, and an unknown option refused"
	@bash tests/usage-test.sh build
	@echo "== the proxy at scale: 1000 clients x 10 subscriptions, bounded threads, nothing lost"
	@build/bench/bench_scale build/dssm --clients 1000 --subs 10 --streams 300 --samples 100
	@echo "== the same with the watchers' polling fallback (kernels before 5.16)"
	@DSSM_TEST_NO_FUTEX_WAITV=1 build/bench/bench_scale build/dssm --clients 200 --subs 10 \
	  --streams 300 --samples 50
	@echo "== Python package: pytest against the library, the proxy and recordings"
	@bash tests/python-test.sh build
	@echo "== recordings: quiet rings, full disks, splits, damaged files"
	@bash tests/recording-test.sh build/dssm
	@echo "== recordings split into parts: read as one by every reader, while written, under the rolling window"
	@bash tests/set-test.sh build/dssm
	@echo "== a recording on GlusterFS (two bricks, two hosts' FUSE mounts): read from the other host while written, after a SIGKILL, split"
	@bash tests/gluster-test.sh build/dssm
	@echo "== bags and MCAP: import and export against rosbag and @mcap/core"
	@bash tests/bridge-test.sh build/dssm
	@echo "== MCAP files read in place: what the import prints, nothing under TMPDIR"
	@bash tests/mcapview-test.sh build/dssm
	@echo "== SSM logs read in place: what the import prints, nothing under TMPDIR"
	@bash tests/ssmlogview-test.sh build/dssm
	@echo "== rosbag2 .db3 files and bag directories read in place: what the import prints, what sqlite3 reads, nothing under TMPDIR"
	@bash tests/db3view-test.sh build/dssm
	@echo "== ROS 1 bags read in place: what the import and python3-rosbag give, nothing under TMPDIR"
	@bash tests/bagview-test.sh build/dssm
	@echo "== Foxglove WebSocket server against the reference client (@foxglove/ws-protocol)"
	@bash tests/foxglove-test.sh build/dssm
	@echo "== TLS with X.509 certificates: dssm proxy --tls-cert, DSSM_TLS_CA; wrong CA, name, expired, client certificates"
	@bash tests/tls-cert-test.sh build/dssm
	@echo "== DDS: dssm dds against ROS 2's std_msgs/String (Cyclone DDS), one host and two with 5% loss"
	@bash tests/dds-test.sh build/dssm
	@echo "== DDS domains: dssm ls --dds against ddsperf and a ROS 2-style talker (loopback)"
	@bash tests/dds-ls-test.sh build/dssm
	@echo "== decoded messages: ROS 1 against python3-genpy, CDR against ROS 2 MCAP files"
	@bash tests/decoder-test.sh build/dssm
	@echo "== two hosts in network namespaces: loss, a cut link, a partition"
	@bash tests/net-test.sh
	@echo "== SSM 1.0.6 program built against the installed library"
	@bash tests/install-test.sh
	@echo "== cross builds under qemu-user (aarch64, armhf)"
	@bash tests/cross-test.sh
	@echo "== code size (files over 600 lines, functions over 80 without a reason) and layers (includes only downwards)"
	@$(MAKE) --no-print-directory lint
	@echo "== all tests passed"

demo: all
	@bash examples/demo.sh

bench: all
	@bash bench/run.sh

# ---- install ----

# Man pages from each command's --help (help2man; none, with a warning, without it).
MANDIR := $(BUILD)/man
$(MANDIR)/dssm.1: $(DSSM_BIN) scripts/man.sh
	@bash scripts/man.sh $(DSSM_BIN) $(MANDIR) $(VERSION)
man: $(MANDIR)/dssm.1

# Where Debian's python3 finds packages for this PREFIX: /usr/lib/python3/
# dist-packages for /usr, PREFIX/lib/python3.X/dist-packages otherwise (the
# installed package finds libdssm.so.0 through the system loader).
PYTHON3 ?= /usr/bin/python3
PYTHON_DIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/$(shell \
  $(PYTHON3) -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages)

# Into a system prefix (/usr or /usr/local, no DESTDIR) ldconfig makes the new
# libdssm.so.0 known at once; elsewhere it says what the environment needs
# (a DESTDIR staging for a package: the package's own trigger runs ldconfig).
# tests/install-test.sh runs the Python package with the paths it names.
install: libs $(DSSM_BIN) man
	install -d $(DESTDIR)$(PREFIX)/include/dssm $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/lib/systemd/system $(DESTDIR)$(PYTHON_DIR)/dssm
	install -m 644 include/dssm/*.h $(DESTDIR)$(PREFIX)/include/dssm/
	install -m 644 include/ssm.h include/ssm-time.h include/libssm.h include/ssm.hpp \
	  include/ssmp.hpp include/ssm-log.hpp include/ssm-remote.hpp $(DESTDIR)$(PREFIX)/include/
	install -d $(DESTDIR)$(PREFIX)/include/ssmtype
	install -m 644 include/ssmtype/*.h $(DESTDIR)$(PREFIX)/include/ssmtype/
	install -m 644 $(LIBDSSM) $(LIBSSM) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBDSSM_SO) $(DESTDIR)$(PREFIX)/lib/libdssm.so.0
	install -m 755 $(LIBSSM_SO) $(DESTDIR)$(PREFIX)/lib/libssm.so.0
	ln -sf libdssm.so.0 $(DESTDIR)$(PREFIX)/lib/libdssm.so
	ln -sf libssm.so.0 $(DESTDIR)$(PREFIX)/lib/libssm.so
	install -m 755 $(DSSM_BIN) $(DESTDIR)$(PREFIX)/bin/dssm
	install -m 755 $(SSM_COORDINATOR) $(DESTDIR)$(PREFIX)/bin/ssm-coordinator
	for pc in dssm ssm; do sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	  scripts/$$pc.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc; done
	install -m 644 python/dssm/*.py $(DESTDIR)$(PYTHON_DIR)/dssm/
	if ls $(MANDIR)/*.1 >/dev/null 2>&1; then install -m 644 $(MANDIR)/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/; fi
	install -m 644 scripts/dssm.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/dssm
	sed -e 's|@BINDIR@|$(PREFIX)/bin|' scripts/dssm-proxy.service \
	  > $(DESTDIR)$(PREFIX)/lib/systemd/system/dssm-proxy.service
	@if [ -n "$(DESTDIR)" ]; then :; \
	elif [ "$(PREFIX)" = /usr ] || [ "$(PREFIX)" = /usr/local ]; then \
	  echo ldconfig; ldconfig || echo "make install: ldconfig failed: run it as root before using libdssm.so.0" >&2; \
	else \
	  echo "make install: $(PREFIX) is not a system prefix: programs need" \
	    "LD_LIBRARY_PATH=$(PREFIX)/lib, pkg-config needs PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig," \
	    "python3 needs PYTHONPATH=$(PYTHON_DIR) (and the LD_LIBRARY_PATH)"; \
	fi

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/dssm $(DESTDIR)$(PREFIX)/include/ssm.h \
	  $(DESTDIR)$(PREFIX)/include/ssm-time.h $(DESTDIR)$(PREFIX)/include/libssm.h \
	  $(DESTDIR)$(PREFIX)/include/ssm.hpp \
	  $(DESTDIR)$(PREFIX)/include/ssmp.hpp $(DESTDIR)$(PREFIX)/include/ssm-log.hpp \
	  $(DESTDIR)$(PREFIX)/include/ssm-remote.hpp \
	  $(DESTDIR)$(PREFIX)/include/ssmtype $(DESTDIR)$(PREFIX)/lib/libdssm.* \
	  $(DESTDIR)$(PREFIX)/lib/libssm.* $(DESTDIR)$(PREFIX)/bin/dssm $(DESTDIR)$(PREFIX)/bin/ssm-coordinator \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/dssm.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/ssm.pc \
	  $(DESTDIR)$(PREFIX)/share/man/man1/dssm.1 $(DESTDIR)$(PREFIX)/share/man/man1/dssm-*.1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/dssm \
	  $(DESTDIR)$(PREFIX)/lib/systemd/system/dssm-proxy.service $(DESTDIR)$(PYTHON_DIR)/dssm

clean:
	rm -rf build

# Header dependencies, as the compiler found them (-MMD -MP).
-include $(wildcard $(patsubst %.o,%.d,$(CORE_OBJ) $(COMPAT_OBJ) $(TOOL_OBJ) $(BRIDGE_OBJ) $(FOXGLOVE_OBJ) \
  $(DDS_OBJ)) $(addsuffix .d,$(TESTS) $(EXAMPLES) $(BENCHES) $(CXX_TESTS) $(DSSM_BIN) $(SSM_COORDINATOR)))
