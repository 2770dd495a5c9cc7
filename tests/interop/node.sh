#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: @grpc/grpc-js-xds (installed with npm ci from the committed
# lock file into the build tree) gets its listener, route, clusters and
# endpoints from xdsd and follows snapshot changes without a failed RPC.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client node
