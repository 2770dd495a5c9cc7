#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The request fuzz target without libFuzzer (tests/fuzz/fuzz_request.c,
# http_replay.c): every seed request-seeds writes, and the inputs of
# tests/fuzz/seeds-request/ (streams captured from gRPC's clients and
# the regressions earlier runs found), through the harness's model and
# checks. TAP, one test per input.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
"$XDSD_BUILDDIR/tests/fuzz/request-seeds" "$dir" >/dev/null
"$XDSD_BUILDDIR/tests/fuzz/request-replay" "$dir" "$XDSD_SRCDIR/tests/fuzz/seeds-request"
