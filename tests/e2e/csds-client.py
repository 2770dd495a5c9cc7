#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A client status (CSDS) client on gRPC's Python bindings, for tests.

Calls FetchClientStatus once, or StreamClientStatus with --stream N
requests on one stream, and prints one JSON document on stdout:

  {"code": "OK", "details": "", "responses": [ {...}, ... ]}

each response as proto3 JSON with the field names of the .proto
(resources inside Any included), read with the descriptors of the
build's xds-api.pb; with --sizes, only each response's size in bytes
("sizes": [...]), undecoded (a benchmark's huge answers). The request
is --request (proto3 JSON of a
ClientStatusRequest, default {}; --node-bytes N adds a node id of N
bytes) or --raw (hex bytes, sent as they are).
Exit status 0 whenever the call ran, whatever its status: the caller
judges; 2 for a usage or environment problem.

  csds-client.py 127.0.0.1:18000 --request '{"node_matchers": [...]}'
"""
import argparse
import json
import os
import sys

SERVICE = "/envoy.service.status.v3.ClientStatusDiscoveryService/"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target")
    ap.add_argument("--schema", default=os.environ.get("XDSD_SCHEMA"))
    ap.add_argument("--request", default="{}")
    ap.add_argument("--raw", help="hex bytes to send instead")
    ap.add_argument("--node-bytes", type=int, default=0,
                    help="a request whose node id is this long")
    ap.add_argument("--stream", type=int, default=0,
                    help="StreamClientStatus with this many requests")
    ap.add_argument("--tls", nargs=3, metavar=("CA", "CERT", "KEY"),
                    help="mTLS; CERT and KEY may be '-' for none")
    ap.add_argument("--deadline", type=float, default=10)
    ap.add_argument("--max-message", type=int, default=0,
                    help="take answers up to this many bytes (gRPC's 4 MiB)")
    ap.add_argument("--sizes", action="store_true",
                    help="print each response's size, not the response")
    args = ap.parse_args()

    import grpc
    from google.protobuf import json_format
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from xds_schema import Schema

    schema = Schema(args.schema)
    pool, message = schema.pool, schema.message

    if args.raw is not None:
        request = bytes.fromhex(args.raw)
    else:
        req = message("envoy.service.status.v3.ClientStatusRequest")
        json_format.Parse(args.request, req, descriptor_pool=pool)
        req.node.id = "n" * args.node_bytes
        request = req.SerializeToString()

    if args.tls:
        ca, cert, key = (None if p == "-" else open(p, "rb").read()
                         for p in args.tls)
        creds = grpc.ssl_channel_credentials(ca, key, cert)
    options = []
    if args.max_message:
        options.append(("grpc.max_receive_message_length", args.max_message))
    if args.tls:
        channel = grpc.secure_channel(
            args.target, creds,
            options=options + [("grpc.ssl_target_name_override", "localhost")])
    else:
        channel = grpc.insecure_channel(args.target, options=options)

    raw = []
    out = {"code": "OK", "details": ""}
    try:
        if args.stream > 0:
            call = channel.stream_stream(SERVICE + "StreamClientStatus")
            for r in call(iter([request] * args.stream),
                          timeout=args.deadline):
                raw.append(r)
        else:
            call = channel.unary_unary(SERVICE + "FetchClientStatus")
            raw.append(call(request, timeout=args.deadline))
    except grpc.RpcError as e:
        out["code"] = e.code().name
        out["details"] = e.details() or ""
    channel.close()

    if args.sizes:
        out["sizes"] = [len(r) for r in raw]
        raw = []
    out["responses"] = []
    for r in raw:
        m = message("envoy.service.status.v3.ClientStatusResponse")
        m.ParseFromString(r)
        out["responses"].append(json_format.MessageToDict(
            m, preserving_proto_field_name=True, descriptor_pool=pool))
        # what the tests look for in the bytes themselves
        out.setdefault("raw_hex", []).append(r.hex())
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
