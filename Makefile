# SPDX-License-Identifier: Apache-2.0
# xdsd bootstrap makefile.
#
# On a fresh checkout this file installs what is missing (Debian 12
# packages, via scripts/install-deps), runs autoreconf and configures an
# out-of-tree build in build/, then hands the target to build/. The
# README's two commands are the contract:
#
#   make run     install, build, serve the example on 127.0.0.1:18000
#   make check   install, build, run every test
#   make deb     install, build the Debian package xdsd_VERSION_ARCH.deb
#
# Packagers may instead run `autoreconf -fi && ./configure && make` in
# this directory: configure writes GNUmakefile, which GNU make reads in
# preference to this file, so this wrapper then steps aside.

BUILD ?= build
CONFIGURE_FLAGS ?=
# Build and test in parallel, one job per core.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# `check` needs the test dependencies too (check-systemd the package's
# build tools with them); `deb` the package's build tools; everything
# else only builds.
DEPS_MODE = $(if $(filter check% bench fuzz coverage,$(MAKECMDGOALS)),,$(if \
	$(filter deb,$(MAKECMDGOALS)),--deb,--build))

TARGETS = all run check install uninstall installcheck dist distcheck \
	bench fuzz coverage xdsd deb check-systemd

.DEFAULT_GOAL := all
.PHONY: $(TARGETS) deps configure clean distclean

$(TARGETS): configure
	@$(MAKE) --no-print-directory -j$(JOBS) -C $(BUILD) $@

deps:
	@./scripts/install-deps $(DEPS_MODE)

# Configures $(BUILD)/ on first use, and again:
# - when CONFIGURE_FLAGS are given and differ from those it was configured
#   with (kept in $(BUILD)/.configure-flags), so `make CONFIGURE_FLAGS=...
#   install` after a `make check` does not silently keep the old prefix;
# - when a target needs the test packages and $(BUILD)/ was configured
#   with the build packages only (kept in $(BUILD)/.configure-deps), so
#   that `make check` after `make run` finds valgrind, clang and the rest.
configure: deps
	@flags='$(CONFIGURE_FLAGS)'; \
	if [ ! -f $(BUILD)/GNUmakefile ] || { [ -n "$$flags" ] && \
	   [ "$$flags" != "$$(cat $(BUILD)/.configure-flags 2>/dev/null)" ]; } || \
	   { [ -z "$(DEPS_MODE)" ] && \
	   [ -n "$$(cat $(BUILD)/.configure-deps 2>/dev/null)" ]; }; then \
		[ -n "$$flags" ] || flags=$$(cat $(BUILD)/.configure-flags 2>/dev/null); \
		echo "configuring in $(BUILD)/ $$flags"; \
		autoreconf -fi && mkdir -p $(BUILD) && cd $(BUILD) && \
		../configure $$flags && printf '%s\n' "$$flags" > .configure-flags && \
		printf '%s\n' '$(DEPS_MODE)' > .configure-deps; \
	fi

clean:
	@if [ -f $(BUILD)/GNUmakefile ]; then $(MAKE) -C $(BUILD) clean; fi

distclean:
	rm -rf $(BUILD) build-asan build-cov

# Keep GNU make from trying to remake this file through `%` rules.
Makefile: ;
