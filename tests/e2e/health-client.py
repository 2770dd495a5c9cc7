#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A gRPC health (grpc.health.v1.Health) client on gRPC's Python bindings, for tests.

  health-client.py TARGET check [SERVICE]
      one Check; prints {"code": "OK", "details": "", "status": "SERVING"}
      ("status" null when the call failed)
  health-client.py TARGET watch [SERVICE]
      one Watch; prints {"status": "..."} as each response comes (one
      line each, flushed), then {"code": ..., "details": ...} when the
      call ends (stdin closed or --deadline: the client cancels it)

The messages are those of grpc's health.proto as the build staged it,
read from its descriptor set (--descriptor, default
$XDSD_BUILDDIR/proto/health-api.pb). --raw HEX sends those bytes as the
request instead. Exit status 0 whenever the call ran, whatever its
status: the caller judges; 2 for a usage or environment problem.
"""
import argparse
import json
import os
import sys
import threading

SERVICE = "/grpc.health.v1.Health/"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target")
    ap.add_argument("method", choices=("check", "watch"))
    ap.add_argument("service", nargs="?", default="")
    ap.add_argument("--descriptor", default=os.path.join(
        os.environ.get("XDSD_BUILDDIR", "."), "proto", "health-api.pb"))
    ap.add_argument("--raw", help="hex bytes to send as the request")
    ap.add_argument("--tls", nargs=3, metavar=("CA", "CERT", "KEY"),
                    help="TLS; CERT and KEY may be '-' for none")
    ap.add_argument("--deadline", type=float, default=10)
    args = ap.parse_args()

    import grpc
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from xds_schema import Schema

    schema = Schema(args.descriptor)
    req_cls = schema.cls("grpc.health.v1.HealthCheckRequest")
    resp_cls = schema.cls("grpc.health.v1.HealthCheckResponse")
    names = resp_cls.DESCRIPTOR.enum_types_by_name["ServingStatus"].values_by_number

    def status_name(raw):
        st = resp_cls.FromString(raw).status
        return names[st].name if st in names else str(st)

    request = bytes.fromhex(args.raw) if args.raw is not None else \
        req_cls(service=args.service).SerializeToString()
    if args.tls:
        ca, cert, key = (None if p == "-" else open(p, "rb").read() for p in args.tls)
        channel = grpc.secure_channel(
            args.target, grpc.ssl_channel_credentials(ca, key, cert),
            options=[("grpc.ssl_target_name_override", "localhost")])
    else:
        channel = grpc.insecure_channel(args.target)

    out = {"code": "OK", "details": ""}
    try:
        if args.method == "check":
            out["status"] = None
            raw = channel.unary_unary(SERVICE + "Check")(request, timeout=args.deadline)
            out["status"] = status_name(raw)
        else:
            call = channel.unary_stream(SERVICE + "Watch")(request, timeout=args.deadline)
            # closing stdin is how the caller ends the watch
            threading.Thread(target=lambda: (sys.stdin.read(), call.cancel()),
                             daemon=True).start()
            for raw in call:
                sys.stdout.write(json.dumps({"status": status_name(raw)}) + "\n")
                sys.stdout.flush()
    except grpc.RpcError as e:
        out["code"] = e.code().name
        out["details"] = e.details() or ""
    channel.close()
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
