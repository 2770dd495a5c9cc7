#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop with per-resource errors (docs/protocol.md rules N1, N2): gRPC
# C-core 1.85 (PyPI's grpcio, in the tests' venv) with
# GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING=true fails its calls to a
# listener xdsd lacks, or withholds from it, at once with xdsd's
# message; without it the call waits for gRPC's own timer; a listener a
# reload adds is followed.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client pypi --errors
