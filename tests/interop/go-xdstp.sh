#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Interop with xdstp:// names (rule X1): grpc-go 1.85 (tests/interop/go)
# with federation (authorities in its bootstrap), every resource named by
# an xdstp:// name, runs the go.sh scenario.
# See tests/interop/README.md.
. "$(dirname "$0")/debian-python.sh"
"$python" "$srcdir/tests/interop/interop.py" --client go --xdstp
