#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop with xdstp:// names (rule X1): gRPC C-core's xDS client
# (Debian's python3-grpcio) with federation on, every resource named by
# an xdstp:// name, runs the python.sh scenario. See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client python --xdstp
