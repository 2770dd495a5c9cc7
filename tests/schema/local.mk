# SPDX-License-Identifier: Apache-2.0
# Schema and transcoder tests (included by Makefile.am).

# The command-line face of the transcoder, which the differential and
# bad-input tests drive.
check_PROGRAMS += tests/schema/transcode-tool
tests_schema_transcode_tool_SOURCES = tests/schema/transcode-tool.c
tests_schema_transcode_tool_LDADD = $(XDSD_LIBS)

# A descriptor set of test messages covering what the Envoy schema lacks
# (FieldMask, proto3 optional, proto2, every map key type).
tests/schema/xdtest.pb: $(srcdir)/tests/schema/proto/xdtest.proto $(srcdir)/tests/schema/proto/xdtest2.proto
	$(AM_V_GEN)$(MKDIR_P) tests/schema && \
	$(PROTOC) -I$(srcdir)/tests/schema/proto -I$(PROTOBUF_INCLUDE) \
		--include_imports --descriptor_set_out=$@.tmp \
		$(srcdir)/tests/schema/proto/xdtest.proto && mv $@.tmp $@
EXTRA_tests_schema_transcode_tool_DEPENDENCIES = tests/schema/xdtest.pb
CLEANFILES += tests/schema/xdtest.pb
EXTRA_DIST += tests/schema/proto

# ---------------------------------------------------------------------
# `make bench-transcode` (also reached by `make bench`): how fast a
# 15 MB snapshot becomes encoded resources. Built on demand only.
# ---------------------------------------------------------------------
bench/transcode-bench$(EXEEXT): $(srcdir)/bench/transcode-bench.c src/libxdsd.a \
		src/libxdcore.a proto/libxdsproto.a $(PATHS_H)
	$(AM_V_CCLD)$(MKDIR_P) bench && \
	$(CC) $(DEFS) $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) -O2 \
		$(AM_LDFLAGS) $(LDFLAGS) -o $@ $(srcdir)/bench/transcode-bench.c \
		$(XDSD_LIBS) $(LIBS)
bench-transcode: bench/transcode-bench$(EXEEXT)
	bench/transcode-bench$(EXEEXT) --schema proto/xds-api.pb
bench: bench-transcode
CLEANFILES += bench/transcode-bench$(EXEEXT)
EXTRA_DIST += bench/transcode-bench.c
.PHONY: bench bench-transcode

# ---------------------------------------------------------------------
# Unit tests of the schema and the transcoder.
# ---------------------------------------------------------------------
check_PROGRAMS += tests/unit/check_schema tests/unit/check_transcode
tests_unit_check_schema_SOURCES = tests/unit/check_schema.c
tests_unit_check_schema_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_schema_LDADD = $(TEST_LIBS)
EXTRA_tests_unit_check_schema_DEPENDENCIES = tests/schema/xdtest.pb
tests_unit_check_transcode_SOURCES = tests/unit/check_transcode.c
tests_unit_check_transcode_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_transcode_LDADD = $(TEST_LIBS)
EXTRA_tests_unit_check_transcode_DEPENDENCIES = tests/schema/xdtest.pb
TESTS += tests/unit/check_schema tests/unit/check_transcode

# The differential test against python3-protobuf, and the golden bad
# inputs (tests/schema/bad/NAME.yaml beside NAME.err).
TESTS += tests/schema/differential.sh tests/schema/bad-inputs.sh
EXTRA_DIST += tests/schema/differential.sh tests/schema/differential.py \
	tests/schema/bad-inputs.sh tests/schema/corpus tests/schema/bad

# A schema built by xdsd-build-schema from an older copy of the API
# (old-api.lock, staged by stage-old-api), and xdsd run with it.
TESTS += tests/schema/own-schema.sh
EXTRA_DIST += tests/schema/own-schema.sh tests/schema/own \
	tests/schema/old-api.lock tests/schema/stage-old-api

# ---------------------------------------------------------------------
# `make fuzz-transcode` (also reached by `make fuzz`): the transcoder
# under libFuzzer with ASan and UBSan, seeded with the differential
# corpus. Needs clang; runs FUZZ_TIME seconds (default 120).
# ---------------------------------------------------------------------
FUZZ_TIME ?= 120
# The harness links the fuzzers' copy of the core (tests/fuzz/local.mk).
EXTRA_DIST += tests/fuzz/fuzz_transcode.c
if HAVE_CLANG
tests/fuzz/fuzz_transcode$(EXEEXT): \
		tests/fuzz/objs/tests/fuzz/fuzz_transcode.o \
		tests/fuzz/objs/libxdcore.a tests/fuzz/objs/libxdsproto.a
	$(AM_V_CCLD)$(CLANG) -g -fsanitize=fuzzer,address,undefined -o $@ \
		tests/fuzz/objs/tests/fuzz/fuzz_transcode.o \
		tests/fuzz/objs/libxdcore.a tests/fuzz/objs/libxdsproto.a \
		$(DEP_LIBS)
fuzz-transcode: tests/fuzz/fuzz_transcode$(EXEEXT) tests/schema/xdtest.pb
	@rm -rf tests/fuzz/seeds-transcode && \
	$(MKDIR_P) tests/fuzz/seeds-transcode tests/fuzz/corpus-transcode && \
	for f in $(srcdir)/tests/schema/corpus/*.yaml \
		 $(srcdir)/tests/schema/bad/*.yaml; do \
		b=`basename $$f .yaml`; \
		printf '\000\000' | cat - $$f > tests/fuzz/seeds-transcode/$$b; \
	done && \
	for f in $(srcdir)/tests/schema/bad/*.json; do \
		b=`basename $$f .json`; \
		printf '\002\000' | cat - $$f > tests/fuzz/seeds-transcode/$$b.json; \
	done
	XDSD_SCHEMA=proto/xds-api.pb tests/fuzz/fuzz_transcode$(EXEEXT) \
		-max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=10 \
		-rss_limit_mb=2048 tests/fuzz/corpus-transcode \
		tests/fuzz/seeds-transcode
else
fuzz-transcode:
	@echo "make fuzz needs clang, which configure did not find"; exit 1
endif
CLEANFILES += tests/fuzz/fuzz_transcode$(EXEEXT)
clean-local: clean-fuzz-transcode
clean-fuzz-transcode:
	rm -rf tests/fuzz/seeds-transcode tests/fuzz/corpus-transcode
.PHONY: fuzz fuzz-transcode clean-fuzz-transcode
EXTRA_DIST += docs/schema.md
