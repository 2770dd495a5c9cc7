#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Envoy's own verdict before serving: xdsd --check --envoy and xdsctl
# push/diff --envoy with the real Envoy of the tests' venv, on snapshots
# xdsd's own checks accept and Envoy refuses (envoy-refuses/) and on
# good ones. See tests/interop/README.md, "Envoy's verdict".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_check.py"
