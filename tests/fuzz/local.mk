# SPDX-License-Identifier: Apache-2.0
# libFuzzer targets for what peers send (included by Makefile.am).
# The transcoder's target lives with its corpora in tests/schema/local.mk.

# ---------------------------------------------------------------------
# The fuzzers' copy of the libraries: src/libxdcore.a, src/libxdsd.a and
# proto/libxdsproto.a built again by clang with coverage and the
# sanitizers, from the source lists Makefile.am gives those libraries
# (src_libxdcore_a_SOURCES, the schema's local.mk included, and
# src_libxdsd_a_SOURCES), never from lists of their own, which would
# fall behind as modules come and go. Every target links its harness
# with these archives, so the linker takes what the harness reaches:
# fuzz-transcode and fuzz-request the core, fuzz-http the daemon too.
# The objects go under tests/fuzz/objs/, rebuilt when any of the
# libraries' headers changes.
# ---------------------------------------------------------------------
FUZZ_CORE_OBJS = \
	$(patsubst %.c,tests/fuzz/objs/%.o,$(filter %.c,$(src_libxdcore_a_SOURCES)))
FUZZ_XDSD_OBJS = \
	$(patsubst %.c,tests/fuzz/objs/%.o,$(filter %.c,$(src_libxdsd_a_SOURCES)))
FUZZ_PB_OBJS = $(TRANSPORT_PB_C:%.c=tests/fuzz/objs/%.o)
FUZZ_HARNESS_OBJS = tests/fuzz/objs/tests/fuzz/fuzz_request.o \
	tests/fuzz/objs/tests/fuzz/fuzz_http.o \
	tests/fuzz/objs/tests/fuzz/fuzz_transcode.o
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined -std=gnu11 $(DEFS) $(AM_CPPFLAGS) \
	$(DEP_CFLAGS)
# What each target links after its harness: the archives, then the
# libraries the daemon links.
FUZZ_CORE_LIBS = tests/fuzz/objs/libxdcore.a tests/fuzz/objs/libxdsproto.a
FUZZ_XDSD_LIBS = tests/fuzz/objs/libxdsd.a $(FUZZ_CORE_LIBS)

if HAVE_CLANG
$(FUZZ_CORE_OBJS) $(FUZZ_XDSD_OBJS) $(FUZZ_HARNESS_OBJS): \
		tests/fuzz/objs/%.o: %.c proto/gen.stamp $(PATHS_H) \
		$(filter %.h,$(src_libxdcore_a_SOURCES) $(src_libxdsd_a_SOURCES)) \
		tests/fuzz/fuzz_http.h
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) $(WARN_CFLAGS) -c -o $@ $<
# protoc-c's output, held to the warnings the daemon holds it to
$(FUZZ_PB_OBJS): tests/fuzz/objs/%.o: %.c proto/gen.stamp
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) $(WARN_CFLAGS) \
		-Wno-missing-prototypes -Wno-shadow -c -o $@ $<
tests/fuzz/objs/libxdcore.a: $(FUZZ_CORE_OBJS)
tests/fuzz/objs/libxdsd.a: $(FUZZ_XDSD_OBJS)
tests/fuzz/objs/libxdsproto.a: $(FUZZ_PB_OBJS)
tests/fuzz/objs/libxdcore.a tests/fuzz/objs/libxdsd.a \
		tests/fuzz/objs/libxdsproto.a:
	$(AM_V_AR)rm -f $@ && $(AR) $(ARFLAGS) $@ $^ && $(RANLIB) $@
endif
clean-local: clean-fuzz-objs
clean-fuzz-objs:
	rm -rf tests/fuzz/objs
.PHONY: clean-fuzz-objs

# ---------------------------------------------------------------------
# `make fuzz-request` (also reached by `make fuzz`): every request a
# peer sends, SotW and delta, through parsing, the client module
# (admission, form, snapshot key), the typeset (routing, unknown types,
# list collections), subscriptions and the sequencer, under libFuzzer
# with ASan and UBSan (tests/fuzz/fuzz_request.c). Seeded with streams
# captured from gRPC's own xDS clients (seeds-request/, made by
# capture-requests.py: they need a live daemon and client, so they are
# committed) and with the requests request-seeds writes (delta,
# reconnections, NACKs, deep node metadata...). Needs clang; runs FUZZ_TIME seconds.
# FUZZ_TIME=900 on the 2-core build machine, 2026-11-27, the harness on
# the client and typeset modules: 1,203,232 executions, 2,191 edges, a
# corpus of 1,657 inputs, no failure.
# (README, "Development", says what the runs found.)
# The target links the fuzzers' copy of the core (above).
# ---------------------------------------------------------------------

