# SPDX-License-Identifier: Apache-2.0
# `make coverage` (included by Makefile.am): line and branch coverage of
# src/ by `make check`, per directory. COVERAGE_TESTS, when given, is
# the TESTS of that `make check`: the coverage of a module by its own
# tests, without the whole suite's run time, e.g.
#   make coverage COVERAGE_TESTS='tests/unit/check_rollout_rules
#     tests/e2e/check_rollout tests/e2e/check_fleet'
# (every test program is still built; only those run).
#
# It configures an instrumented copy of the tree in its own build
# directory, COVERAGE_BUILD (build-cov/ beside the sources unless
# given), with gcc --coverage at -O0, so that each line counts as
# written, and -fprofile-update=atomic, as the daemon's threads (gRPC's,
# the loop's) update the same counters; runs `make check` there, every
# object built afresh (no counts nor line tables of an earlier tree,
# whose files may since have moved, mix in); then gcovr (Debian's gcovr, among scripts/install-deps's
# test packages) reads the counts: scripts/coverage-table prints one
# row per src/ directory, weakest first, and the HTML report, file by
# file and line by line, goes to COVERAGE_BUILD/coverage/index.html. A
# failed test still gets its report, and then fails the target.
COVERAGE_SRC = $(realpath $(abs_top_srcdir))
COVERAGE_BUILD = $(COVERAGE_SRC)/build-cov
COVERAGE_CFLAGS = -O0 -g --coverage -fprofile-update=atomic
COVERAGE_TESTS =
EXTRA_DIST += scripts/coverage.mk scripts/coverage-table

coverage:
	@command -v gcovr >/dev/null 2>&1 || { \
		echo "make coverage needs gcovr: install the Debian package gcovr (scripts/install-deps)" >&2; \
		exit 1; }
	@$(MKDIR_P) '$(COVERAGE_BUILD)' && cd '$(COVERAGE_BUILD)' && \
	flags='$(COVERAGE_CFLAGS) $(XDS_API_LOCAL)'; \
	if [ ! -f GNUmakefile ] || [ "$$flags" != "$$(cat .coverage-flags 2>/dev/null)" ]; then \
		echo "coverage: configuring $(COVERAGE_BUILD)"; \
		CC='$(CC)' '$(COVERAGE_SRC)/configure' \
			CFLAGS='$(COVERAGE_CFLAGS)' LDFLAGS=--coverage \
			$(XDS_API_LOCAL:%=--with-xds-api=%) >config.out || \
		{ cat config.out; exit 1; }; \
		printf '%s\n' "$$flags" > .coverage-flags; \
	fi && \
	rm -f *conftest* && \
	find . \( -name '*.o' -o -name '*.gcno' -o -name '*.gcda' \) -delete && \
	tests='$(strip $(COVERAGE_TESTS))' && \
	{ if [ -n "$$tests" ]; then \
		echo "coverage: make check TESTS='$$tests'"; \
		$(MAKE) $(AM_MAKEFLAGS) check TESTS="$$tests"; \
	else \
		$(MAKE) $(AM_MAKEFLAGS) check; \
	fi; status=$$?; } && \
	rm -rf coverage && $(MKDIR_P) coverage && \
	gcovr --root '$(COVERAGE_SRC)' --filter '$(COVERAGE_SRC)/src/' \
		--exclude-unreachable-branches \
		--json-summary coverage/summary.json \
		--html-details coverage/index.html --html-title 'xdsd: make check' \
		. && \
	echo "coverage of src/ by make check$${tests:+ TESTS='$$tests'}, $$(date -u +%Y-%m-%d):" && \
	$(PYTHON3) '$(COVERAGE_SRC)/scripts/coverage-table' coverage/summary.json && \
	echo "coverage: report in $(COVERAGE_BUILD)/coverage/index.html" && \
	exit $$status
.PHONY: coverage
