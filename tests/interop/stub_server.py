#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for xdsd that checks the interop harness itself.

Not xdsd and not part of `make check`: a minimal SotW ADS server (python
grpcio + python3-protobuf with xdsd's own descriptor set) that serves the
snapshot the harness writes, so that the harness's passing path can be
run before, or independently of, xdsd's engine:

  XDSD=$srcdir/tests/interop/stub_server.py tests/interop/python.sh

It takes the same `-c xdsd.yaml` (listen, snapshots, schema, log_level),
logs the lines the harness reads in xdsd's form ("listening on ... (port
N)", "stream N: ADS from PEER", NACKs as "warn: stream N (ADS from PEER)
node 'ID': NACK of TYPE version V: MESSAGE"), reloads
<snapshots>/default.yaml on SIGHUP and exits 0 on SIGTERM.

Make-before-break is done the simple way: a resource a client still
subscribes to is never reported deleted; the last copy sent stays in the
responses until the client stops asking for it.

XDSD_STUB_FAULT makes it misbehave, to see each of the harness's checks
fail: "frozen" (SIGHUP reloads nothing), "strict" (resources are deleted
as soon as the snapshot drops them, clusters pushed before routes: break
before make), "nack" (endpoint updates carry the wrong type, so clients
reject them), "error" (logs an error line), "exit1" (exit status 1).
"""
import argparse
import os
import queue
import signal
import sys
import threading
import time
from concurrent import futures

import grpc
import yaml
from google.protobuf import json_format

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from xds_schema import Schema  # noqa: E402 (after the path it needs)

TYPES = {   # snapshot key -> (message, name field)
    "listeners": ("envoy.config.listener.v3.Listener", "name"),
    "routes": ("envoy.config.route.v3.RouteConfiguration", "name"),
    "clusters": ("envoy.config.cluster.v3.Cluster", "name"),
    "endpoints": ("envoy.config.endpoint.v3.ClusterLoadAssignment", "cluster_name"),
}
URL = "type.googleapis.com/"
PUSH_ORDER = [URL + TYPES[k][0] for k in ("clusters", "endpoints", "listeners", "routes")]
WILDCARD_TYPES = {URL + TYPES["listeners"][0], URL + TYPES["clusters"][0]}
FAULT = os.environ.get("XDSD_STUB_FAULT", "")
LEVELS = {"error": 0, "warn": 1, "info": 2, "debug": 3}
log_level = 2
log_lock = threading.Lock()


def log(level, msg):
    if LEVELS[level] > log_level:
        return
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".%03dZ" % (now % 1 * 1000)
    with log_lock:
        sys.stderr.write("%s %s: %s\n" % (stamp, level, msg))
        sys.stderr.flush()


class Snapshot:
    """type URL -> {resource name: serialized Any}"""

    def __init__(self, schema, path, version):
        with open(path) as f:
            doc = yaml.safe_load(f) or {}
        any_cls = schema.cls("google.protobuf.Any")
        self.version = str(version)
        self.by_type = {}
        for key, (msg_name, name_field) in TYPES.items():
            cls = schema.cls(msg_name)
            table = self.by_type.setdefault(URL + msg_name, {})
            for item in doc.get(key) or []:
                msg = json_format.ParseDict(item, cls(), descriptor_pool=schema.pool)
                packed = any_cls()
                packed.Pack(msg)
                table[getattr(msg, name_field)] = packed.SerializeToString()


class Stream:
    def __init__(self, server, sid, peer):
        self.server = server
        self.id = sid
        self.peer = peer
        self.node = "?"
        self.out = queue.Queue()
        self.lock = threading.Lock()
        self.subs = {}      # type URL -> set of names (None: wildcard)
        self.sent = {}      # type URL -> {name: serialized Any}
        self.nonce = {}     # type URL -> last nonce sent
        self.n = 0

    def wanted(self, type_url):
        snap = self.server.snapshot.by_type.get(type_url, {})
        names = self.subs.get(type_url)
        if names is None:
            return dict(snap)
        have = self.sent.get(type_url, {})
        got = {}
        for name in names:
            if name in snap:
                got[name] = snap[name]
            elif name in have and FAULT != "strict":   # still asked for: keep it
                got[name] = have[name]
        return got

    def respond(self, type_url, resources):
        self.n += 1
        resp = self.server.response_cls(version_info=self.server.snapshot.version,
                                        type_url=type_url, nonce=str(self.n))
        for blob in resources.values():
            res = resp.resources.add()
            res.MergeFromString(blob)
            if FAULT == "nack" and self.server.version > 1 and type_url in PUSH_ORDER[1:2]:
                res.type_url = PUSH_ORDER[0]
        self.sent[type_url] = resources
        self.nonce[type_url] = str(self.n)
        log("debug", "stream %d: sending %s version %s, %d resources"
            % (self.id, type_url[len(URL):], resp.version_info, len(resources)))
        self.out.put(resp)

    def on_request(self, req):
        with self.lock:
            if req.HasField("node") and req.node.id:
                self.node = req.node.id
            t = req.type_url
            log("debug", "stream %d: request %s [%s] nonce '%s'"
                % (self.id, t[len(URL):], ", ".join(req.resource_names), req.response_nonce))
            if req.HasField("error_detail"):
                log("warn", "stream %d (ADS from %s) node '%s': NACK of %s version %s: %s"
                    % (self.id, self.peer, self.node, t, req.version_info,
                       req.error_detail.message))
            names = set(req.resource_names)
            if not names and t in WILDCARD_TYPES:
                names = None
            changed = t not in self.subs or self.subs[t] != names
            self.subs[t] = names
            answered = req.response_nonce and req.response_nonce == self.nonce.get(t)
            if changed or not answered:
                self.respond(t, self.wanted(t))

    def on_reload(self):
        with self.lock:
            for t in PUSH_ORDER:
                if t in self.subs:
                    want = self.wanted(t)
                    if want != self.sent.get(t):
                        self.respond(t, want)


class Server:
    def __init__(self, schema, snapdir):
        self.schema = schema
        self.snapdir = snapdir
        self.response_cls = schema.cls("envoy.service.discovery.v3.DiscoveryResponse")
        self.request_cls = schema.cls("envoy.service.discovery.v3.DiscoveryRequest")
        self.version = 0
        self.snapshot = None
        self.streams = {}
        self.lock = threading.Lock()
        self.next_id = 0
        self.load()

    def load(self):
        self.version += 1
        self.snapshot = Snapshot(self.schema, os.path.join(self.snapdir, "default.yaml"),
                                 self.version)
        log("info", "snapshot version %d: %s" % (self.version, ", ".join(
            "%d %s" % (len(v), k[len(URL):]) for k, v in self.snapshot.by_type.items())))

    def reload(self):
        try:
            self.load()
        except Exception as e:      # keep serving the old one
            log("error", "reload failed: %s" % e)
            return
        with self.lock:
            streams = list(self.streams.values())
        for s in streams:
            s.on_reload()

    def ads(self, requests, context):
        with self.lock:
            self.next_id += 1
            s = Stream(self, self.next_id, context.peer())
            self.streams[s.id] = s
        log("debug", "stream %d: ADS from %s" % (s.id, s.peer))

        def read():
            try:
                for req in requests:
                    s.on_request(req)
            except Exception:
                pass
            s.out.put(None)
        threading.Thread(target=read, daemon=True).start()
        try:
            while True:
                resp = s.out.get()
                if resp is None:
                    break
                yield resp
        finally:
            with self.lock:
                self.streams.pop(s.id, None)
            log("debug", "stream %d: closed" % s.id)


def main():
    global log_level
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-c", "--config", required=True)
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.config))
    with open(args.config) as f:
        cfg = yaml.safe_load(f) or {}
    log_level = LEVELS[cfg.get("log_level", "info")]
    listen = cfg.get("listen", "127.0.0.1:18000")
    snapdir = os.path.join(base, cfg.get("snapshots", "snapshots"))
    schema_path = cfg.get("schema") or os.environ.get("XDSD_SCHEMA")
    if not schema_path:
        log("error", "no schema: set 'schema:' or XDSD_SCHEMA")
        return 1
    log("info", "configuration %s (stub server)" % args.config)
    server = Server(Schema(os.path.join(base, schema_path)), snapdir)

    wake = threading.Event()
    flags = set()

    def on_signal(signum, _):
        flags.add(signum)
        wake.set()
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)

    grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    grpc_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "envoy.service.discovery.v3.AggregatedDiscoveryService", {
            "StreamAggregatedResources": grpc.stream_stream_rpc_method_handler(
                server.ads, request_deserializer=server.request_cls.FromString,
                response_serializer=lambda m: m.SerializeToString())}),))
    port = grpc_server.add_insecure_port(listen)
    grpc_server.start()
    log("info", "xdsd stub listening on %s (port %d)" % (listen, port))
    while True:
        wake.wait()
        wake.clear()
        if signal.SIGTERM in flags or signal.SIGINT in flags:
            break
        if signal.SIGHUP in flags:
            flags.discard(signal.SIGHUP)
            log("info", "SIGHUP: reload requested")
            if FAULT == "error":
                log("error", "a fault for the harness to find")
            if FAULT != "frozen":
                server.reload()
    log("info", "shutting down")
    with server.lock:
        for s in server.streams.values():
            s.out.put(None)
    grpc_server.stop(1).wait()
    log("info", "stopped")
    return 1 if FAULT == "exit1" else 0


if __name__ == "__main__":
    sys.exit(main())
