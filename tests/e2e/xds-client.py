#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An aggregated xDS client on gRPC's Python bindings, for tests.

Opens one ADS stream (StreamAggregatedResources, or with --delta
DeltaAggregatedResources), sends a node announcing --feature client
features, subscribes to --sub TYPE=NAME[,NAME...] (TYPE: a short name
such as cds, eds, lds, rds, or a type URL), ACKs every response, and
after --seconds prints what it received, one JSON object a line:

  {"t": seconds since the first response, "version": ..., "nonce": ...,
   "type_url": ..., "removed": [...],
   "resources": [{"name", "version", "ttl", "body", "wrapped"}, ...]}

"ttl" is the Resource's TTL in proto3 JSON ("2s") or null; "body"
whether the resource itself was sent (a heartbeat has none); "wrapped"
whether a SotW resource came in a Resource. Messages are read with the
descriptors of the build's xds-api.pb. With --responses N it stops
once N responses came, --seconds then being only how long it waits for
them at most (a deadline against hanging, not a measure). Exit status
0 when the stream lasted the whole time (or until the N responses), 1
when it ended early (its status on stderr), 2 for a usage or
environment problem.

  xds-client.py 127.0.0.1:18000 --delta --feature xds.config.supports-resource-ttl \\
      --sub cds=a,b --seconds 3
"""
import argparse
import json
import os
import queue
import sys
import threading
import time

TYPES = {
    "cds": "envoy.config.cluster.v3.Cluster",
    "eds": "envoy.config.endpoint.v3.ClusterLoadAssignment",
    "lds": "envoy.config.listener.v3.Listener",
    "rds": "envoy.config.route.v3.RouteConfiguration",
    "srds": "envoy.config.route.v3.ScopedRouteConfiguration",
    "vhds": "envoy.config.route.v3.VirtualHost",
    "sds": "envoy.extensions.transport_sockets.tls.v3.Secret",
    "rtds": "envoy.service.runtime.v3.Runtime",
}
PREFIX = "type.googleapis.com/"
RESOURCE = PREFIX + "envoy.service.discovery.v3.Resource"
SERVICE = "/envoy.service.discovery.v3.AggregatedDiscoveryService/"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target")
    ap.add_argument("--schema", default=os.environ.get("XDSD_SCHEMA"))
    ap.add_argument("--delta", action="store_true")
    ap.add_argument("--feature", action="append", default=[])
    ap.add_argument("--node", default="python-node")
    ap.add_argument("--cluster", default="test")
    ap.add_argument("--sub", action="append", default=[],
                    help="TYPE=NAME[,NAME...]; TYPE= alone: a wildcard")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--responses", type=int, default=0,
                    help="stop once this many responses came (0: run for --seconds)")
    args = ap.parse_args()
    if not args.schema or not args.sub:
        ap.print_usage(sys.stderr)
        return 2

    import grpc
    from google.protobuf import json_format
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from xds_schema import Schema

    message = Schema(args.schema).message

    def duration(d):
        return json_format.MessageToJson(d).strip('"') if d.ByteSize() else None

    kind = "Delta" if args.delta else ""
    req_name = "envoy.service.discovery.v3.%sDiscoveryRequest" % kind
    resp_name = "envoy.service.discovery.v3.%sDiscoveryResponse" % kind

    subs = []
    for s in args.sub:
        t, _, names = s.partition("=")
        url = t if t.startswith(PREFIX) else PREFIX + TYPES[t]
        subs.append((url, [n for n in names.split(",") if n]))

    outbox = queue.Queue()
    first = True
    for url, names in subs:
        r = message(req_name)
        r.type_url = url
        if first:
            r.node.id = args.node
            r.node.cluster = args.cluster
            r.node.client_features.extend(args.feature)
            first = False
        if args.delta:
            r.resource_names_subscribe.extend(names)
        else:
            r.resource_names.extend(names)
        outbox.put(r.SerializeToString())
    wanted = dict(subs)

    def requests():
        while True:
            item = outbox.get()
            if item is None:
                return
            yield item

    channel = grpc.insecure_channel(args.target)
    method = "DeltaAggregatedResources" if args.delta else \
        "StreamAggregatedResources"
    call = channel.stream_stream(SERVICE + method)(requests())
    lines, start, ended = [], None, None
    deadline = time.monotonic() + args.seconds
    done = threading.Event()  # stopped here: the stream did not end

    def stop():
        done.set()
        outbox.put(None)
        call.cancel()

    timer = threading.Timer(args.seconds, stop)
    timer.start()
    try:
        for raw in call:
            now = time.monotonic()
            if start is None:
                start = now
            m = message(resp_name)
            m.ParseFromString(raw)
            line = {"t": round(now - start, 3), "nonce": m.nonce,
                    "type_url": m.type_url, "resources": []}
            if args.delta:
                line["version"] = m.system_version_info
                line["removed"] = list(m.removed_resources)
                for res in m.resources:
                    line["resources"].append({
                        "name": res.name, "version": res.version,
                        "ttl": duration(res.ttl),
                        "body": res.HasField("resource"), "wrapped": False})
            else:
                line["version"] = m.version_info
                line["removed"] = []
                for a in m.resources:
                    if a.type_url == RESOURCE:
                        res = message("envoy.service.discovery.v3.Resource")
                        res.ParseFromString(a.value)
                        line["resources"].append({
                            "name": res.name, "version": res.version,
                            "ttl": duration(res.ttl),
                            "body": res.HasField("resource"),
                            "wrapped": True})
                    else:
                        line["resources"].append({
                            "name": None, "version": None, "ttl": None,
                            "body": True, "wrapped": False})
            lines.append(line)
            # the ACK
            ack = message(req_name)
            ack.type_url = m.type_url
            ack.response_nonce = m.nonce
            if not args.delta:
                ack.version_info = m.version_info
                ack.resource_names.extend(wanted.get(m.type_url, []))
            outbox.put(ack.SerializeToString())
            if args.responses and len(lines) >= args.responses:
                stop()
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.CANCELLED or not done.is_set():
            ended = "%s: %s" % (e.code().name, e.details())
    timer.cancel()
    channel.close()
    for line in lines:
        json.dump(line, sys.stdout, sort_keys=True)
        sys.stdout.write("\n")
    if ended:
        sys.stderr.write("xds-client: the stream ended: %s\n" % ended)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
