#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: grpc-go 1.85 (tests/interop/go) follows snapshot changes through xds:/// without a
# failed RPC, as python.sh shows for Debian's gRPC (the driver and the
# backends run on Debian's python3-grpcio).
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client go
