#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop over mutual TLS: gRPC C-core's xDS client (Debian's
# python3-grpcio) follows snapshot changes from an xdsd that requires
# client certificates and authorizes the client's identity for its node;
# a client whose identity is not authorized gets nothing. See
# tests/interop/README.md, "Over mutual TLS".
srcdir=${XDSD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=/usr/bin/python3   # Debian's, with Debian's grpcio: the client under test
if [ ! -x "$python" ]; then
  echo "not ok 1 - $python exists (install Debian's python3 and python3-grpcio)"
  echo "1..1"
  exit 1
fi
"$python" "$srcdir/tests/interop/interop.py" --client python --tls
