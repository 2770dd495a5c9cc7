#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop in a staged rollout (`rollout:`): grpc-go 1.85 (tests/interop/go) as a canary
# gets a change first, a second client that is no canary only after the
# bake.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client go --rollout
