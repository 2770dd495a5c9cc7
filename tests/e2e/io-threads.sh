#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The protocol and TLS suites again with gRPC's I/O on four threads
# (io_threads: 4, through $XDT_IO_THREADS: tests/lib/daemon.h): every
# daemon they start must say it runs four, serve as it does on one and
# stop cleanly.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

for t in tests/protocol/check_ads tests/protocol/check_sotw \
	 tests/protocol/check_delta tests/e2e/check_tls; do
	check "$t with io_threads: 4" env XDT_IO_THREADS=4 "$XDSD_BUILDDIR/$t"
done
done_testing
