# SPDX-License-Identifier: Apache-2.0
# Protocol tests: the real xdsd over real gRPC on loopback, one or more
# tests per rule of docs/protocol.md, each run for every (method,
# type) where its rule applies (included by Makefile.am).
#   check_sotw    rules S1-S13   check_delta  rules D1-D12, restart (rule D7)
#   check_ads     rules A1, A2, encoded once  check_types  rules T1-T3, L2
#   check_ttl     rule L1 (TTLs and heartbeats)
#   check_wire    garbage, huge, never-reading clients
#   check_xdstp   rules X1, X2 (xdstp:// names, glob collections)
#   check_dyn     rule P1 (dynamic parameters)
#   check_collections  rule X3 (list collections)
#   check_ecds    rules E1, E2 (extension configs)
#   check_leds    rules G1-G3 (locality endpoints, LEDS)
#   check_errors  rules N1-N3 (per-resource errors)
#   check_valgrind_proto  a subset of them with xdsd under valgrind
check_LIBRARIES += tests/protocol/libprototest.a
tests_protocol_libprototest_a_SOURCES = \
	tests/protocol/proto_util.c tests/protocol/proto_util.h \
	tests/protocol/proto_env.c tests/protocol/proto_client.c \
	tests/protocol/suites.h
tests_protocol_libprototest_a_CFLAGS = $(TEST_CFLAGS)
PROTO_TEST_LIBS = tests/protocol/libprototest.a $(TEST_LIBS)

PROTO_TESTS = tests/protocol/check_sotw tests/protocol/check_delta \
	tests/protocol/check_ads tests/protocol/check_types \
	tests/protocol/check_wire tests/protocol/check_ttl \
	tests/protocol/check_xdstp tests/protocol/check_dyn \
	tests/protocol/check_collections tests/protocol/check_ecds \
	tests/protocol/check_leds \
	tests/protocol/check_errors
check_PROGRAMS += $(PROTO_TESTS)
TESTS += $(PROTO_TESTS)
tests_protocol_check_sotw_SOURCES = tests/protocol/check_sotw.c
tests_protocol_check_sotw_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_sotw_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_delta_SOURCES = tests/protocol/check_delta.c
tests_protocol_check_delta_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_delta_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_ads_SOURCES = tests/protocol/check_ads.c
tests_protocol_check_ads_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_ads_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_types_SOURCES = tests/protocol/check_types.c
tests_protocol_check_types_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_types_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_wire_SOURCES = tests/protocol/check_wire.c
tests_protocol_check_wire_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_wire_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_dyn_SOURCES = tests/protocol/check_dyn.c
tests_protocol_check_dyn_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_dyn_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_ttl_SOURCES = tests/protocol/check_ttl.c
tests_protocol_check_ttl_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_ttl_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_xdstp_SOURCES = tests/protocol/check_xdstp.c
tests_protocol_check_xdstp_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_xdstp_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_collections_SOURCES = tests/protocol/check_collections.c
tests_protocol_check_collections_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_collections_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_ecds_SOURCES = tests/protocol/check_ecds.c
tests_protocol_check_ecds_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_ecds_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_leds_SOURCES = tests/protocol/check_leds.c
tests_protocol_check_leds_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_leds_LDADD = $(PROTO_TEST_LIBS)
tests_protocol_check_errors_SOURCES = tests/protocol/check_errors.c
tests_protocol_check_errors_CFLAGS = $(TEST_CFLAGS)
tests_protocol_check_errors_LDADD = $(PROTO_TEST_LIBS)

if !SANITIZERS
# valgrind cannot run an ASan binary; the plain build runs these.
check_PROGRAMS += tests/protocol/check_valgrind_proto
TESTS += tests/protocol/check_valgrind_proto
tests_protocol_check_valgrind_proto_SOURCES = \
	tests/protocol/check_valgrind_proto.c tests/protocol/check_sotw.c \
	tests/protocol/check_delta.c tests/protocol/check_ads.c \
	tests/protocol/check_wire.c tests/protocol/check_xdstp.c \
	tests/protocol/check_dyn.c tests/protocol/check_collections.c \
	tests/protocol/check_ecds.c tests/protocol/check_leds.c \
	tests/protocol/check_errors.c
tests_protocol_check_valgrind_proto_CFLAGS = $(TEST_CFLAGS) -DPU_NO_MAIN
tests_protocol_check_valgrind_proto_LDADD = $(PROTO_TEST_LIBS)
endif
