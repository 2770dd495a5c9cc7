# SPDX-License-Identifier: Apache-2.0
# Sourced by the wrappers of the interop tests that run in the tests'
# virtual environment (tests/interop/requirements.txt: the real Envoy,
# gRPC 1.85): makes it in $XDSD_BUILDDIR/venv with scripts/install-venv
# unless it is there already, and sets $srcdir and $python, the venv's
# python. A venv that cannot be made fails the test, as a TAP plan of
# one with pip's complaint; it never skips.
srcdir=${XDSD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
venv=${XDSD_BUILDDIR:-$srcdir/build}/venv
python=$venv/bin/python
if ! "$srcdir/scripts/install-venv" "$venv" > "$venv.out" 2>&1 || [ ! -x "$python" ]; then
  echo "not ok 1 - scripts/install-venv makes $venv from tests/interop/requirements.txt"
  sed 's/^/# /' "$venv.out"
  echo "1..1"
  exit 1
fi
