#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop over mutual TLS: @grpc/grpc-js-xds follows snapshot changes
# from an xdsd that requires client certificates and authorizes the
# client's identity for its node; a client whose identity is not
# authorized gets nothing. See tests/interop/README.md, "Over mutual TLS".
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client node --tls
