#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop: a staged rollout (`rollout:`) with gRPC C-core's xDS client
# (Debian's python3-grpcio): a canary client gets a change first, a
# client that is no canary only once the canary ACKed and the bake
# passed. See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client python --rollout
