#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A gRPC client that finds its backends through xdsd.

    GRPC_XDS_BOOTSTRAP=bootstrap.json ./client.py xds:///demo [COUNT]

Calls /demo.Hello/Who once a second (COUNT times, or forever) and prints
which backend answered. gRPC's xDS resolver asks xdsd for the listener
"demo", its route configuration, cluster and endpoints.
"""
import sys
import time

import grpc


def main():
    target = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    channel = grpc.insecure_channel(target)
    who = channel.unary_unary("/demo.Hello/Who",
                              request_serializer=lambda b: b,
                              response_deserializer=lambda b: b)
    n = 0
    while count == 0 or n < count:
        n += 1
        try:
            print("answered by", who(b"", timeout=10).decode(), flush=True)
        except grpc.RpcError as e:
            print("failed:", e.code().name, e.details(), flush=True)
        time.sleep(1)


if __name__ == "__main__":
    main()
