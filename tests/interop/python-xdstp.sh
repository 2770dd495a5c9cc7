#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop with xdstp:// names (rule X1): gRPC C-core's xDS client
# (Debian's python3-grpcio) with federation on, every resource named by
# an xdstp:// name, runs the python.sh scenario. See tests/interop/README.md.
srcdir=${XDSD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=/usr/bin/python3   # Debian's, with Debian's grpcio: the client under test
if [ ! -x "$python" ]; then
  echo "not ok 1 - $python exists (install Debian's python3 and python3-grpcio)"
  echo "1..1"
  exit 1
fi
"$python" "$srcdir/tests/interop/interop.py" --client python --xdstp
