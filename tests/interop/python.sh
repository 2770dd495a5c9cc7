#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: gRPC C-core's xDS client (Debian's python3-grpcio) gets its
# listener, route, clusters and endpoints from xdsd and follows snapshot
# changes without a failed RPC. See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client python
