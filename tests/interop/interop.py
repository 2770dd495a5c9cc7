#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Interop: a real xDS client, written by others, routes RPCs through xdsd.

One run, for one client (--client python: gRPC C-core through Debian's
python3-grpcio; --client node: @grpc/grpc-js-xds):

  1. two gRPC backends on loopback answer /xdsd.test.Echo/Who with "A"
     and "B";
  2. xdsd serves a snapshot with an API listener -> route configuration ->
     EDS cluster -> endpoints at A; the client opens xds:///<listener>
     and its RPCs must reach A;
  3. the snapshot moves the endpoints to B, SIGHUP: RPCs (one every
     20 ms) must move to B;
  4. the snapshot points the route at a new cluster C (endpoints at A)
     and drops the old cluster, SIGHUP: RPCs must move again;
  5. no RPC may fail during the whole run, the client must NACK nothing
     (xdsd logs every NACK), xdsd must log no error and exit 0 on SIGTERM.

With --rollout xdsd has a `rollout:` section whose canaries are the
nodes "*-canary-*" (bake ROLLOUT_BAKE seconds): the client is such a
canary, and a second client of the same kind is not. After the first
SIGHUP the canary's RPCs must move to B at once, the other client's
only once the canary ACKed and the bake passed, and xdsd must log the
promotion; the rest of the scenario is not run.

With --tls the same scenario runs over mutual TLS: xdsd gets the
certificates of tests/lib/make-certs.sh (tls.cert/key/client_ca) and an
`authorize:` rule that lets the identity spiffe://.../sa/frontend speak
for this client's node, and the client's xDS stream must carry that
identity. Neither client accepts TLS credentials in its bootstrap
(channel_creds "tls" came with "gRFC A65", after gRPC C-core 1.51 and
grpc-js-xds 1.14), so each gets its client certificate the one way its
version allows (tests/interop/README.md, "Over mutual TLS"): gRPC C-core
talks to a TLS sidecar on loopback that this driver runs, grpc-js-xds
gets grpc-js's own SSL credentials (client.js --xds-ca/--xds-cert/--xds-key).
Then a second client, with a certificate whose identity (sa/backend) no
rule allows, must get nothing: xdsd ends its stream with PERMISSION_DENIED
before sending anything, and logs it.

With --errors (tests/interop/README.md, "Per-resource errors") the
client, with gRPC's GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING=true,
asks for listeners that xdsd does not have or withholds, and its calls
must fail with xdsd's message (docs/protocol.md rules N1, N2), not
after gRPC's own does-not-exist timer as without the switch; then for
one that a reload adds, which its calls must reach.

With --loads the scenario's cluster names xdsd as its load reporting
server (lrs_server: self) and the client reports the RPCs it makes:
xdsd's /loads and /metrics must count them under the cluster, its
endpoints' locality and the client's node (docs/protocol.md rules M1,
M2), and never more than the client made.

