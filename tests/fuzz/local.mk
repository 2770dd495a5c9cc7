# libFuzzer targets for what peers send (included by Makefile.am).
# The transcoder's target lives with its corpora in tests/schema/local.mk.

# ---------------------------------------------------------------------
# `make fuzz-request` (also reached by `make fuzz`): every request a
# peer sends, SotW and delta, through parsing, the node, subscriptions
# and the sequencer, under libFuzzer with ASan and UBSan
# (tests/fuzz/fuzz_request.c). Seeded with streams captured from gRPC's
# own xDS clients (seeds-request/, made by capture-requests.py: they
# need a live daemon and client, so they are committed) and with the
# requests request-seeds writes (delta, reconnections, NACKs, deep node
# metadata...). Needs clang; runs FUZZ_TIME seconds.
# ---------------------------------------------------------------------
FUZZ_REQUEST_SRCS = $(srcdir)/tests/fuzz/fuzz_request.c \
	$(srcdir)/src/protocol/request.c $(srcdir)/src/protocol/node.c \
	$(srcdir)/src/protocol/sub.c $(srcdir)/src/protocol/sequence.c \
	$(srcdir)/src/protocol/body.c $(srcdir)/src/protocol/derived.c \
	$(srcdir)/src/protocol/nameset.c $(srcdir)/src/snapshot/table.c \
	$(srcdir)/src/snapshot/snapshot.c $(srcdir)/src/xds/rtype.c \
	$(srcdir)/src/schema/wire.c $(srcdir)/src/util/arena.c \
	$(srcdir)/src/util/buf.c $(srcdir)/src/util/xalloc.c \
	$(srcdir)/src/util/log.c $(srcdir)/src/util/text.c \
	$(srcdir)/src/util/jsonw.c \
	$(srcdir)/src/xds/message.c $(srcdir)/src/xds/xdstp.c \
	$(srcdir)/src/xds/dynparam.c

# The synthetic seeds, written at `make fuzz-request` time so that they
# follow the harness's input format; built by `make check` too, so that
# it keeps compiling. It needs the message code and the hostile message
# builder, not the daemon's library.
check_PROGRAMS += tests/fuzz/request-seeds
tests_fuzz_request_seeds_SOURCES = tests/fuzz/request_seeds.c \
	tests/lib/hostile.c tests/lib/xdtest.c src/xds/rtype.c
tests_fuzz_request_seeds_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_request_seeds_LDADD = proto/libxdsproto.a $(CHECK_LIBS) \
	$(PROTOBUF_C_LIBS) $(XXHASH_LIBS)
$(tests_fuzz_request_seeds_OBJECTS): proto/gen.stamp

EXTRA_DIST += tests/fuzz/fuzz_request.c tests/fuzz/capture-requests.py \
	tests/fuzz/seeds-request
if HAVE_CLANG
# The harness is held to every warning; the protobuf-c code it links
# (to decode responses) builds without -Wshadow -Wmissing-prototypes,
# as it does for the daemon.
tests/fuzz/fuzz_request$(EXEEXT): $(FUZZ_REQUEST_SRCS) proto/gen.stamp
	$(AM_V_CCLD)$(MKDIR_P) tests/fuzz && \
	$(CLANG) -fsyntax-only $(DEFS) $(AM_CPPFLAGS) $(WARN_CFLAGS) \
		$(GRPC_CFLAGS) $(PROTOBUF_C_CFLAGS) $(XXHASH_CFLAGS) \
		$(srcdir)/tests/fuzz/fuzz_request.c && \
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined $(DEFS) $(AM_CPPFLAGS) \
		$(WARN_CFLAGS) -Wno-missing-prototypes -Wno-shadow \
		$(GRPC_CFLAGS) $(PROTOBUF_C_CFLAGS) $(XXHASH_CFLAGS) \
		-o $@ $(FUZZ_REQUEST_SRCS) $(TRANSPORT_PB_C) -lgrpc -lgpr \
		$(PROTOBUF_C_LIBS) $(XXHASH_LIBS) -lpthread -lm
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
fuzz: fuzz-request
CLEANFILES += tests/fuzz/fuzz_request$(EXEEXT)
clean-local: clean-fuzz-request
clean-fuzz-request:
	rm -rf tests/fuzz/seeds-request-built tests/fuzz/corpus-request
.PHONY: fuzz-request clean-fuzz-request
