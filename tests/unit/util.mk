# SPDX-License-Identifier: Apache-2.0
# Unit tests of src/util/, src/wire/ and src/http/ (included by
# Makefile.am): each a Check program over the module alone, on real
# sockets where the module uses them.
check_PROGRAMS += tests/unit/check_address
tests_unit_check_address_SOURCES = tests/unit/check_address.c
tests_unit_check_address_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_address_LDADD = $(TEST_LIBS)
TESTS += tests/unit/check_address

check_PROGRAMS += tests/unit/check_text
tests_unit_check_text_SOURCES = tests/unit/check_text.c
tests_unit_check_text_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_text_LDADD = $(TEST_LIBS)
TESTS += tests/unit/check_text

check_PROGRAMS += tests/unit/check_http
tests_unit_check_http_SOURCES = tests/unit/check_http.c
tests_unit_check_http_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_http_LDADD = $(TEST_LIBS)
TESTS += tests/unit/check_http

check_PROGRAMS += tests/unit/check_wire
tests_unit_check_wire_SOURCES = tests/unit/check_wire.c
tests_unit_check_wire_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_wire_LDADD = $(TEST_LIBS)
TESTS += tests/unit/check_wire
