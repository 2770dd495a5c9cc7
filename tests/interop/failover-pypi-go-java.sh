#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Failover with today's gRPC xDS clients: gRPC C-core 1.85 (PyPI's
# grpcio), grpc-go 1.85 and grpc-java 1.85.1 behind haproxy outlive the
# xdsd replica they are on, as failover.sh shows for Debian's gRPC and
# grpc-js-xds. See tests/interop/README.md, "Failover".
exec sh "$(dirname "$0")/failover.sh" --clients pypi,go,java
