#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop in a staged rollout (`rollout:`): grpc-java 1.85.1 (tests/interop/java) as a canary
# gets a change first, a second client that is no canary only after the
# bake.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client java --rollout
