#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop over mutual TLS: grpc-go 1.85 (tests/interop/go), with its
# certificate in the bootstrap's channel_creds ("gRFC A65"), follows
# snapshot changes from an xdsd that requires client certificates; a
# client whose identity is not authorized gets nothing ("Over mutual TLS").
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client go --tls