# The synthetic seeds, written at `make fuzz-request` time so that they
# follow the harness's input format; built by `make check` too, so that
# it keeps compiling. It needs the message code and the hostile message
# builder, and of the core only the resource types.
check_PROGRAMS += tests/fuzz/request-seeds
tests_fuzz_request_seeds_SOURCES = tests/fuzz/request_seeds.c \
	tests/lib/hostile.c tests/lib/xdtest.c
tests_fuzz_request_seeds_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_request_seeds_LDADD = src/libxdcore.a proto/libxdsproto.a \
	$(CHECK_LIBS) $(PROTOBUF_C_LIBS) $(XXHASH_LIBS)
$(tests_fuzz_request_seeds_OBJECTS): proto/gen.stamp

# The target without libFuzzer (http_replay.c's main), built by `make
# check` with the daemon's compiler and warnings, so that the harness
# keeps compiling and its seeds and regression inputs keep passing.
check_PROGRAMS += tests/fuzz/request-replay
tests_fuzz_request_replay_SOURCES = tests/fuzz/http_replay.c \
	tests/fuzz/fuzz_request.c
tests_fuzz_request_replay_LDADD = $(XDSD_LIBS)
$(tests_fuzz_request_replay_OBJECTS): proto/gen.stamp $(PATHS_H)
TESTS += tests/fuzz/request-replay.sh

EXTRA_DIST += tests/fuzz/fuzz_request.c tests/fuzz/capture-requests.py \
	tests/fuzz/seeds-request tests/fuzz/request-replay.sh
if HAVE_CLANG
tests/fuzz/fuzz_request$(EXEEXT): tests/fuzz/objs/tests/fuzz/fuzz_request.o \
		$(FUZZ_CORE_LIBS)
	$(AM_V_CCLD)$(CLANG) -g -fsanitize=fuzzer,address,undefined -o $@ \
		tests/fuzz/objs/tests/fuzz/fuzz_request.o $(FUZZ_CORE_LIBS) \
		$(DEP_LIBS)
fuzz-request: tests/fuzz/fuzz_request$(EXEEXT) tests/fuzz/request-seeds$(EXEEXT)
	@rm -rf tests/fuzz/seeds-request-built && \
	$(MKDIR_P) tests/fuzz/seeds-request-built tests/fuzz/corpus-request && \
	tests/fuzz/request-seeds$(EXEEXT) tests/fuzz/seeds-request-built
	tests/fuzz/fuzz_request$(EXEEXT) \
		-max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=10 \
		-rss_limit_mb=2048 tests/fuzz/corpus-request \
		tests/fuzz/seeds-request-built $(srcdir)/tests/fuzz/seeds-request
else
fuzz-request:
	@echo "make fuzz needs clang, which configure did not find"; exit 1
endif
CLEANFILES += tests/fuzz/fuzz_request$(EXEEXT)
clean-local: clean-fuzz-request
clean-fuzz-request:
	rm -rf tests/fuzz/seeds-request-built tests/fuzz/corpus-request
.PHONY: fuzz-request clean-fuzz-request

