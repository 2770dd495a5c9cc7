#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop over mutual TLS: gRPC C-core 1.85 (PyPI's grpcio, in the tests' venv), with its
# certificate in the bootstrap's channel_creds ("gRFC A65"), follows
# snapshot changes from an xdsd that requires client certificates; a
# client whose identity is not authorized gets nothing ("Over mutual TLS").
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client pypi --tls
