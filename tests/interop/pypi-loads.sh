#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop with the load reporting service (docs/protocol.md rules M1,
# M2): gRPC C-core 1.85 (PyPI's grpcio, in the tests' venv), its cluster
# naming xdsd as its LRS server (lrs_server: self), reports the RPCs it
# makes, and xdsd counts them per cluster, locality and node.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client pypi --loads
