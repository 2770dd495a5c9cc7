#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An xDS client built on gRPC C-core (Debian's python3-grpcio).

Opens a channel to an xds:/// target, so the channel's resolver and load
balancing come from the xDS management server named in the bootstrap
file, then calls /xdsd.test.Echo/Who and reports every result as one
JSON line on stdout:

  {"event": "start", "client": "python grpcio 1.51.1"}
  {"seq": 1, "ok": true, "who": "A", "ms": 3.1}
  {"seq": 2, "ok": false, "code": "UNAVAILABLE", "details": "...", "ms": 15003.2}
  {"event": "done", "rpcs": 2, "failed": 1}

It loops (one RPC, then --interval-ms of rest) until stdin reaches end of
file or SIGTERM arrives (an RPC then in flight is cancelled and not
reported), or makes --count RPCs and exits. The first RPC
may wait --first-deadline seconds (the xDS resources have to arrive);
later ones --deadline seconds. Exit status 0 once stopped as asked, even
when RPCs failed: the caller judges the results.

  GRPC_VERBOSITY=debug GRPC_TRACE=xds_client \\
    client.py --bootstrap bootstrap.json --count 1 xds:///interop.xdsd.test
"""
import argparse
import json
import os
import signal
import sys
import threading
import time

METHOD = "/xdsd.test.Echo/Who"


def emit(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target", help="e.g. xds:///interop.xdsd.test")
    ap.add_argument("--bootstrap", help="sets GRPC_XDS_BOOTSTRAP")
    ap.add_argument("--count", type=int, default=0,
                    help="make this many RPCs then exit (0: until stopped)")
    ap.add_argument("--interval-ms", type=float, default=20)
    ap.add_argument("--first-deadline", type=float, default=20)
    ap.add_argument("--deadline", type=float, default=5)
    args = ap.parse_args()

    # C-core reads the bootstrap when the first xds channel is created;
    # set it before grpc is even imported.
    if args.bootstrap:
        os.environ["GRPC_XDS_BOOTSTRAP"] = os.path.abspath(args.bootstrap)
    if not os.environ.get("GRPC_XDS_BOOTSTRAP"):
        sys.stderr.write("client.py: no bootstrap: pass --bootstrap or set "
                         "GRPC_XDS_BOOTSTRAP\n")
        return 2

    import grpc

    stop = threading.Event()
    wake = threading.Event()    # stop, or the RPC in flight completed

    def request_stop(*_):
        stop.set()
        wake.set()

    signal.signal(signal.SIGTERM, request_stop)
    if args.count == 0:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            request_stop()
        threading.Thread(target=watch_stdin, daemon=True).start()

    emit({"event": "start", "client": "python grpcio " + grpc.__version__,
          "target": args.target})
    channel = grpc.insecure_channel(args.target)
    # No serializers: request and response are raw bytes.
    who = channel.unary_unary(METHOD)
    seq = failed = 0
    while not stop.is_set() and (args.count == 0 or seq < args.count):
        wake.clear()
        if stop.is_set():
            break
        seq += 1
        deadline = args.first_deadline if seq == 1 else args.deadline
        t0 = time.monotonic()
        call = who.future(b"", timeout=deadline)
        call.add_done_callback(lambda _: wake.set())
        wake.wait()
        if not call.done():
            # Asked to stop mid-RPC: the run is over, the RPC is abandoned
            # and not reported.
            call.cancel()
            seq -= 1
            break
        ms = round((time.monotonic() - t0) * 1000, 1)
        try:
            reply = call.result()
            emit({"seq": seq, "ok": True,
                  "who": reply.decode("utf-8", "replace"), "ms": ms})
        except grpc.RpcError as e:
            failed += 1
            emit({"seq": seq, "ok": False, "code": e.code().name,
                  "details": e.details() or "", "ms": ms})
        stop.wait(args.interval_ms / 1000.0)
    channel.close()
    emit({"event": "done", "rpcs": seq, "failed": failed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