Prints TAP. Needs XDSD (the binary) and XDSD_BUILDDIR (work files go to
$XDSD_BUILDDIR/tests/interop/<client>[-mtls].work and are kept for inspection);
XDSD_SCHEMA and XDSD_SRCDIR are used when set. Every process it starts
is stopped before it exits, on failure too.
"""
import argparse
import datetime
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time

LISTENER = "interop.xdsd.test"
TARGET = "xds:///" + LISTENER
ROUTE = "interop-route"
ROUTE_REF = ROUTE   # how the listener names it
CLUSTER_AB = "interop-cluster-ab"   # endpoints move from A to B
CLUSTER_C = "interop-cluster-c"     # the route moves here; endpoints at A
SERVICE, METHOD = "xdsd.test.Echo", "Who"

FIRST_DEADLINE = 18.0   # the client's first RPC may wait this long
REACH_TIMEOUT = 20.0    # ... and the driver waits this long for an answer
MOVE_TIMEOUT = 10.0     # SIGHUP to the first answer from the new backend
SETTLE = 1.0            # answers must stay on a backend this long
RPC_INTERVAL_MS = 20
STOP_TIMEOUT = 10       # the client exits this soon after its stdin closes
ADS_TIMEOUT = 30.0      # a started client's ADS stream reaches xdsd (a JVM
                        # on a loaded machine takes seconds)
OVERALL_TIMEOUT = 240   # after npm: the whole scenario, cleanup included

NODE_XDS_VERSION = "1.14.1"

# The clients under test (--client KIND), and how they differ:
#  what      what it is, for the TAP comment;
#  version   what its start line must name (a regular expression);
#  tls       how it presents its client certificate to xdsd (--tls):
#            "sidecar" (it cannot: a TLS sidecar of this driver's does),
#            "grpc-js" (grpc-js's own credentials in place of the
#            insecure ones, client.js --xds-ca ...), "bootstrap" (the
#            bootstrap's channel_creds "tls" with its config, "gRFC A65");
#  options   more options of its own (grpc-java's provider of the tls config);
#  wrapped   whether it announces wrapped SotW resources (rule L2);
#  asked     how its xDS trace shows a name it subscribed to: a format
#            for asked_pattern(), None when its trace names none (gRPC
#            C-core 1.85 logs the type, version and nonce of a request,
#            not its names);
#  sorts     whether it subscribes to an xdstp name taken from a
#            resource (the listener's route configuration) with its
#            context parameters sorted (--xdstp: ROUTE_REF).
CLIENTS = {
    "python": dict(what="gRPC C-core 1.51 via Debian's python3-grpcio",
                   version=r"^python grpcio 1\.51\.", tls="sidecar", options=[],
                   wrapped=True, asked='resource_names: "%s"', sorts=True),
    "node": dict(what="@grpc/grpc-js-xds %s" % NODE_XDS_VERSION,
                 version=r"^node grpc-js-xds %s " % re.escape(NODE_XDS_VERSION),
                 tls="grpc-js", options=[], wrapped=False, asked=None, sorts=True),
    "pypi": dict(what="gRPC C-core 1.85 via PyPI's grpcio (the tests' venv)",
                 version=r"^python grpcio 1\.85\.", tls="bootstrap", options=[],
                 wrapped=True, asked=None, sorts=True),
    "go": dict(what="grpc-go 1.85 (tests/interop/go)",
               version=r"^go grpc 1\.85\.", tls="bootstrap", options=[],
               wrapped=True, asked='Subscribing to resource "%s"', sorts=True),
    # grpc-java 1.85 ignores the config of channel_creds "tls": the
    # client's own provider reads it (tests/interop/java, --a65-tls).
    # It sorts the context parameters of the names it receives but not
    # of the route configuration name it takes from a listener, so it
    # waits for a name no server can send (tests/interop/README.md,
    # "What the clients taught").
    "java": dict(what="grpc-java 1.85.1 (tests/interop/java)",
                 version=r"^java grpc 1\.85\.1$", tls="bootstrap", options=["--a65-tls"],
                 wrapped=True, asked='"resourceNames": [%s', sorts=False),
}

# --rollout: canaries first, everyone else after the bake
ROLLOUT = False
ROLLOUT_BAKE = 3.0

# --xdstp: every resource named by an xdstp:// name (rule X1) under this
# authority, the client federating (gRPC's GRPC_EXPERIMENTAL_XDS_FEDERATION
# with "authorities" and a listener name template in its bootstrap).
AUTHORITY = "xdsd.test"
XDSTP = False
LISTENER_TEMPLATE = ("xdstp://" + AUTHORITY +
                     "/envoy.config.listener.v3.Listener/%s")


def xdstp_names(sorts=True):
    """Switches the scenario's names to xdstp:// ones. The listener's
    reference to its route configuration spells the parameters in
    another order than the route configuration's own name: xdsd must
    resolve it, and the client must find the canonical name it is sent.
    For a client that does not sort (`sorts` false) the reference is
    spelled as the name is."""
    global XDSTP, ROUTE, ROUTE_REF, CLUSTER_AB, CLUSTER_C
    XDSTP = True
    base = "xdstp://" + AUTHORITY + "/envoy.config."
    ROUTE = base + "route.v3.RouteConfiguration/interop-route?a=1&b=2"
    ROUTE_REF = base + "route.v3.RouteConfiguration/interop-route?" + \
        ("b=2&a=1" if sorts else "a=1&b=2")
    CLUSTER_AB = base + "cluster.v3.Cluster/interop-cluster-ab"
    CLUSTER_C = base + "cluster.v3.Cluster/interop-cluster-c"


def asked_pattern(kind, name):
    """A regular expression for the line of `kind`'s xDS trace that shows
    it subscribing to `name`; None when its trace names no names."""
    asked = CLIENTS[kind]["asked"]
    if asked is None:
        return None
    if kind == "java":
        # a list of JSON strings, Gson's: "=" and "&" as \u escapes
        quoted = json.dumps(name).replace("=", "\\u003d").replace("&", "\\u0026")
        return re.escape(asked % "") + r"[^\]]*" + re.escape(quoted)
    return re.escape(asked % name)


def listener_name():
    return LISTENER_TEMPLATE % LISTENER if XDSTP else LISTENER


def eds_name(cluster):
    """The endpoints of a cluster: named by the cluster with xdstp off,
    by an xdstp ClusterLoadAssignment name (service_name) with it on."""
    if not XDSTP:
        return cluster
    return cluster.replace("cluster.v3.Cluster", "endpoint.v3.ClusterLoadAssignment")

# --errors: per-resource errors (docs/protocol.md rules N1, N2), gRPC
# C-core's switch for reading them ("gRFC A88") on, and off to compare.
ERRORS = False
ERRORS_FLAG = "GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING"
MISSING = "missing.xdsd.test"        # a listener no snapshot has
RESTRICTED = "restricted.xdsd.test"  # one "@allow"ed to an identity the client lacks
LATE = "late.xdsd.test"              # one a reload adds
# Far past gRPC's 15 s does-not-exist timer: whichever ends the call,
# its message says which it was, and no deadline decides the outcome.
ERRORS_DEADLINE = 60.0

# --loads: the clusters name xdsd as their load reporting server
# (lrs_server: self), which asks for a report every LOADS_INTERVAL
# (docs/protocol.md rules M1, M2).
LOADS = False
LOADS_INTERVAL = "1s"
LOADS_WAIT = 30.0  # for the RPCs made to show in xdsd's /loads
LOADS_RPCS = 100   # made before they are counted

# --tls: the identities of tests/lib/make-certs.sh's certificates.
TLS_ALLOWED = "frontend"     # may speak for the client's node
TLS_REFUSED = "backend"      # a valid certificate no rule allows
SPIFFE = "spiffe://example.org/ns/prod/sa/"
NODE_CLUSTER = "xdsd-interop"
INTRUDER_DEADLINE = 15.0     # the refused client's one RPC waits this long:
                             # time for a JVM on a loaded machine to reach
                             # xdsd and be refused
INTRUDER_WAIT = 40.0         # the refused client's run, at most

# gRPC must never send loopback traffic through a proxy.
PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
              "grpc_proxy", "all_proxy", "ALL_PROXY")
ORIG_ENV = dict(os.environ)
for _v in PROXY_VARS:
    os.environ.pop(_v, None)
os.environ.pop("GRPC_XDS_BOOTSTRAP", None)
os.environ.pop("GRPC_XDS_BOOTSTRAP_CONFIG", None)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def point(self, ok, desc, diag=()):
        self.n += 1
        if not ok:
            self.failed += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, desc),
              flush=True)
        self.comment(diag)
        return ok

    def comment(self, lines):
        for line in lines:
            for part in str(line).splitlines() or [""]:
                print("# " + part, flush=True)

    def done(self):
        print("1..%d" % self.n, flush=True)
        return 0 if self.failed == 0 else 1


class Timeout(Exception):
    pass


def run_scenario(tap, sc, timeout):
    """Runs a scenario as one TAP test: sc.run() (which arms
    signal.alarm(timeout) once its setup is done), then sc.cleanup()
    whatever happened. The alarm, a SIGTERM, SIGHUP or SIGINT and a bug
    of the driver each end it with a failed point (the alarm's with
    sc.diag()), so that they still read as TAP. Returns the exit
    status."""
    def on_alarm(*_):
        raise Timeout()

    def on_term(signum, _):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, on_term)
    try:
        sc.run()
    except Timeout:
        tap.point(False, "the scenario finished within %d s" % timeout, sc.diag())
    except SystemExit:
        tap.point(False, "the test ran to its end", ["interrupted by a signal"])
    except Exception:  # a bug here must still read as TAP
        import traceback
        tap.point(False, "the driver ran without an exception",
                  traceback.format_exc().splitlines())
    finally:
        sc.cleanup()
    return tap.done()


def tail(path, n, skip=None, width=400):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        return ["(cannot read %s: %s)" % (path, e.strerror)]
    if skip:
        lines = [ln for ln in lines if not skip.search(ln)]
    out = [ln if len(ln) <= width else ln[:width] + " [...]"
           for ln in lines[-n:]]
    return out or ["(%s is empty)" % path]


def spawn_prefix():
    # The child gets SIGTERM if this driver dies without cleaning up.
    if shutil.which("setpriv"):
        return ["setpriv", "--pdeathsig", "TERM", "--"]
    return []


def snapshot_yaml(route_cluster, clusters, listeners=None):
    """clusters: [(name, backend port)]; the route sends all to route_cluster.
    listeners: [(name, "@allow" glob or None)], each the scenario's
    listener under another name (default: the scenario's one)."""
    out = ["# Written by tests/interop/interop.py: an API listener for gRPC's",
           "# xDS clients, its route configuration, clusters and endpoints.",
           "", "clusters:"]
    for name, _ in clusters:
        out.append(textwrap.dedent("""\
            - name: "{name}"
              connect_timeout: 1s
              type: EDS
              eds_cluster_config:
                service_name: "{eds}"
                eds_config:
                  ads: {{}}
                  resource_api_version: V3
              lb_policy: ROUND_ROBIN{lrs}""").format(
            name=name, eds=eds_name(name),
            lrs="\n  lrs_server: {self: {}}" if LOADS else ""))
    out += ["", "endpoints:"]
    for name, port in clusters:
        # gRPC ignores localities without a weight.
        out.append(textwrap.dedent("""\
            - cluster_name: "{name}"
              endpoints:
              - locality: {{region: loopback, zone: interop}}
                load_balancing_weight: 1
                lb_endpoints:
                - endpoint:
                    address:
                      socket_address: {{address: 127.0.0.1, port_value: {port}}}"""
                                   ).format(name=eds_name(name), port=port))
    out += ["", "listeners:"]
    for name, allow in listeners or [(listener_name(), None)]:
        out.append(textwrap.dedent("""\
        - name: "{listener}"{allow}
          api_listener:
            api_listener:
              "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
              stat_prefix: interop
              rds:
                route_config_name: "{route}"
                config_source:
                  ads: {{}}
                  resource_api_version: V3
              http_filters:
              - name: envoy.filters.http.router
                typed_config:
                  "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"""
                                   ).format(listener=name, route=ROUTE_REF,
                                            allow="" if allow is None else
                                            '\n  "@allow": ["%s"]' % allow))
    out += ["", "routes:", textwrap.dedent("""\
        - name: "{route}"
          virtual_hosts:
          - name: interop
            domains: ["*"]
            routes:
            - match: {{prefix: "/"}}
              route: {{cluster: "{cluster}"}}""").format(route=ROUTE, cluster=route_cluster)]
    return "\n".join(out) + "\n"


def wait_for(cond, pred, timeout, give_up=lambda: False):
    """Waits on `cond` (a threading.Condition its owner notifies on each
    change) until pred(), called with its lock held, returns non-None,
    or give_up() is true: returns what pred() last returned, or None after
    `timeout` seconds."""
    end = time.monotonic() + timeout
    with cond:
        while True:
            r = pred()
            if r is not None or give_up():
                return r
            left = end - time.monotonic()
            if left <= 0:
                return None
            cond.wait(left)


class ClientResults:
    """Reads the client's JSON lines; each result is (arrival time, dict)."""

    def __init__(self, proc, copy_path):
        self.proc = proc
        self.cond = threading.Condition()
        self.results = []       # RPC results only
        self.events = []        # start/done
        self.garbage = []       # lines that were not JSON
        self.eof = False
        self.copy = open(copy_path, "w")
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            now = time.monotonic()
            self.copy.write(line + "\n")
            self.copy.flush()
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            with self.cond:
                if not isinstance(obj, dict):
                    self.garbage.append(line)
                elif "event" in obj:
                    self.events.append((now, obj))
                else:
                    self.results.append((now, obj))
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait(self, pred, timeout):
        """Waits until pred() (called with the lock held) returns non-None."""
        return wait_for(self.cond, pred, timeout, lambda: self.eof)

    def first_answer(self, who, start, not_before, timeout):
        """Index of the first successful RPC answered by `who`, at index >=
        start and arrived at or after not_before; None on timeout/EOF."""
        def pred():
            for i in range(start, len(self.results)):
                t, r = self.results[i]
                if t >= not_before and r.get("ok") and r.get("who") == who:
                    return i
            return None
        return self.wait(pred, timeout)

    def snapshot(self):
        with self.cond:
            return list(self.results)

    def wait_count(self, n, start=0, not_before=0.0, timeout=REACH_TIMEOUT):
        """Waits until n results arrived at index >= start and at or
        after not_before: how many came, which is less on timeout/EOF."""
        def pred():
            got = sum(1 for t, _ in self.results[start:] if t >= not_before)
            return got if got >= n else None
        got = self.wait(pred, timeout)
        if got is None:
            with self.cond:
                got = sum(1 for t, _ in self.results[start:] if t >= not_before)
        return got

    def failures(self):
        return [r for _, r in self.snapshot() if not r.get("ok")]


class TlsSidecar:
    """Mutual TLS on behalf of a client that cannot present a certificate
    itself, as a sidecar proxy would: accepts plaintext connections on
    127.0.0.1 and carries each one, byte for byte, over a TLS connection
    of its own to xdsd, which checks xdsd's certificate against the CA for
    the name "localhost", presents the client certificate and offers ALPN
    h2 (gRPC's). An asyncio loop in a thread of its own; stop() closes
    every connection."""

    def __init__(self, upstream_port, ca, cert, key):
        import asyncio
        self.asyncio = asyncio
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.ctx.load_verify_locations(ca)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.set_alpn_protocols(["h2"])
        self.upstream_port = upstream_port
        self.lock = threading.Lock()
        self.handshakes = []    # ALPN protocol of each TLS connection made
        self.failures = []      # why the others failed
        self.writers = set()    # of every connection, for stop (loop thread only)
        self.loop = asyncio.new_event_loop()
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    async def _serve(self, down_r, down_w):
        try:
            up_r, up_w = await self.asyncio.wait_for(self.asyncio.open_connection(
                "127.0.0.1", self.upstream_port, ssl=self.ctx,
                server_hostname="localhost"), 10)
        except (OSError, ssl.SSLError, self.asyncio.TimeoutError) as e:
            with self.lock:
                self.failures.append("%s: %s" % (type(e).__name__, e))
            down_w.close()
            return
        with self.lock:
            self.handshakes.append(up_w.get_extra_info("ssl_object").selected_alpn_protocol())
        self.writers |= {down_w, up_w}
        await self.asyncio.gather(self._pipe(down_r, up_w), self._pipe(up_r, down_w))

    @staticmethod
    async def _pipe(r, w):
        try:
            while True:
                data = await r.read(65536)
                if not data:
                    break
                w.write(data)
                await w.drain()
        except (OSError, ssl.SSLError):
            pass
        finally:
            w.close()    # the whole connection: the other direction ends too

    def summary(self):
        with self.lock:
            return "%d TLS connections to xdsd (ALPN %s), %d failed%s" % (
                len(self.handshakes), ",".join(sorted({str(a) for a in self.handshakes})) or "-",
                len(self.failures), (": " + self.failures[-1]) if self.failures else "")

    def stop(self):
        async def close_all():
            self.server.close()
            for w in self.writers:
                w.close()
        if self.loop.is_running():
            self.asyncio.run_coroutine_threadsafe(close_all(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)


def summarize_failures(fails, limit=6):
    groups = {}
    for r in fails:
        key = (r.get("code"), r.get("details"))
        g = groups.setdefault(key, [0, r.get("seq")])
        g[0] += 1
    out = []
    for (code, details), (count, seq) in list(groups.items())[:limit]:
        out.append("%d x %s: %s (first: RPC #%s)" % (count, code, details, seq))
    if len(groups) > limit:
        out.append("... and %d other kinds" % (len(groups) - limit))
    return out


class Interop:
    def __init__(self, args, tap):
        self.args = args
        self.tap = tap
        self.client_kind = args.client
        self.kinds = [args.client]   # every kind of client the run starts
        self.tls = args.tls
        self.run_name = (args.client + ("-mtls" if args.tls else "") +
                         ("-xdstp" if args.xdstp else "") +
                         ("-rollout" if args.rollout else "") +
                         ("-errors" if getattr(args, "errors", False) else "") +
                         ("-loads" if getattr(args, "loads", False) else ""))
        self.xdsd = os.environ.get("XDSD", "")
        self.schema = os.environ.get("XDSD_SCHEMA", "")
        self.srcdir = os.environ.get("XDSD_SRCDIR") or os.path.dirname(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.builddir = os.environ.get("XDSD_BUILDDIR", "")
        self.here = os.path.join(self.srcdir, "tests", "interop")
        self.backends = {}      # name -> (server, port)
        self.xdsd_proc = None
        self.xdsd_port = None
        self.client_proc = None
        self.client = None
        self.client_cmd = None  # the client's program, without options
        self.client_env = None
        self.work = None
        self.sidecars = []      # --tls with the python client: TlsSidecar
        self.node_id = None
        self.other_proc = None  # --rollout: the client that is no canary
        self.other = None

    # --- files and logs -------------------------------------------------
    def path(self, name):
        return os.path.join(self.work, name)

    def xdsd_log_tail(self, n=30):
        noise = re.compile(r"debug: grpc: (registering|grpc epoll fd|TCP_USER_TIMEOUT)")
        return ["xdsd log (%s), last lines:" % self.path("xdsd.log")] + \
            ["  " + ln for ln in tail(self.path("xdsd.log"), n, noise)]

    def client_log_tail(self, n=25):
        return ["client stderr (%s), last lines:" % self.path("client.log")] + \
            ["  " + ln for ln in tail(self.path("client.log"), n)]

    def client_diag(self):
        out = []
        if self.client is not None:
            fails = self.client.failures()
            res = self.client.snapshot()
            out.append("client: %d RPCs completed, %d failed" % (len(res), len(fails)))
            out += ["  " + s for s in summarize_failures(fails)]
            if res:
                out.append("  last results: " + ", ".join(
                    (r.get("who") if r.get("ok") else r.get("code", "?"))
                    for _, r in res[-8:]))
            if self.client.garbage:
                out.append("  non-JSON output: " + self.client.garbage[-1])
        return out + self.sidecar_diag() + self.client_log_tail()

    def write_snapshot(self, route_cluster, clusters, listeners=None):
        tmp = self.path("default.yaml.tmp")
        with open(tmp, "w") as f:
            f.write(snapshot_yaml(route_cluster, clusters, listeners))
        os.replace(tmp, self.path("snapshots/default.yaml"))

    # --- prerequisites --------------------------------------------------
    def setup_work(self):
        if not self.xdsd or not os.access(self.xdsd, os.X_OK):
            self.tap.point(False, "XDSD names the xdsd binary",
                           ["XDSD=%r is not an executable file; run through "
                            "`make check` or see tests/interop/README.md" % self.xdsd])
            return False
        if not self.builddir or not os.path.isdir(self.builddir):
            self.tap.point(False, "XDSD_BUILDDIR names the build tree",
                           ["XDSD_BUILDDIR=%r is not a directory" % self.builddir])
            return False
        self.work = os.path.join(self.builddir, "tests", "interop",
                                 self.run_name + ".work")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.path("snapshots"))
        self.tap.comment(["work files (logs, snapshot, bootstrap): " + self.work])
        return True

    def cert(self, name):
        return os.path.join(self.work, "certs", name)

    def make_certs(self):
        """--tls: the test certificates, made by tests/lib/make-certs.sh."""
        script = os.path.join(self.srcdir, "tests", "lib", "make-certs.sh")
        try:
            p = subprocess.run(["sh", script, self.path("certs")], capture_output=True,
                               text=True, timeout=120, stdin=subprocess.DEVNULL)
            why = [] if p.returncode == 0 else ["exit status %d" % p.returncode] + \
                (p.stdout + p.stderr).splitlines()[-10:]
        except (OSError, subprocess.SubprocessError) as e:
            why = [str(e)]
        need = ["ca.pem", "server.pem", "server.key"] + \
            ["%s.%s" % (who, ext) for who in (TLS_ALLOWED, TLS_REFUSED) for ext in ("pem", "key")]
        missing = [n for n in need if not os.path.isfile(self.cert(n))]
        if missing and not why:
            why = ["missing: " + ", ".join(missing)]
        return self.tap.point(not why, "certificates made by %s in %s (CA, server "
                              "for localhost, client identities %s%s and %s%s)"
                              % (script, self.path("certs"), SPIFFE, TLS_ALLOWED,
                                 SPIFFE, TLS_REFUSED), why)

    def check_grpcio(self):
        try:
            import grpc  # noqa: F401
        except ImportError as e:
            self.tap.point(False, "python3-grpcio is importable by %s" % sys.executable,
                           ["%s; install Debian's python3-grpcio" % e])
            return False
        ver = tuple(int(x) for x in re.findall(r"\d+", grpc.__version__)[:2])
        role = ("the client under test; its xDS resolver is built in from 1.51"
                if "python" in self.kinds else "for the backends")
        return self.tap.point(ver >= (1, 51), "python3-grpcio %s >= 1.51 at %s (%s)"
                              % (grpc.__version__, os.path.dirname(grpc.__file__), role))

    def prepare_client(self, kind=None):
        """Makes the client of `kind` (default: this run's) ready and
        sets client_cmd and client_env; False (and a failed TAP line)
        when it cannot be had."""
        kind = kind or self.client_kind
        return getattr(self, "prepare_%s_client" % kind)()

    def prepare_python_client(self):
        self.client_cmd = [sys.executable, os.path.join(self.here, "client.py")]
        self.client_env = {"GRPC_VERBOSITY": "debug", "GRPC_TRACE": "xds_client"}
        return True

    def install(self, script, dest, what):
        """Runs scripts/SCRIPT DEST (an install of the repo's own, idempotent
        and locked): True once it succeeded, a failed TAP line otherwise."""
        cmd = [os.path.join(self.srcdir, "scripts", script), dest]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200,
                               stdin=subprocess.DEVNULL, env=ORIG_ENV)
            why = [] if p.returncode == 0 else ["exit status %d" % p.returncode] + \
                (p.stdout + p.stderr).splitlines()[-25:]
            said = (p.stdout + p.stderr).strip().splitlines()
        except (OSError, subprocess.SubprocessError) as e:
            why, said = [str(e)], []
        took = time.monotonic() - t0
        return self.tap.point(not why, "scripts/%s makes %s (%s)" % (
            script, what, "%.1f s: %s" % (took, said[-1]) if said else "already made"), why)

    def prepare_pypi_client(self):
        venv = os.path.join(self.builddir, "venv")
        if not self.install("install-venv", venv, "the venv with grpcio from "
                            "tests/interop/requirements.txt in " + venv):
            return False
        self.client_cmd = [os.path.join(venv, "bin", "python"), os.path.join(self.here, "client.py")]
        self.client_env = {"GRPC_VERBOSITY": "debug", "GRPC_TRACE": "xds_client"}
        return True

    def prepare_go_client(self):
        dest = os.path.join(self.builddir, "tests", "interop", "go-client")
        if not self.install("install-go-client", dest, "the Go client " + dest + "/client"):
            return False
        self.client_cmd = [os.path.join(dest, "client")]
        # grpc-go's logger: its xDS client logs what it sends and gets
        # at verbosity 2 and above.
        self.client_env = {"GRPC_GO_LOG_SEVERITY_LEVEL": "info",
                           "GRPC_GO_LOG_VERBOSITY_LEVEL": "99"}
        return True

    def prepare_java_client(self):
        dest = os.path.join(self.builddir, "tests", "interop", "java-client")
        if not self.install("install-java-client", dest, "the Java client " + dest + "/client"):
            return False
        # The client sets its xDS trace up itself (java.util.logging).
        self.client_cmd = [os.path.join(dest, "client")] + CLIENTS["java"]["options"]
        self.client_env = {}
        return True

    def prepare_node_client(self):
        node = shutil.which("node")
        npm = shutil.which("npm")
        if not node or not npm:
            self.tap.point(False, "node and npm are installed",
                           ["node: %s, npm: %s; install Debian's nodejs and npm "
                            "(node >= 18)" % (node, npm)])
            return False
        try:
            v = subprocess.run([node, "--version"], capture_output=True, text=True,
                               timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError) as e:
            v = "? (%s)" % e
        m = re.match(r"v(\d+)", v)
        if not self.tap.point(bool(m) and int(m.group(1)) >= 18,
                              "node >= 18 (%s: %s)" % (node, v)):
            return False
        modules = self.npm_install(npm)
        if not modules:
            return False
        self.client_cmd = [node, os.path.join(self.here, "node", "client.js")]
        self.client_env = {"NODE_PATH": modules,
                           "GRPC_TRACE": "xds_client", "GRPC_VERBOSITY": "DEBUG"}
        return True

    def npm_install(self, npm):
        """npm ci of tests/interop/node into the build tree, unless the same
        lock file is already installed there. Returns node_modules or None."""
        src = os.path.join(self.here, "node")
        dest = os.path.join(self.builddir, "tests", "interop", "node")
        modules = os.path.join(dest, "node_modules")
        os.makedirs(dest, exist_ok=True)
        h = hashlib.sha256()
        for name in ("package.json", "package-lock.json"):
            with open(os.path.join(src, name), "rb") as f:
                h.update(f.read())
        lock_hash = h.hexdigest()
        stamp = os.path.join(modules, ".xdsd-interop-installed")
        log = os.path.join(dest, "npm.log")
        with open(os.path.join(dest, ".install-lock"), "w") as lockf:
            fcntl.flock(lockf, fcntl.LOCK_EX)
            try:
                with open(stamp) as f:
                    have = f.read().strip()
            except OSError:
                have = ""
            if have == lock_hash:
                what = "already installed"
            else:
                if os.path.realpath(src) != os.path.realpath(dest):
                    for name in ("package.json", "package-lock.json"):
                        shutil.copyfile(os.path.join(src, name), os.path.join(dest, name))
                shutil.rmtree(modules, ignore_errors=True)
                env = dict(ORIG_ENV)  # npm may need the proxy settings
                t0 = time.monotonic()
                try:
                    with open(log, "w") as lf:
                        rc = subprocess.run(
                            [npm, "ci", "--no-audit", "--no-fund", "--prefer-offline",
                             "--ignore-scripts"],
                            cwd=dest, env=env, stdin=subprocess.DEVNULL,
                            stdout=lf, stderr=subprocess.STDOUT, timeout=600).returncode
                except subprocess.TimeoutExpired:
                    rc = "timeout (600 s)"
                except OSError as e:
                    rc = str(e)
                if rc != 0:
                    self.tap.point(False, "npm ci installs tests/interop/node/package-lock.json",
                                   ["npm ci in %s failed: %s" % (dest, rc)] +
                                   ["  " + ln for ln in tail(log, 25)])
                    return None
                with open(stamp, "w") as f:
                    f.write(lock_hash + "\n")
                what = "npm ci in %.1f s" % (time.monotonic() - t0)
        versions = {}
        for pkg in ("@grpc/grpc-js-xds", "@grpc/grpc-js"):
            try:
                with open(os.path.join(modules, pkg, "package.json")) as f:
                    versions[pkg] = json.load(f).get("version")
            except (OSError, ValueError):
                versions[pkg] = None
        ok = versions["@grpc/grpc-js-xds"] == NODE_XDS_VERSION and \
            (versions["@grpc/grpc-js"] or "").startswith("1.14.")
        self.tap.point(ok, "@grpc/grpc-js-xds %s with @grpc/grpc-js %s in %s (%s)"
                       % (versions["@grpc/grpc-js-xds"], versions["@grpc/grpc-js"],
                          modules, what),
                       [] if ok else ["expected grpc-js-xds %s and grpc-js 1.14.x; "
                                      "remove %s to reinstall" % (NODE_XDS_VERSION, modules)])
        return modules if ok else None

    # --- backends -------------------------------------------------------
    def start_backends(self):
        import grpc
        from concurrent import futures
        all_ok = True
        for name in ("A", "B"):
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
            reply = name.encode()
            handler = grpc.method_handlers_generic_handler(SERVICE, {
                METHOD: grpc.unary_unary_rpc_method_handler(
                    lambda request, context, reply=reply: reply)})
            server.add_generic_rpc_handlers((handler,))
            port = server.add_insecure_port("127.0.0.1:0")
            server.start()
            self.backends[name] = (server, port)
            # A plain (non-xDS) channel: the backend itself works.
            got, err = None, None
            try:
                with grpc.insecure_channel("127.0.0.1:%d" % port) as ch:
                    got = ch.unary_unary("/%s/%s" % (SERVICE, METHOD))(b"", timeout=5)
            except grpc.RpcError as e:
                err = "%s: %s" % (e.code().name, e.details())
            ok = port > 0 and got == reply
            all_ok &= self.tap.point(ok, "backend %s on 127.0.0.1:%d answers a direct RPC with %r"
                                     % (name, port, name),
                                     [] if ok else ["got %r %s" % (got, err or "")])
        return all_ok

    # --- xdsd -------------------------------------------------------------
    def start_xdsd(self):
        a_port = self.backends["A"][1]
        self.write_snapshot(CLUSTER_AB, [(CLUSTER_AB, a_port)],
                            self.errors_listeners(False) if ERRORS else None)
        with open(self.path("xdsd.yaml"), "w") as f:
            # admin on a free port: interop runs beside other tests
            f.write("listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\n"
                    "snapshots: %s\nlog_level: debug\n"
                    % self.path("snapshots"))
            if self.schema:
                f.write("schema: %s\n" % self.schema)
            if ROLLOUT:
                f.write("rollout:\n  canary: ['*-canary-*']\n  bake: %dms\n"
                        % int(ROLLOUT_BAKE * 1000))
            if LOADS:
                f.write("load_reports:\n  interval: %s\n" % LOADS_INTERVAL)
            if self.tls:
                f.write(textwrap.dedent("""\
                    tls:
                      cert: {certs}/server.pem
                      key: {certs}/server.key
                      client_ca: {certs}/ca.pem
                    authorize:
                      - identity: "{spiffe}{allowed}"
                        node_id: "interop-{kind}-*"
                        node_cluster: "{cluster}"
                    """).format(certs=self.path("certs"), spiffe=SPIFFE,
                                allowed=TLS_ALLOWED, kind=self.client_kind,
                                cluster=NODE_CLUSTER))
        log = open(self.path("xdsd.log"), "w")
        self.xdsd_proc = subprocess.Popen(
            spawn_prefix() + [self.xdsd, "-c", self.path("xdsd.yaml")],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        pat = re.compile(r"listening on 127\.0\.0\.1:0 \(port (\d+)\)")
        end = time.monotonic() + 10
        while time.monotonic() < end and self.xdsd_proc.poll() is None:
            with open(self.path("xdsd.log"), errors="replace") as f:
                m = pat.search(f.read())
            if m:
                self.xdsd_port = int(m.group(1))
                break
            time.sleep(0.05)
        ok = self.xdsd_port is not None
        why = [] if ok else [
            "xdsd exited with status %s" % self.xdsd_proc.returncode
            if self.xdsd_proc.poll() is not None else
            "no 'listening on 127.0.0.1:0 (port N)' line within 10 s"] + self.xdsd_log_tail()
        return self.tap.point(ok, "xdsd listens on 127.0.0.1:%s" % self.xdsd_port, why)

    def xdsd_log(self):
        try:
            with open(self.path("xdsd.log"), errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            return None

    def logged_at(self, needle):
        """When xdsd logged the first line holding needle, by its own
        clock (the line's "2026-11-22T12:01:07.601Z"), in seconds since
        the epoch; None when no line holds it."""
        for ln in self.xdsd_log() or []:
            if needle in ln:
                try:
                    stamp = datetime.datetime.strptime(ln.split(" ", 1)[0],
                                                       "%Y-%m-%dT%H:%M:%S.%fZ")
                except ValueError:
                    return None
                return stamp.replace(tzinfo=datetime.timezone.utc).timestamp()
        return None

    def sighup(self):
        if self.xdsd_proc.poll() is not None:
            return False
        self.xdsd_proc.send_signal(signal.SIGHUP)
        return True

    # --- the client -------------------------------------------------------
    def client_server(self, who):
        """Where a client reaches xdsd, and the client's options, for a
        client with the certificate of `who` (with --tls; plaintext
        otherwise): (server_uri for its bootstrap, options, its
        channel_creds)."""
        insecure = [{"type": "insecure"}]
        if not self.tls:
            return "127.0.0.1:%d" % self.xdsd_port, [], insecure
        how = CLIENTS[self.client_kind]["tls"]
        if how == "bootstrap":
            # "gRFC A65": the certificate is in the bootstrap's own
            # channel_creds; the name is checked against xdsd's
            # certificate (issued for localhost).
            return "localhost:%d" % self.xdsd_port, [], [{"type": "tls", "config": {
                "ca_certificate_file": self.cert("ca.pem"),
                "certificate_file": self.cert(who + ".pem"),
                "private_key_file": self.cert(who + ".key")}}]
        if how == "sidecar":
            # gRPC C-core 1.51 knows the channel_creds "google_default",
            # "insecure" and "fake" only: its xDS channel stays plaintext,
            # to a sidecar on loopback that makes the TLS connection.
            car = TlsSidecar(self.xdsd_port, self.cert("ca.pem"),
                             self.cert(who + ".pem"), self.cert(who + ".key"))
            self.sidecars.append(car)
            return "127.0.0.1:%d" % car.port, [], insecure
        # grpc-js-xds 1.14 knows "google_default" and "insecure" only:
        # client.js hands it grpc-js's SSL credentials with the client
        # certificate in place of the insecure ones the bootstrap names.
        return "localhost:%d" % self.xdsd_port, [
            "--xds-ca", self.cert("ca.pem"), "--xds-cert", self.cert(who + ".pem"),
            "--xds-key", self.cert(who + ".key")], insecure

    def write_bootstrap(self, name, node_id, server_uri, kind=None, creds=None):
        """kind: the client's, for its locality (default: this run's);
        creds: its channel_creds (default: insecure)."""
        boot = {
            "xds_servers": [{
                "server_uri": server_uri,
                "channel_creds": creds or [{"type": "insecure"}],
                "server_features": ["xds_v3"],
            }],
            "node": {
                "id": node_id,
                "cluster": NODE_CLUSTER,
                # grpc-js-xds 1.14 refuses a bootstrap without a locality.
                "locality": {"region": "loopback", "zone": "interop",
                             "sub_zone": kind or self.client_kind},
            },
        }
        if XDSTP:
            boot["authorities"] = {AUTHORITY: {
                "xds_servers": boot["xds_servers"],
                "client_listener_resource_name_template": LISTENER_TEMPLATE}}
            boot["client_default_listener_resource_name_template"] = LISTENER_TEMPLATE
        with open(self.path(name), "w") as f:
            json.dump(boot, f, indent=2)
            f.write("\n")
        return self.path(name)

    def client_env_for(self, bootstrap, errors=None):
        """errors: gRPC's switch for per-resource errors, True or False
        (None: as --errors says)."""
        env = dict(os.environ)
        env.update(self.client_env)
        env["GRPC_XDS_BOOTSTRAP"] = bootstrap
        if XDSTP:
            env["GRPC_EXPERIMENTAL_XDS_FEDERATION"] = "true"
        env.pop(ERRORS_FLAG, None)
        if ERRORS if errors is None else errors:
            env[ERRORS_FLAG] = "true"
        return env

    def spawn_client(self, name, node_id, target=TARGET, first_deadline=FIRST_DEADLINE):
        """A client as node `node_id`, its files named `name`.*: (process,
        its results)."""
        server_uri, opts, creds = self.client_server(TLS_ALLOWED)
        boot = self.write_bootstrap("bootstrap-%s.json" % name if name != "client"
                                    else "bootstrap.json", node_id, server_uri, creds=creds)
        cmd = self.client_cmd + ["--first-deadline", str(first_deadline),
                                 "--interval-ms", str(RPC_INTERVAL_MS)] + opts + [target]
        errlog = open(self.path(name + ".log"), "w")
        proc = subprocess.Popen(
            spawn_prefix() + cmd, env=self.client_env_for(boot), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=errlog)
        errlog.close()
        return proc, ClientResults(proc, self.path(name + ".out")), boot

    def start_client(self):
        self.node_id = "interop-%s-%s%d" % (self.client_kind,
                                            "canary-" if ROLLOUT else "", os.getpid())
        self.client_proc, self.client, boot = self.spawn_client("client", self.node_id)
        ev = self.client.wait(lambda: self.client.events[0][1] if self.client.events else None, 30)
        ok = bool(ev) and ev.get("event") == "start"
        version = CLIENTS[self.client_kind]["version"]
        if ok and not re.search(version, ev.get("client", "")):
            self.tap.point(False, "the client is the one under test", [
                "its start line names %r, not /%s/" % (ev.get("client"), version)])
            ok = False
        return self.tap.point(
            ok, "%s client started on %s (bootstrap %s%s)"
            % (ev.get("client") if ok else self.client_kind, TARGET, boot,
               ", through a TLS sidecar on 127.0.0.1:%d" % self.sidecars[0].port
               if self.sidecars else ""),
            [] if ok else ["no start line within 30 s; client %s" %
                           ("exited with status %s" % self.client_proc.poll()
                            if self.client_proc.poll() is not None else "still running")]
            + self.client_diag())

    def check_ads_stream(self):
        pat = re.compile(r"stream \d+: ADS from ")
        if self.tls:
            # with mTLS the line names the client certificate's identity
            pat = re.compile(r"stream \d+: ADS from .*\(identity '%s'\)"
                             % re.escape(SPIFFE + TLS_ALLOWED))
        end = time.monotonic() + ADS_TIMEOUT
        while True:
            lines = self.xdsd_log() or []
            hits = [ln for ln in lines if pat.search(ln)]
            if hits or time.monotonic() >= end:
                break
            time.sleep(0.1)
        return self.tap.point(bool(hits), "the client opened an ADS stream to xdsd%s"
                              % (" over mTLS, as identity '%s%s'" % (SPIFFE, TLS_ALLOWED)
                                 if self.tls else ""),
                              [hits[0]] if hits else
                              ["no 'stream N: ADS from%s' line in xdsd's log"
                               % (" ... (identity '%s%s')" % (SPIFFE, TLS_ALLOWED)
                                  if self.tls else "")]
                              + self.sidecar_diag() + self.client_log_tail()
                              + self.xdsd_log_tail())

    def sidecar_diag(self):
        return ["TLS sidecar on 127.0.0.1:%d: %s" % (c.port, c.summary())
                for c in self.sidecars]

    def stays(self, who, start):
        """Over SETTLE seconds and at least two RPCs from index start on
        (however long those take on a loaded machine), every RPC answered
        who."""
        time.sleep(SETTLE)
        self.client.wait_count(2, start)
        res = self.client.snapshot()[start:]
        others = [r for _, r in res if r.get("ok") and r.get("who") != who]
        fails = [r for _, r in res if not r.get("ok")]
        ok = len(res) >= 2 and not others and not fails
        why = []
        if len(res) < 2:
            why.append("only %d RPCs completed in %.0f s" % (len(res), REACH_TIMEOUT))
        if others:
            why.append("%d answers came from elsewhere: %s" % (
                len(others), ", ".join(sorted({r.get("who") for r in others}))))
        why += summarize_failures(fails)
        return self.tap.point(ok, "RPCs stay on backend %s (%d RPCs in %.1f s)"
                              % (who, len(res), SETTLE), why)

    def reach(self, who, desc, not_before, timeout, what):
        i = self.client.first_answer(who, 0, not_before, timeout)
        if i is None:
            why = ["no answer from backend %s within %.0f s %s" % (who, timeout, what)]
            if self.client.eof:
                why.append("the client exited (status %s)" % self.client_proc.poll())
            self.tap.point(False, desc, why + self.client_diag() + self.xdsd_log_tail())
            return None
        t, r = self.client.snapshot()[i]
        self.tap.point(True, desc, ["RPC #%s answered by %s %.0f ms %s"
                                    % (r.get("seq"), who, (t - not_before) * 1000, what)])
        return i

    def move_to_b(self, desc, give_up, never):
        """Moves the endpoints of CLUSTER_AB to B, SIGHUP: (index of the
        client's first answer from B, time of the SIGHUP), or (None, None)
        with stages 2 and on (3 and on once SIGHUP was sent) given up."""
        self.write_snapshot(CLUSTER_AB, [(CLUSTER_AB, self.backends["B"][1])])
        t_hup = time.monotonic()
        if not self.sighup():
            give_up(2, "xdsd is gone (status %s)" % self.xdsd_proc.returncode)
            return None, None
        i = self.reach("B", desc, t_hup, MOVE_TIMEOUT, "after SIGHUP")
        if i is None:
            give_up(3, never)
        return i, t_hup

    def scenario(self):
        """Returns once the three stages ran or one of them failed; the
        failed stage and the ones after it are reported as failures."""
        stages = [
            "RPCs through %s reach backend A (cluster %s)" % (TARGET, CLUSTER_AB),
            "RPCs stay on backend A",
            "after SIGHUP (endpoints of %s now at B) RPCs move to backend B within %.0f s"
            % (CLUSTER_AB, MOVE_TIMEOUT),
            "RPCs stay on backend B",
            "after SIGHUP (route now to new cluster %s at A, %s removed) RPCs move to it within %.0f s"
            % (CLUSTER_C, CLUSTER_AB, MOVE_TIMEOUT),
            "RPCs stay on cluster %s (backend A)" % CLUSTER_C,
        ]

        def give_up(from_stage, reason):
            for desc in stages[from_stage:]:
                self.tap.point(False, desc, ["not attempted: " + reason])

        t0 = self.client.events[0][0]
        i = self.reach("A", stages[0], t0, REACH_TIMEOUT, "after the client started")
        if i is None:
            return give_up(1, "RPCs never reached backend A")
        if not self.stays("A", i):
            return give_up(2, "RPCs did not stay on backend A")

        i, _ = self.move_to_b(stages[2], give_up, "RPCs never moved to backend B")
        if i is None:
            return None
        if not self.stays("B", i):
            return give_up(4, "RPCs did not stay on backend B")

        self.write_snapshot(CLUSTER_C, [(CLUSTER_C, self.backends["A"][1])])
        t_hup = time.monotonic()
        if not self.sighup():
            return give_up(4, "xdsd is gone (status %s)" % self.xdsd_proc.returncode)
        i = self.reach("A", stages[4], t_hup, MOVE_TIMEOUT, "after SIGHUP")
        if i is None:
            return give_up(5, "RPCs never moved to cluster %s" % CLUSTER_C)
        self.stays("A", i)

    def scenario_rollout(self):
        """--rollout: the canary (self.client) gets the change first, the
        other client only once the canary ACKed and the bake passed."""
        stages = [
            "the canary's RPCs reach backend A",
            "a second client, no canary, starts and its RPCs reach backend A",
            "after SIGHUP (endpoints of %s now at B) the canary's RPCs move to B within %.0f s"
            % (CLUSTER_AB, MOVE_TIMEOUT),
            "the other client's RPCs stay on A for the bake (%.1f s) after the canary moved"
            % ROLLOUT_BAKE,
            "the other client's RPCs move to B once the bake is over",
            "xdsd logged that the canary answered and the promotion after the bake",
        ]

        def give_up(from_stage, reason):
            for desc in stages[from_stage:]:
                self.tap.point(False, desc, ["not attempted: " + reason])

        t0 = self.client.events[0][0]
        if self.reach("A", stages[0], t0, REACH_TIMEOUT, "after the client started") is None:
            return give_up(1, "RPCs never reached backend A")
        other_id = "interop-%s-%d" % (self.client_kind, os.getpid())
        self.other_proc, self.other, _ = self.spawn_client("other", other_id)
        ev = self.other.wait(lambda: self.other.events[0][0] if self.other.events else None, 30)
        i = None if ev is None else self.other.first_answer("A", 0, ev, REACH_TIMEOUT)
        self.tap.point(i is not None, stages[1],
                       [] if i is not None else ["no answer from A within %.0f s" % REACH_TIMEOUT]
                       + ["  " + ln for ln in tail(self.path("other.log"), 15)])
        if i is None:
            return give_up(2, "the other client never reached backend A")

        i, t_hup = self.move_to_b(stages[2], give_up, "the canary never moved to backend B")
        if i is None:
            return None
        t_canary = self.client.snapshot()[i][0]
        j = self.other.first_answer("B", 0, t_hup, ROLLOUT_BAKE + MOVE_TIMEOUT)
        t_other = self.other.snapshot()[j][0] if j is not None else None
        # When the bake began and ended is read from xdsd's own log
        # lines, and every answer the other client had before the
        # promotion must be A's: when this driver read an answer is
        # never earlier than when it came, so a loaded machine can only
        # make an answer look later, never early. (The bake counts from
        # the loop's time of its turn, which may be a little before its
        # line is written: a second of slack.)
        began = self.logged_at("rollout 1: all 1 connected canary answered (0 NACKs)")
        promoted = self.logged_at("rollout 1 promoted (")
        wall = time.time() - time.monotonic()
        why = []
        if began is None or promoted is None:
            why.append("no bake and promotion lines in xdsd's log")
        else:
            if promoted - began < ROLLOUT_BAKE - 1.0:
                why.append("promoted %.0f ms after the bake of %.1f s began"
                           % ((promoted - began) * 1000, ROLLOUT_BAKE))
            early = [r for t, r in self.other.snapshot()
                     if t >= t_hup and t + wall < promoted and r.get("ok")
                     and r.get("who") != "A"]
            if early:
                why.append("%d answers from %s before the promotion"
                           % (len(early), ", ".join(sorted({r.get("who") for r in early}))))
        self.tap.point(not why, stages[3],
                       why or ["the other client's first answer from B came %.0f ms after the "
                               "canary's" % ((t_other - t_canary) * 1000)]
                       if t_other is not None else why)
        self.tap.point(t_other is not None, stages[4],
                       ["%.0f ms after the canary's first answer from B"
                        % ((t_other - t_canary) * 1000)] if t_other is not None else
                       ["no answer from B within %.0f s of SIGHUP"
                        % (ROLLOUT_BAKE + MOVE_TIMEOUT)] + self.xdsd_log_tail())
        want = ["rollout 1: all 1 connected canary answered (0 NACKs)",
                "rollout 1 promoted (baked with 1 canary and 0 NACKs)"]
        lines = self.xdsd_log() or []
        missing = [w for w in want if not any(w in ln for ln in lines)]
        self.tap.point(not missing, stages[5],
                       ["not in xdsd's log: " + m for m in missing] + self.xdsd_log_tail()
                       if missing else [])
        self.stop_other()

    def stop_other(self):
        """Stops the second client; none of its RPCs may have failed."""
        rc = self.stop_proc(self.other_proc, self.other)
        res = self.other.snapshot()
        fails = [r for _, r in res if not r.get("ok")]
        self.tap.point(rc == 0 and res and not fails,
                       "the other client's RPCs never failed (%d RPCs) and it stops cleanly (status %s)"
                       % (len(res), rc), summarize_failures(fails))

    # --- --errors: per-resource errors (rules N1, N2) ---------------------
    def errors_listeners(self, late):
        """The listeners of the --errors snapshot: the scenario's, one
        restricted to an identity no client here proves, and (`late`)
        the one a reload adds."""
        return [(listener_name(), None), (RESTRICTED, SPIFFE + "nobody")] + \
            ([(LATE, None)] if late else [])

    def call_once(self, name, target, errors):
        """One RPC of a client of its own to `target`, gRPC's switch for
        per-resource errors on or off: (its result or None, why not)."""
        server_uri, opts, creds = self.client_server(TLS_ALLOWED)
        boot = self.write_bootstrap("bootstrap-%s.json" % name,
                                    "interop-%s-%s-%d" % (self.client_kind, name, os.getpid()),
                                    server_uri, creds=creds)
        cmd = self.client_cmd + ["--count", "1", "--first-deadline",
                                 str(ERRORS_DEADLINE)] + opts + [target]
        why, results = [], []
        try:
            with open(self.path(name + ".out"), "w") as out, \
                    open(self.path(name + ".log"), "w") as err:
                rc = subprocess.run(spawn_prefix() + cmd, env=self.client_env_for(boot, errors),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    timeout=ERRORS_DEADLINE + 30).returncode
            if rc != 0:
                why.append("the client exited with status %s" % rc)
        except subprocess.TimeoutExpired:
            why.append("the client did not exit within %.0f s" % (ERRORS_DEADLINE + 30))
        except OSError as e:
            why.append(str(e))
        with open(self.path(name + ".out")) as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and "seq" in obj:
                    results.append(obj)
        if len(results) != 1:
            why.append("%d results, not one" % len(results))
        return (results[0] if results else None), why + \
            ["  " + ln for ln in tail(self.path(name + ".log"), 12)]

    def fails_with(self, what, name, target, errors, needle, want):
        """Rule N1/N2 through the client: its one RPC fails, and its
        message holds xdsd's `needle` (`want`) or not."""
        r, why = self.call_once(name, target, errors)
        details = (r or {}).get("details") or ""
        ok = r is not None and not r.get("ok") and (needle in details) == want
        return self.tap.point(ok, what, ["its RPC: %s" % r] + ([] if ok else why))

    def scenario_errors(self):
        """--errors: the client asks for listeners xdsd cannot serve it
        and, reading resource_errors, fails its calls with xdsd's reason;
        without gRPC's switch the same call ends on its own timer, with a
        message of its own; a listener a reload adds is followed."""
        not_found = "xdsd: no listener '%s' in the snapshot serving this node" % MISSING
        denied = "xdsd: listener '%s' is not served to this client" % RESTRICTED
        self.fails_with("with %s=true, a call to xds:///%s fails with xdsd's NOT_FOUND: "
                        "\"%s\" (rule N1)" % (ERRORS_FLAG, MISSING, not_found),
                        "missing", "xds:///" + MISSING, True, not_found, True)
        self.fails_with("without it the same call fails without xdsd's message (gRPC's "
                        "own does-not-exist timer ended it)",
                        "missing-timer", "xds:///" + MISSING, False, "xdsd:", False)
        self.fails_with("with %s=true, a call to xds:///%s, restricted by \"@allow\", fails "
                        "with xdsd's PERMISSION_DENIED: \"%s\" (rule N2)"
                        % (ERRORS_FLAG, RESTRICTED, denied),
                        "restricted", "xds:///" + RESTRICTED, True, denied, True)
        # a client of the name that does not exist yet: told, then served
        late_msg = "xdsd: no listener '%s'" % LATE
        self.node_id = "interop-%s-late-%d" % (self.client_kind, os.getpid())
        self.client_proc, self.client, _ = self.spawn_client(
            "client", self.node_id, "xds:///" + LATE, ERRORS_DEADLINE)
        told = self.client.wait(lambda: next(
            (i for i, (_, r) in enumerate(self.client.results)
             if not r.get("ok") and late_msg in (r.get("details") or "")), None),
            ERRORS_DEADLINE + 10)
        self.tap.point(told is not None, "a looping client of xds:///%s fails with xdsd's "
                       "message while no snapshot has it" % LATE,
                       [] if told is not None else self.client_diag())
        self.write_snapshot(CLUSTER_AB, [(CLUSTER_AB, self.backends["A"][1])],
                            self.errors_listeners(True))
        t_hup = time.monotonic()
        if not self.sighup():
            self.tap.point(False, "xdsd is running for the reload",
                           ["status %s" % self.xdsd_proc.returncode])
        elif self.reach("A", "once a reload adds %s its RPCs reach backend A (rule S10)"
                        % LATE, t_hup, MOVE_TIMEOUT, "after SIGHUP") is not None:
            self.stays("A", len(self.client.snapshot()) - 1)
        self.stop_client()

    # --- --loads: load reports (rules M1, M2) ----------------------------
    def admin_get(self, path):
        """GET `path` of xdsd's admin endpoint (its port from the log):
        the body, or None."""
        import urllib.request
        m = None
        for ln in self.xdsd_log() or []:
            m = re.search(r"\(admin port (\d+)\)", ln) or m
        if m is None:
            return None
        try:
            with urllib.request.urlopen("http://127.0.0.1:%s%s" % (m.group(1), path),
                                        timeout=10) as r:
                return r.read().decode("utf-8", "replace")
        except OSError:
            return None

    def reported(self):
        """What xdsd's /loads holds of this client's load on CLUSTER_AB:
        (requests over every report, the localities), or (None, [])."""
        body = self.admin_get("/loads")
        try:
            doc = json.loads(body) if body else None
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            return None, []
        total, where = 0, []
        for e in doc.get("loads", []):
            if e.get("node") != self.node_id or e.get("cluster") != CLUSTER_AB:
                continue
            total += e.get("total", {}).get("requests", 0)
            loc = e.get("locality") or {}
            where.append("%s/%s/%s" % (loc.get("region"), loc.get("zone"), loc.get("sub_zone")))
        return total, where

    def scenario_loads(self):
        """--loads: the client, whose cluster names xdsd as its LRS
        server, reports the RPCs it makes; xdsd's /loads and /metrics
        count them under the cluster, its endpoints' locality and the
        client's node."""
        t0 = self.client.events[0][0]
        if self.reach("A", "RPCs through %s reach backend A (cluster %s, lrs_server: self)"
                      % (TARGET, CLUSTER_AB), t0, REACH_TIMEOUT,
                      "after the client started") is None:
            return
        # some load, then the RPCs answered so far: the reports must come
        # to count them all (each covers up to its interval's end)
        self.client.wait_count(LOADS_RPCS)
        made = sum(1 for _, r in self.client.snapshot() if r.get("ok"))
        end = time.monotonic() + LOADS_WAIT
        got, where = None, []
        while time.monotonic() < end:
            got, where = self.reported()
            if got is not None and got >= made:
                break
            time.sleep(0.2)
        ok = got is not None and got >= made and where == ["loopback/interop/"]
        self.tap.point(ok, "xdsd's /loads counts the client's RPCs to %s: %s reported of at "
                       "least %d made, in locality %s, from node %s (rule M2)"
                       % (CLUSTER_AB, got, made, ",".join(where) or "-", self.node_id),
                       [] if ok else ["/loads: %s" % (self.admin_get("/loads") or "-")[:2000]]
                       + self.xdsd_log_tail())
        metrics = self.admin_get("/metrics") or ""
        m = re.search(r'^xdsd_load_requests_total\{cluster="%s",locality="loopback/interop/"\} (\d+)$'
                      % re.escape(CLUSTER_AB), metrics, re.M)
        self.tap.point(m is not None and int(m.group(1)) >= made,
                       "/metrics has them: xdsd_load_requests_total{cluster=\"%s\","
                       "locality=\"loopback/interop/\"} %s" % (CLUSTER_AB, m.group(1) if m else "-"))
        lines = self.xdsd_log() or []
        lrs = [ln for ln in lines if "(LRS from " in ln and
               "node '%s': reporting load" % self.node_id in ln]
        self.tap.point(bool(lrs), "the client opened StreamLoadStats as node %s (rule M1)"
                       % self.node_id, lrs[:1] or ["no 'reporting load' line"])

    def check_loads_bound(self):
        """--loads, once the client stopped: xdsd counted no more RPCs
        than the client made. The client makes one at a time; the one
        under way when it was stopped is reported as issued, but it never
        printed an answer for it."""
        got, _ = self.reported()
        res = self.client.snapshot()
        self.tap.point(got is not None and got <= len(res) + 1,
                       "xdsd counts no more RPCs than the client made (%s reported, %d "
                       "answered, and at most one under way when it stopped)"
                       % (got, len(res)))

    def check_refused(self):
        """--tls: a second client, whose certificate is valid but whose
        identity no rule allows for its node, gets nothing: xdsd ends its
        ADS stream with PERMISSION_DENIED before sending anything, and
        says so in its log."""
        ident = SPIFFE + TLS_REFUSED
        node_id = "interop-%s-refused-%d" % (self.client_kind, os.getpid())
        server_uri, opts, creds = self.client_server(TLS_REFUSED)
        boot = self.write_bootstrap("bootstrap-refused.json", node_id, server_uri, creds=creds)
        cmd = self.client_cmd + ["--count", "1", "--first-deadline", str(INTRUDER_DEADLINE)] + opts + [TARGET]
        rc, why = None, []
        try:
            with open(self.path("refused.out"), "w") as out, \
                    open(self.path("refused.log"), "w") as err:
                rc = subprocess.run(spawn_prefix() + cmd, env=self.client_env_for(boot),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    timeout=INTRUDER_WAIT).returncode
        except subprocess.TimeoutExpired:
            why.append("the client did not exit within %.0f s" % INTRUDER_WAIT)
        except OSError as e:
            why.append(str(e))
        results = []
        try:
            with open(self.path("refused.out")) as f:
                for line in f:
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(obj, dict) and "seq" in obj:
                        results.append(obj)
        except OSError:
            pass
        refused_log = [ln for ln in tail(self.path("refused.log"), 100000)]
        diag = ["client (%s) exited with status %s; its RPCs: %s"
                % (self.path("refused.log"), rc, results or "none")] + \
            self.sidecar_diag() + ["  " + ln for ln in refused_log[-15:]]

        # xdsd refused the node and said why
        needle = "identity '%s' may not speak for node id '%s' cluster '%s'" % (
            ident, node_id, NODE_CLUSTER)
        end = time.monotonic() + 5
        lines = []
        while time.monotonic() < end:
            lines = [ln for ln in self.xdsd_log() or [] if needle in ln]
            if lines:
                break
            time.sleep(0.1)
        self.tap.point(bool(lines) and " warn: " in lines[0],
                       "a client whose identity no rule allows (%s, as node '%s') "
                       "is refused: xdsd warns \"%s\"" % (ident, node_id, needle[:40] + "..."),
                       lines[:1] or why + ["no such line in xdsd's log"] + diag
                       + self.xdsd_log_tail())

        # ... and sent it nothing; the client's one RPC failed
        sent = [ln for ln in self.xdsd_log() or []
                if "node '%s'" % node_id in ln and ": sending " in ln]
        good = [r for r in results if r.get("ok")]
        ok = not why and rc == 0 and len(results) == 1 and not good and not sent
        self.tap.point(ok, "the refused client gets nothing: xdsd sent its stream no "
                       "response, and its RPC failed (%s)"
                       % ("; ".join("%s: %s" % (r.get("code"), (r.get("details") or "")[:80])
                                    for r in results if not r.get("ok")) or "-"),
                       [] if ok else why + ["xdsd sent it: %s" % sent[:3]] + diag)

        # the client saw its ADS stream end with PERMISSION_DENIED: its
        # trace holds the status xdsd sent (code 7) with xdsd's message
        status_pat = re.compile(r"(status[=: ]+7\b|code[=: ]+7\b|PERMISSION_DENIED|"
                                r"code = PermissionDenied)")
        seen = [ln for ln in refused_log if "may not speak for node id '%s'" % node_id in ln
                and status_pat.search(ln)]
        self.tap.point(bool(seen), "its ADS stream ended with PERMISSION_DENIED and xdsd's "
                       "message, as the client's own trace shows",
                       [seen[0][:400]] if seen else
                       ["no line with the status and 'may not speak for' in %s"
                        % self.path("refused.log")] + diag)

    @staticmethod
    def stop_proc(p, results):
        """Closes a client's stdin (its signal to stop) and waits: its
        exit status, None when it had to be killed."""
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            rc = p.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            rc = None
        if rc is None:
            p.kill()
            p.wait()
        results.thread.join(5)
        return rc

    def stop_client(self):
        """Closes the client's stdin (its signal to stop) and waits."""
        rc = self.stop_proc(self.client_proc, self.client)
        done = [e for _, e in self.client.events if e.get("event") == "done"]
        ok = rc == 0 and bool(done)
        self.tap.point(ok, "the client stops cleanly when asked (status %s)" % rc,
                       [] if ok else ["status %s (None: killed after %.0f s), done line: %s"
                                      % (rc, STOP_TIMEOUT, bool(done))]
                       + self.client_log_tail())

    def check_rpcs(self, started):
        res = self.client.snapshot() if started else []
        fails = [r for _, r in res if not r.get("ok")]
        # grpc-go 1.85's own race at the route's move (docs/protocol.md,
        # rule A2): it hands the new route to its calls before its
        # cluster manager has the new cluster, whatever xdsd sends. One
        # such call, naming exactly the cluster the route moved to, is
        # told apart and checked on its own line; any other failure, or
        # more than one of these, fails.
        race = []
        if self.client_kind == "go":
            race = [r for r in fails
                    if r.get("code") == "UNAVAILABLE" and str(r.get("details", ""))
                    == 'unknown cluster selected for RPC: "cluster:%s"' % CLUSTER_C]
            fails = [r for r in fails if r not in race]
        oks = len(res) - len(fails) - len(race)
        ok = oks > 0 and not fails
        span = (res[-1][0] - self.client.events[0][0]) if res else 0
        why = []
        if not res:
            why.append("the client completed no RPC")
        elif not oks:
            why.append("no RPC succeeded")
        why += summarize_failures(fails)
        self.tap.point(ok, "no RPC failed during the whole run (%d RPCs, %d failed, over %.1f s%s)"
                       % (len(res), len(fails), span,
                          "; and %d of grpc-go's own race, below" % len(race) if race else ""),
                       why)
        if self.client_kind == "go":
            self.tap.point(len(race) <= 1,
                           "grpc-go's own race at the route's move (rule A2) failed at most "
                           "one call, for the new cluster %s (%d)" % (CLUSTER_C, len(race)),
                           summarize_failures(race))

    def check_xdsd_log(self):
        lines = self.xdsd_log()
        if lines is None:
            self.tap.point(False, "the client sent no NACK", ["xdsd.log is missing"])
            self.tap.point(False, "xdsd logged no error", ["xdsd.log is missing"])
            return
        # xdsd logs each NACK as "NACK of <type> version ..." (a rollout's
        # lines count NACKs too, "0 NACKs", and are no NACK themselves)
        nacks = [ln for ln in lines if "NACK of " in ln]
        self.tap.point(not nacks, "the client sent no NACK (xdsd logged %d)" % len(nacks),
                       nacks[:10])
        errors = [ln for ln in lines if " error: " in ln]
        self.tap.point(not errors, "xdsd logged no error (%d lines)" % len(errors), errors[:10])
        # Rule L2: gRPC C-core announces wrapped SotW resources (under its
        # own feature name, xds.config.resource-in-sotw) and is sent them;
        # grpc-js-xds announces nothing of the kind and is sent plain ones.
        wrapped = [ln for ln in lines if ", resources wrapped" in ln]
        want = CLIENTS[self.client_kind]["wrapped"]
        self.tap.point(bool(wrapped) == want,
                       "the client is sent SotW resources %s (rule L2)"
                       % ("wrapped in Resource" if want else "unwrapped"),
                       wrapped[:3] or ["no ', resources wrapped' line in xdsd's log"])
        if XDSTP:
            self.check_xdstp_requests()

    def check_xdstp_requests(self):
        """Rule X1: the client asked for its listener by the xdstp name its
        template makes, and for the route configuration by the name the
        listener gave (gRPC sends it with its parameters sorted, which is
        the name xdsd serves): the RPCs above prove it was answered."""
        if asked_pattern(self.client_kind, ROUTE) is None:
            return
        try:
            with open(self.path("client.log"), errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
        for name in (listener_name(), ROUTE):
            pat = asked_pattern(self.client_kind, name)
            found = re.search(pat, text) is not None
            self.tap.point(found, "the client subscribed to %s" % name,
                           [] if found else
                           ["no /%s/ in the client's xDS trace (client.log)" % pat])

    def stop_xdsd(self):
        p = self.xdsd_proc
        if p.poll() is not None:
            return self.tap.point(False, "xdsd exits 0 on SIGTERM",
                                  ["xdsd had already exited with status %s" % p.returncode]
                                  + self.xdsd_log_tail())
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
            p.kill()
            p.wait()
        why = [] if rc == 0 else (["still running 10 s after SIGTERM: killed"] if rc is None
                                  else []) + self.xdsd_log_tail()
        return self.tap.point(rc == 0, "xdsd exits 0 on SIGTERM (status %s)" % rc, why)

    # --- the whole run ----------------------------------------------------
    def run(self):
        if not self.setup_work():
            return
        if self.tls and not self.make_certs():
            return
        if not self.check_grpcio():
            return
        if not self.prepare_client():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if not self.start_backends():
            return
        if not self.start_xdsd():
            return
        if ERRORS:
            self.scenario_errors()
            self.check_xdsd_log()
            self.stop_xdsd()
            return
        started = self.start_client()
        if started:
            self.check_ads_stream()
            if ROLLOUT:
                self.scenario_rollout()
            elif LOADS:
                self.scenario_loads()
            else:
                self.scenario()
            if self.tls:
                self.check_refused()
        self.stop_client()
        if LOADS and started:
            self.check_loads_bound()
        self.check_rpcs(started)
        self.check_xdsd_log()
        self.stop_xdsd()

    def cleanup(self):
        """Stops whatever is still running; safe to call at any point."""
        signal.alarm(0)
        for p in (self.client_proc, self.other_proc, self.xdsd_proc):
            if p is not None and p.poll() is None:
                if p is not self.xdsd_proc and p.stdin:
                    try:
                        p.stdin.close()
                    except OSError:
                        pass
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for server, _ in self.backends.values():
            server.stop(0)
        for car in self.sidecars:
            car.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--client", choices=sorted(CLIENTS), required=True)
    ap.add_argument("--tls", action="store_true",
                    help="over mutual TLS, with an authorize rule (and a refused client)")
    ap.add_argument("--xdstp", action="store_true",
                    help="every resource named by an xdstp:// name, the client federating")
    ap.add_argument("--rollout", action="store_true",
                    help="a staged rollout: the client a canary, a second one not")
    ap.add_argument("--errors", action="store_true",
                    help="per-resource errors: listeners xdsd lacks or withholds")
    ap.add_argument("--loads", action="store_true",
                    help="load reports: the cluster names xdsd as its LRS server")
    args = ap.parse_args()
    if args.xdstp:
        xdstp_names(CLIENTS[args.client]["sorts"])
    if args.rollout:
        global ROLLOUT
        ROLLOUT = True
    if args.errors:
        global ERRORS
        ERRORS = True
    if args.loads:
        global LOADS
        LOADS = True
    tap = Tap()
    tap.comment(["interop with the %s xDS client: %s%s" % (
        args.client, CLIENTS[args.client]["what"], ", over mutual TLS" if args.tls else "")
        + (", with xdstp:// names" if args.xdstp else "")
        + (", in a staged rollout" if args.rollout else "")
        + (", per-resource errors" if args.errors else "")
        + (", load reports" if args.loads else "")])

    def on_alarm(*_):
        raise Timeout()

    def on_term(signum, _):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    signal.signal(signal.SIGINT, on_term)
    it = Interop(args, tap)
    try:
        it.run()
    except Timeout:
        tap.point(False, "the scenario finished within %d s" % OVERALL_TIMEOUT,
                  it.client_diag() + it.xdsd_log_tail() if it.work else [])
    except SystemExit:
        tap.point(False, "the test ran to its end", ["interrupted by a signal"])
    except Exception as e:  # a bug here must still read as TAP
        import traceback
        tap.point(False, "the driver ran without an exception",
                  traceback.format_exc().splitlines())
        del e
    finally:
        it.cleanup()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
