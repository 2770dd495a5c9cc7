#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A tiny gRPC backend for the xdsd walkthrough.

    ./backend.py PORT NAME

Answers /demo.Hello/Who with NAME, so you can see which backend a
request reached. PORT 0 takes any free port, printed at start.
"""
import sys
import time
from concurrent import futures

import grpc


def main():
    port, name = sys.argv[1], sys.argv[2].encode()
    handler = grpc.method_handlers_generic_handler("demo.Hello", {
        "Who": grpc.unary_unary_rpc_method_handler(
            lambda request, context: name,
            request_deserializer=lambda b: b,
            response_serializer=lambda b: b),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    # port 0: any free port; the line below says which
    bound = server.add_insecure_port("127.0.0.1:" + port)
    server.start()
    print(f"backend {name.decode()} on 127.0.0.1:{bound}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop(0)


if __name__ == "__main__":
    main()
