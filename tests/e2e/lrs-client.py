#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A load reporting (LRS) client on gRPC's Python bindings, for tests.

Opens StreamLoadStats, sends a first LoadStatsRequest naming the node
(--node, proto3 JSON of a Node), waits for the server's answer, then
sends each --report (proto3 JSON of a LoadStatsRequest, usually only
its cluster_stats) in turn, --gap seconds apart, holds the stream open
--hold seconds more and half-closes it. Prints one JSON document:

  {"code": "OK", "details": "", "responses": [{...}]}

each response as proto3 JSON with the .proto's field names, read with
the descriptors of the build's xds-api.pb. --raw HEX sends those bytes
as the first request instead. Exit status 0 whenever the call ran,
whatever its status: the caller judges; 2 for a usage problem.

  lrs-client.py 127.0.0.1:18000 --node '{"id": "n1"}' \\
    --report '{"cluster_stats": [{"cluster_name": "web", ...}]}'
"""
import argparse
import json
import os
import queue
import sys
import threading

METHOD = "/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target")
    ap.add_argument("--schema", default=os.environ.get("XDSD_SCHEMA"))
    ap.add_argument("--node", default='{"id": "lrs-test"}')
    ap.add_argument("--report", action="append", default=[])
    ap.add_argument("--raw", help="hex bytes to send as the first request")
    ap.add_argument("--gap", type=float, default=0.0)
    ap.add_argument("--hold", type=float, default=0.0)
    ap.add_argument("--tls", nargs=3, metavar=("CA", "CERT", "KEY"))
    ap.add_argument("--deadline", type=float, default=30)
    args = ap.parse_args()
    if not args.schema:
        sys.stderr.write("lrs-client.py: no --schema and no $XDSD_SCHEMA\n")
        return 2

    import grpc
    from google.protobuf import json_format
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from xds_schema import Schema

    schema = Schema(args.schema)
    pool, message = schema.pool, schema.message

    def request(text):
        m = message("envoy.service.load_stats.v3.LoadStatsRequest")
        json_format.Parse(text, m, descriptor_pool=pool)
        return m.SerializeToString()

    if args.raw is not None:
        first = bytes.fromhex(args.raw)
    else:
        first = request(json.dumps({"node": json.loads(args.node)}))
    reports = [request(r) for r in args.report]

    answered = threading.Event()
    done = threading.Event()

    def requests():
        yield first
        # the reports go once the server answered, as clients do
        if not answered.wait(args.deadline):
            return
        for i, r in enumerate(reports):
            if i > 0 and done.wait(args.gap):
                return
            yield r
        done.wait(args.hold)

    if args.tls:
        ca, cert, key = (None if p == "-" else open(p, "rb").read()
                         for p in args.tls)
        channel = grpc.secure_channel(
            args.target, grpc.ssl_channel_credentials(ca, key, cert),
            options=[("grpc.ssl_target_name_override", "localhost")])
    else:
        channel = grpc.insecure_channel(args.target)
    out = {"code": "OK", "details": "", "responses": []}
    got = queue.Queue()
    try:
        call = channel.stream_stream(METHOD)
        for r in call(requests(), timeout=args.deadline):
            got.put(r)
            answered.set()
    except grpc.RpcError as e:
        out["code"] = e.code().name
        out["details"] = e.details() or ""
    done.set()
    channel.close()
    while not got.empty():
        m = message("envoy.service.load_stats.v3.LoadStatsResponse")
        m.ParseFromString(got.get())
        out["responses"].append(json_format.MessageToDict(
            m, preserving_proto_field_name=True, descriptor_pool=pool))
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