# ---------------------------------------------------------------------
# `make fuzz-http` (also reached by `make fuzz`): the admin endpoint and
# REST-JSON, the real ones on libmicrohttpd and the libuv loop, under
# libFuzzer with ASan and UBSan (tests/fuzz/fuzz_http.c): each input is
# a program of opens, sends, reads, closes, resets, half-closes, loop
# runs, snapshot changes and reloads over eight client connections on
# loopback, and every answer is checked (well-formed, in order, what
# its request may get, nothing after a close; no poll outlives its
# connection; both servers settle to no connection after each input).
# Seeded with what http-seeds writes (every admin page and guard case,
# every REST-JSON type, held polls, the bounds), with a dictionary of
# HTTP and xDS words (http.dict), and with the regression inputs in
# seeds-http/. Needs clang; runs FUZZ_TIME seconds.
# FUZZ_TIME=900 on the 2-core build machine, 2026-11-26: 66,206
# executions (73 a second), 2,659 edges, a corpus of 1,172 inputs, no
# failure; then, after the second fix below, 43,110 executions from
# that corpus, 2,674 edges, no failure. Earlier runs found a connection
# kept after its client had gone, and the corpus's coverage a chunked
# body over the bound left unanswered (both fixed in src/http/http.c;
# README, "Development").
#
# The target links the fuzzers' copy of the daemon's libraries (above).
# ---------------------------------------------------------------------

# Built by `make check` too, so that they keep compiling: the seed
# writer, and the target without libFuzzer (http_replay.c's main),
# which replays the seeds and seeds-http/ as a test. Both binaries wrap
# xd_http_start, for the harness to read the admin endpoint's counters.
check_PROGRAMS += tests/fuzz/http-seeds tests/fuzz/http-replay
tests_fuzz_http_seeds_SOURCES = tests/fuzz/http_seeds.c tests/fuzz/fuzz_http.h
tests_fuzz_http_replay_SOURCES = tests/fuzz/http_replay.c \
	tests/fuzz/fuzz_http.c tests/fuzz/fuzz_http.h
tests_fuzz_http_replay_LDADD = $(XDSD_LIBS)
tests_fuzz_http_replay_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=xd_http_start
$(tests_fuzz_http_replay_OBJECTS): proto/gen.stamp $(PATHS_H)
TESTS += tests/fuzz/http-replay.sh

EXTRA_DIST += tests/fuzz/http.dict tests/fuzz/http-replay.sh \
	tests/fuzz/seeds-http
if HAVE_CLANG
tests/fuzz/fuzz_http$(EXEEXT): tests/fuzz/objs/tests/fuzz/fuzz_http.o \
		$(FUZZ_XDSD_LIBS)
	$(AM_V_CCLD)$(CLANG) -g -fsanitize=fuzzer,address,undefined \
		-Wl,--wrap=xd_http_start -o $@ \
		tests/fuzz/objs/tests/fuzz/fuzz_http.o $(FUZZ_XDSD_LIBS) \
		$(DEP_LIBS)
# xdsd's log goes to a closed stderr (-close_fd_mask=2) at debug level,
# so that the lines about what clients send are written, and cheaply;
# the harness and libFuzzer report on a copy of stderr.
fuzz-http: tests/fuzz/fuzz_http$(EXEEXT) tests/fuzz/http-seeds$(EXEEXT)
	@rm -rf tests/fuzz/seeds-http-built && \
	$(MKDIR_P) tests/fuzz/seeds-http-built tests/fuzz/corpus-http && \
	tests/fuzz/http-seeds$(EXEEXT) tests/fuzz/seeds-http-built
	XDSD_SCHEMA=proto/xds-api.pb FUZZ_HTTP_LOG=debug \
	tests/fuzz/fuzz_http$(EXEEXT) \
		-max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=20 \
		-rss_limit_mb=2048 -close_fd_mask=2 \
		-dict=$(srcdir)/tests/fuzz/http.dict tests/fuzz/corpus-http \
		tests/fuzz/seeds-http-built $(srcdir)/tests/fuzz/seeds-http
else
fuzz-http:
	@echo "make fuzz needs clang, which configure did not find"; exit 1
endif
# `make fuzz`: every target, one after the other whatever -j says (the
# top-level Makefile passes one job per core): each fuzzer keeps a core
# busy on its own, and FUZZ_TIME is each one's.
fuzz:
	$(MAKE) $(AM_MAKEFLAGS) fuzz-transcode
	$(MAKE) $(AM_MAKEFLAGS) fuzz-request
	$(MAKE) $(AM_MAKEFLAGS) fuzz-http
CLEANFILES += tests/fuzz/fuzz_http$(EXEEXT)
clean-local: clean-fuzz-http
clean-fuzz-http:
	rm -rf tests/fuzz/seeds-http-built tests/fuzz/corpus-http
.PHONY: fuzz-http clean-fuzz-http
