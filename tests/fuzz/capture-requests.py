#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Captures the requests real xDS clients send, as seeds for fuzz_request.

    tests/fuzz/capture-requests.py --xdsd build/src/xdsd \\
        --schema build/proto/xds-api.pb --client python|node \\
        [--node-modules DIR] OUTDIR

Runs xdsd on loopback with the walkthrough's snapshot (listener, route,
cluster and endpoints all named "demo", as the fuzzer's first snapshot
is), and between it and the client a proxy that forwards every stream
both ways and records each request's bytes. The client (tests/interop's
client.py on Debian's python3-grpcio, or client.js on grpc-js-xds)
resolves xds:///demo and calls a backend; once it is answered, the
snapshot changes its cluster, listener and route (as the fuzzer's
second snapshot does) and xdsd is sent SIGHUP; the client's ACKs follow.

Each stream becomes OUTDIR/<client>-<n> in fuzz_request's input format
(a method byte, then requests, with a RELOAD operation where the
snapshot changed): xdsd numbers nonces from 1 per stream as the fuzzer
does, so a stream replays as it went. Needs Debian's python3-grpcio.
"""
import argparse
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(os.path.dirname(HERE))
ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService/"
METHODS = {  # method -> fuzz_request's method byte (bit 0 delta, bit 1 ADS)
    ADS + "StreamAggregatedResources": 2,
    ADS + "DeltaAggregatedResources": 3,
}
OP_REQUEST, OP_RELOAD = 0, 1

for v in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
          "grpc_proxy", "all_proxy", "ALL_PROXY"):
    os.environ.pop(v, None)


class Recorder:
    """Every stream's operations, in arrival order."""

    def __init__(self):
        self.lock = threading.Lock()
        self.streams = []   # (method, [ops])

    def open(self, method):
        with self.lock:
            ops = []
            self.streams.append((method, ops))
            return ops

    def request(self, ops, data):
        with self.lock:
            ops.append(bytes([OP_REQUEST]) + len(data).to_bytes(2, "little") + data)

    def reload(self, snapshot):
        with self.lock:
            for _, ops in self.streams:
                ops.append(bytes([OP_RELOAD, snapshot]))


class Proxy(grpc.GenericRpcHandler):
    """Forwards every xDS stream to xdsd, recording the requests."""

    def __init__(self, upstream, recorder):
        self.channel = grpc.insecure_channel(upstream)
        self.recorder = recorder

    def service(self, details):
        method = details.method
        if method not in METHODS:
            return None

        def handle(requests, context):
            ops = self.recorder.open(method)

            def forward():
                for data in requests:
                    if len(data) > 0xffff:
                        sys.exit("capture-requests: a request over 64 KiB")
                    self.recorder.request(ops, data)
                    yield data
            call = self.channel.stream_stream(method)(forward())
            context.add_callback(call.cancel)
            yield from call
        return grpc.stream_stream_rpc_method_handler(handle)


