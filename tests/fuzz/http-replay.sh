#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The HTTP endpoints' fuzz target without libFuzzer (tests/fuzz/fuzz_http.c,
# http_replay.c): every seed http-seeds writes, and the regression inputs
# of tests/fuzz/seeds-http/, run against the real admin and REST-JSON
# endpoints with the target's checks. TAP, one test per input.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
"$XDSD_BUILDDIR/tests/fuzz/http-seeds" "$dir" >/dev/null
"$XDSD_BUILDDIR/tests/fuzz/http-replay" "$dir" "$XDSD_SRCDIR/tests/fuzz/seeds-http"
