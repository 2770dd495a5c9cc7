# SPDX-License-Identifier: Apache-2.0
# Sourced by the interop wrappers: sets $srcdir and $python, Debian's
# python3 with Debian's grpcio (the client under test, or the driver and
# its backends), and fails as a TAP plan of one when it is missing.
srcdir=${XDSD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=/usr/bin/python3
if [ ! -x "$python" ]; then
  echo "not ok 1 - $python exists (install Debian's python3 and python3-grpcio)"
  echo "1..1"
  exit 1
fi
