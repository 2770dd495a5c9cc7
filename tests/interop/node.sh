#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: @grpc/grpc-js-xds (installed with npm ci from the committed
# lock file into the build tree) gets its listener, route, clusters and
# endpoints from xdsd and follows snapshot changes without a failed RPC.
# See tests/interop/README.md.
srcdir=${XDSD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=/usr/bin/python3   # the driver and its backends use Debian's grpcio
if [ ! -x "$python" ]; then
  echo "not ok 1 - $python exists (install Debian's python3 and python3-grpcio)"
  echo "1..1"
  exit 1
fi
"$python" "$srcdir/tests/interop/interop.py" --client node
