#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the differential test (differential.py) with the python3 that
# configure found (Debian's, which has python3-protobuf and python3-yaml).
exec "${PYTHON3:-/usr/bin/python3}" "${XDSD_SRCDIR:-.}/tests/schema/differential.py" "$@"
