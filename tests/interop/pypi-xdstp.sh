#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop with xdstp:// names (rule X1): gRPC C-core 1.85 (PyPI's grpcio, in the tests' venv)
# with federation (authorities in its bootstrap), every resource named by
# an xdstp:// name, runs the pypi.sh scenario.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client pypi --xdstp
