#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop in a staged rollout (`rollout:`): gRPC C-core 1.85 (PyPI's grpcio, in the tests' venv) as a canary
# gets a change first, a second client that is no canary only after the
# bake.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client pypi --rollout
