#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: a staged rollout (`rollout:`) with gRPC C-core's xDS client
# (Debian's python3-grpcio): a canary client gets a change first, a
# client that is no canary only once the canary ACKed and the bake
# passed. See tests/interop/README.md.
srcdir=${XDSD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=/usr/bin/python3   # Debian's, with Debian's grpcio: the client under test
if [ ! -x "$python" ]; then
  echo "not ok 1 - $python exists (install Debian's python3 and python3-grpcio)"
  echo "1..1"
  exit 1
fi
"$python" "$srcdir/tests/interop/interop.py" --client python --rollout