def snapshot(port, changed):
    """The walkthrough's snapshot, its endpoint at `port`; `changed`
    changes the cluster, the listener and the route, not the endpoints."""
    with open(os.path.join(SRCDIR, "examples", "walkthrough", "default.yaml")) as f:
        text = f.read().replace("port_value: 50051", "port_value: %d" % port)
    if changed:
        text = text.replace("lb_policy: ROUND_ROBIN",
                            "lb_policy: ROUND_ROBIN\n  connect_timeout: 2s")
        text = text.replace("      rds:\n", "      stat_prefix: demo\n      rds:\n")
        text = text.replace("route: {cluster: demo}",
                            "route: {cluster: demo, timeout: 5s}")
    return text


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--xdsd", required=True)
    ap.add_argument("--schema")
    ap.add_argument("--client", choices=("python", "node"), default="python")
    ap.add_argument("--node-modules")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="xdsd-capture-")
    procs = []
    try:
        # The backend: answers the interop clients' calls.
        backend = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        backend.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            "xdsd.test.Echo", {"Who": grpc.unary_unary_rpc_method_handler(
                lambda req, ctx: b"A")}),))
        backend_port = backend.add_insecure_port("127.0.0.1:0")
        backend.start()

        os.makedirs(os.path.join(work, "snapshots"))
        write(os.path.join(work, "snapshots", "default.yaml"),
              snapshot(backend_port, False))
        with open(os.path.join(work, "xdsd.yaml"), "w") as f:
            f.write("listen: 127.0.0.1:0\nsnapshots: %s\n" % os.path.join(work, "snapshots"))
            if args.schema:
                f.write("schema: %s\n" % os.path.abspath(args.schema))
        log = open(os.path.join(work, "xdsd.log"), "w")
        xdsd = subprocess.Popen([args.xdsd, "-c", os.path.join(work, "xdsd.yaml")],
                                stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT)
        procs.append(xdsd)
        port = None
        for _ in range(100):
            with open(os.path.join(work, "xdsd.log")) as f:
                m = re.search(r"\(port (\d+)\)", f.read())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.1)
        if port is None:
            sys.exit("capture-requests: xdsd did not start; see " + work)

        recorder = Recorder()
        proxy = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        proxy.add_generic_rpc_handlers((Proxy("127.0.0.1:%d" % port, recorder),))
        proxy_port = proxy.add_insecure_port("127.0.0.1:0")
        proxy.start()

        with open(os.path.join(work, "bootstrap.json"), "w") as f:
            f.write('{"xds_servers": [{"server_uri": "127.0.0.1:%d", '
                    '"channel_creds": [{"type": "insecure"}], '
                    '"server_features": ["xds_v3"]}], '
                    '"node": {"id": "capture-%s", "cluster": "demo", '
                    '"locality": {"zone": "local"}}}' % (proxy_port, args.client))
        env = dict(os.environ)
        if args.client == "python":
            cmd = ["/usr/bin/python3", os.path.join(SRCDIR, "tests", "interop", "client.py")]
        else:
            cmd = ["node", os.path.join(SRCDIR, "tests", "interop", "node", "client.js")]
            if args.node_modules:
                env["NODE_PATH"] = os.path.abspath(args.node_modules)
        client = subprocess.Popen(cmd + ["--bootstrap", os.path.join(work, "bootstrap.json"),
                                         "--interval-ms", "100", "xds:///demo"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=env)
        procs.append(client)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(ln) for ln in client.stdout],
                         daemon=True).start()

        def answered(timeout):
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                try:
                    if re.search(rb'"ok": ?true', lines.get(timeout=0.5)):
                        return True
                except queue.Empty:
                    pass
            return False

        if not answered(20):
            sys.exit("capture-requests: the client was never answered; see " + work)
        time.sleep(1)
        write(os.path.join(work, "snapshots", "default.yaml"),
              snapshot(backend_port, True))
        recorder.reload(1)
        xdsd.send_signal(signal.SIGHUP)
        time.sleep(3)
        with open(os.path.join(work, "xdsd.log")) as f:
            if ": 1 changed" not in f.read():
                sys.exit("capture-requests: xdsd did not take the change; see " + work)
        if not answered(10):
            sys.exit("capture-requests: the client stopped being answered")
        client.stdin.close()
        client.wait(timeout=20)
        proxy.stop(1)
        backend.stop(0)

        n = 0
        for method, ops in recorder.streams:
            if not ops:
                continue
            n += 1
            path = os.path.join(args.outdir, "%s-%d" % (args.client, n))
            with open(path, "wb") as f:
                f.write(bytes([METHODS[method]]) + b"".join(ops))
            print("%s: %d operations, %d bytes" % (path, len(ops), os.path.getsize(path)))
        shutil.rmtree(work, ignore_errors=True)  # kept when anything failed
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


if __name__ == "__main__":
    main()
