#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Failover: xDS clients behind a TCP balancer outlive the xdsd replica they are on.

In network namespaces of its own (tests/interop/README.md, "Failover"):

  LB namespace    etcd, haproxy (TCP mode, "balance first": every
                  connection to replica A while it is up), the backends
                  A and B, this driver and its clients;
  A, B            one xdsd replica each, on 10.200.1.2 and 10.200.2.2,
                  reached over a veth pair from the LB namespace; both
                  take their snapshot from the same etcd prefix.

haproxy checks each replica with the gRPC health check of README.md
("Running several replicas": the tcp-check lines after
"<!-- haproxy-health -->", read from the README itself), and connects
to replica A from 10.200.1.3 and to B from 10.200.2.3:
the replicas allow one connection per address
(max_connections_per_address: 1) and list those two addresses in
trusted_proxies, so the clients through the balancer are served while a
second direct connection from an untrusted address is refused.

The clients: those --clients names (interop.py's kinds; default
python,node: gRPC C-core's xDS client from Debian's python3-grpcio and
@grpc/grpc-js-xds), each calling a backend through xds:/// every 100 ms,
and a delta ADS client in this driver that keeps the versions it holds.

  1. all are on replica A (its log names their nodes, from the
     balancer's address), RPCs reach backend A;
  2. replica A is killed (SIGKILL): haproxy marks it down, each client
     is back on replica B through the balancer, no RPC fails, and the
     delta client, back with initial_resource_versions, is sent none of
     the resources it holds;
  3. replica A is started again and haproxy marks it up once its health
     check passes (SERVING: it serves etcd's snapshot); the snapshot in etcd moves the
     endpoints to backend B: both replicas serve the same new version,
     the RPCs move to backend B and the delta client gets that one
     resource;
  4. no RPC failed, no NACK and no error in the replicas' logs, the
     clients stop when asked and the replicas exit 0 on SIGTERM.

Prints TAP. Needs root (ip netns), etcd, haproxy and what the clients
need (node/npm; the venv, go, a JDK and Maven for the others). Takes
XDSD, XDSD_BUILDDIR, XDSD_SCHEMA and XDSD_SRCDIR like interop.py; work
files go to $XDSD_BUILDDIR/tests/interop/failover.work (with other
--clients: failover-KIND-KIND....work). --netns PREFIX
names the namespaces PREFIX-lb, PREFIX-a and PREFIX-b (default
xdsd-fo-<pid>); they and every process started in them are gone when it
exits, on failure too.
"""
import argparse
import ctypes
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import interop  # noqa: E402 (after the path it needs)
from interop import ClientResults, Tap, spawn_prefix, summarize_failures, tail  # noqa: E402

LISTENER, TARGET = interop.LISTENER, interop.TARGET
ROUTE, CLUSTER = interop.ROUTE, interop.CLUSTER_AB

NET = {"a": "10.200.1", "b": "10.200.2"}   # <net>.1 LB side, .2 the replica, .3 haproxy
XDS_PORT = 18000         # every replica, and haproxy on 127.0.0.1 in LB
ETCD_PORT, ETCD_PEER = 2379, 2380
PREFIX = "/xdsd/failover/"
RPC_INTERVAL_MS = 100
FIRST_DEADLINE = 18.0
WAIT = 15.0              # for any one step: generous, the machine is shared
START_WAIT = 20.0        # for the clients' first answers (node starts slowly)
SETTLE = 1.0             # RPCs must stay on a backend this long
OVERALL_TIMEOUT = 60     # the scenario, after npm
CLONE_NEWNET = 0x40000000

URL = "type.googleapis.com/envoy.config."
TYPES = [  # (type URL, the one name the delta client subscribes to)
    (URL + "listener.v3.Listener", LISTENER),
    (URL + "route.v3.RouteConfiguration", ROUTE),
    (URL + "cluster.v3.Cluster", CLUSTER),
    (URL + "endpoint.v3.ClusterLoadAssignment", CLUSTER),
]
EDS = TYPES[3][0]
# Subscribed beside each real name: xdsd reports at once that it does
# not exist (rule D8: in removed_resources), so the answer to each
# request is seen to come.
PROBE_NAME = "failover-no-such-resource"
DEFAULT_CLIENTS = ["python", "node"]
DELTA_ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources"


def readme_health_check(srcdir):
    """The `option tcp-check` and `tcp-check` lines of README.md's
    haproxy backend (after "<!-- haproxy-health -->"), as written."""
    lines, armed, inside = [], False, False
    with open(os.path.join(srcdir, "README.md")) as f:
        for ln in f.read().splitlines():
            if ln == "<!-- haproxy-health -->":
                armed = True
            elif armed and not inside and ln.startswith("```"):
                inside = True
            elif inside and ln == "```":
                break
            elif inside and (ln.startswith("  tcp-check ") or ln == "  option tcp-check"):
                lines.append(ln)
    return lines


def ip(*args):
    """Runs ip(8); returns its error output, "" on success."""
    try:
        p = subprocess.run(["ip"] + list(args), capture_output=True, text=True,
                           timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        return "ip %s: %s" % (" ".join(args), e)
    if p.returncode == 0:
        return ""
    return "ip %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip())


class Netns:
    """The balancer's namespace and one per replica (`nets`: replica ->
    its /24, NET by default), a veth pair from the first to each."""

    def __init__(self, prefix, nets=None):
        self.nets = nets or NET
        self.name = {k: "%s-%s" % (prefix, k) for k in ["lb"] + list(self.nets)}
        self.made = []

    def create(self):
        """Returns the first error, "" once everything is up."""
        for ns in self.name.values():
            err = ip("netns", "add", ns)
            if err:
                return err
            self.made.append(ns)
            err = ip("-n", ns, "link", "set", "lo", "up")
            if err:
                return err
        lb = self.name["lb"]
        for r, net in self.nets.items():
            dev = "to-" + r
            steps = [
                ("-n", lb, "link", "add", dev, "type", "veth", "peer", "name", "eth0",
                 "netns", self.name[r]),
                ("-n", lb, "addr", "add", net + ".1/24", "dev", dev),
                ("-n", lb, "addr", "add", net + ".3/24", "dev", dev),
                ("-n", lb, "link", "set", dev, "up"),
                ("-n", self.name[r], "addr", "add", net + ".2/24", "dev", "eth0"),
                ("-n", self.name[r], "link", "set", "eth0", "up"),
            ]
            for s in steps:
                err = ip(*s)
                if err:
                    return err
        return ""

    def enter(self, key):
        """Moves this process (while it has one thread) into a namespace:
        every thread and child it makes afterwards lives there."""
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open("/run/netns/" + self.name[key], os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                return "setns %s: %s" % (self.name[key], os.strerror(ctypes.get_errno()))
        finally:
            os.close(fd)
        return ""

    def exec_in(self, key):
        return ["ip", "netns", "exec", self.name[key]]

    def destroy(self):
        """Kills whatever still runs in the namespaces (but this process)
        and deletes them."""
        for ns in self.made:
            try:
                out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                                     text=True, timeout=20).stdout.split()
            except (OSError, subprocess.SubprocessError):
                out = []
            for pid in out:
                if pid.isdigit() and int(pid) != os.getpid():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except OSError:
                        pass
        for ns in reversed(self.made):
            ip("netns", "del", ns)
        self.made = []


class Process:
    """A child with its output in a file of the work directory."""

    def __init__(self, what, cmd, log):
        self.what, self.log = what, log
        with open(log, "w") as f:
            self.proc = subprocess.Popen(spawn_prefix() + cmd, stdin=subprocess.DEVNULL,
                                         stdout=f, stderr=subprocess.STDOUT)

    def alive(self):
        return self.proc.poll() is None

    def lines(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            return []

    def tail(self, n=25):
        noise = re.compile(r"debug: grpc: ")
        return ["%s log (%s), last lines:" % (self.what, self.log)] + \
            ["  " + ln for ln in tail(self.log, n, noise)]

    def wait_line(self, pred, timeout):
        """The first line pred() accepts, within timeout; None if none
        came or the process exited."""
        end = time.monotonic() + timeout
        while True:
            hits = [ln for ln in self.lines() if pred(ln)]
            if hits:
                return hits[0]
            if not self.alive() or time.monotonic() >= end:
                return None
            time.sleep(0.1)

    def kill(self, sig=signal.SIGKILL):
        if self.alive():
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


class DeltaClient:
    """A delta ADS client (grpcio, xdsd's descriptor set) on one channel
    to `target`, as node `node_id`: subscribes to each of TYPES' names
    and PROBE_NAME, ACKs every response and keeps the version of each
    resource it holds. When its stream ends it opens another one at
    once, which waits for the channel to connect again, and subscribes
    anew with initial_resource_versions = what it holds (rule D7).
    Everything it receives is kept in `got`, per stream."""

    def __init__(self, schema, target, node_id):
        import grpc
        self.grpc = grpc
        self.schema = schema
        self.node_id = node_id
        self.req_cls = schema.cls("envoy.service.discovery.v3.DeltaDiscoveryRequest")
        self.resp_cls = schema.cls("envoy.service.discovery.v3.DeltaDiscoveryResponse")
        # a connection of its own, not shared with other channels
        self.channel = grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        self.call_fn = self.channel.stream_stream(DELTA_ADS)
        self.cond = threading.Condition()
        self.held = {t: {} for t, _ in TYPES}    # type -> name -> version
        self.streams = []   # per stream: {"start", "ended", "status", "got": [...]}
        self.call = None
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _requests(self, q):
        while True:
            item = q.get()
            if item is None:
                return
            yield item

    def _request(self, type_url, **kw):
        req = self.req_cls(type_url=type_url, **kw)
        return req.SerializeToString()

    def _run(self):
        while True:
            with self.cond:
                if self.stopping:
                    return
                st = {"start": time.monotonic(), "ended": None, "status": None, "got": []}
                self.streams.append(st)
                held = {t: dict(v) for t, v in self.held.items()}
                self.cond.notify_all()
            q = queue.Queue()
            for i, (type_url, name) in enumerate(TYPES):
                kw = {"resource_names_subscribe": [name, PROBE_NAME],
                      "initial_resource_versions": held[type_url]}
                if i == 0:
                    kw["node"] = {"id": self.node_id, "cluster": interop.NODE_CLUSTER}
                q.put(self._request(type_url, **kw))
            call = self.call_fn(self._requests(q), wait_for_ready=True)
            with self.cond:
                self.call = call
                if self.stopping:
                    call.cancel()
            status = "ended by the server"
            try:
                for raw in call:
                    r = self.resp_cls.FromString(raw)
                    rec = {"t": time.monotonic(), "type": r.type_url, "bytes": len(raw),
                           "resources": [(x.name, x.version, x.HasField("resource"),
                                          x.resource.ByteSize()) for x in r.resources],
                           "removed": list(r.removed_resources), "msg": r}
                    with self.cond:
                        held_t = self.held.setdefault(r.type_url, {})
                        for name, version, has_body, _ in rec["resources"]:
                            if has_body:
                                held_t[name] = version
                        for name in rec["removed"]:
                            held_t.pop(name, None)
                        st["got"].append(rec)
                        self.cond.notify_all()
                    q.put(self._request(r.type_url, response_nonce=r.nonce))
            except self.grpc.RpcError as e:
                status = "%s: %s" % (e.code().name, e.details())
            q.put(None)
            with self.cond:
                st["ended"], st["status"] = time.monotonic(), status
                self.cond.notify_all()

    def wait(self, pred, timeout):
        return interop.wait_for(self.cond, pred, timeout)

    def holds_all(self):
        """True once every name of TYPES is held (lock held)."""
        return True if all(name in self.held[t] for t, name in TYPES) else None

    def answered(self, k):
        """The responses of stream k once each type's request was
        answered (each carries the PROBE_NAME notice); lock held."""
        if k >= len(self.streams):
            return None
        got = self.streams[k]["got"]
        seen = {rec["type"] for rec in got if PROBE_NAME in rec["removed"]}
        return list(got) if all(t in seen for t, _ in TYPES) else None

    def answered_since(self, first):
        """The index of the first stream from `first` on whose requests
        were all answered; None if none yet (lock held)."""
        for k in range(first, len(self.streams)):
            if self.answered(k) is not None:
                return k
        return None

    def describe(self):
        with self.cond:
            out = []
            for k, st in enumerate(self.streams):
                out.append("delta stream %d: %d responses, %s" % (
                    k + 1, len(st["got"]),
                    "open" if st["ended"] is None else "ended (%s)" % st["status"]))
                for rec in st["got"][-6:]:
                    out.append("  %s: %s removed %s" % (
                        rec["type"].rsplit(".", 1)[-1],
                        ", ".join("%s%s" % (n, "@" + v if body else " (no such resource)")
                                  for n, v, body, _ in rec["resources"]) or "-",
                        rec["removed"] or "-"))
            return out

    def stop(self):
        with self.cond:
            self.stopping = True
            if self.call is not None:
                self.call.cancel()
        self.thread.join(5)
        self.channel.close()


def delta_once(schema, target, type_url, name, timeout):
    """One delta stream to `target` subscribed to `name`: (response,
    None) or (None, why)."""
    import grpc
    req = schema.cls("envoy.service.discovery.v3.DeltaDiscoveryRequest")(
        type_url=type_url, resource_names_subscribe=[name],
        node={"id": "failover-probe", "cluster": interop.NODE_CLUSTER})
    resp_cls = schema.cls("envoy.service.discovery.v3.DeltaDiscoveryResponse")
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
        call = ch.stream_stream(DELTA_ADS)(iter([req.SerializeToString()]), timeout=timeout)
        try:
            for raw in call:
                call.cancel()
                return resp_cls.FromString(raw), None
            return None, "the stream ended without a response"
        except grpc.RpcError as e:
            return None, "%s: %s" % (e.code().name, e.details())


class Failover(interop.Interop):
    def __init__(self, args, tap):
        super().__init__(argparse.Namespace(client="python", tls=False, xdstp=False, rollout=False), tap)
        self.kinds = args.clients
        self.run_name = "failover" if self.kinds == DEFAULT_CLIENTS else \
            "failover-" + "-".join(self.kinds)
        self.netns = Netns(args.netns or "xdsd-fo-%d" % os.getpid())
        self.procs = {}         # etcd, haproxy, a, b -> Process
        self.replica_logs = []  # every replica's Process, the killed one too
        self.clients = {}       # kind -> (Popen, ClientResults, node id)
        self.commands = {}      # kind -> (command, environment)
        self.delta = None
        self.schema_obj = None
        self.pid = os.getpid()

    # --- the network ------------------------------------------------------
    def make_netns(self):
        err = self.netns.create()
        if not err:
            err = self.netns.enter("lb")
        return self.tap.point(
            not err, "network namespaces %s with veth pairs %s.0/24, %s.0/24 (balancer at .3 "
            "of each, replica at .2)" % (", ".join(self.netns.name.values()), NET["a"], NET["b"]),
            [] if not err else [err, "this test needs root and network namespaces "
                                "(ip netns add); it cannot run here"])

    def etcdctl(self, *args, stdin=None):
        p = subprocess.run(["etcdctl", "--endpoints=127.0.0.1:%d" % ETCD_PORT,
                            "--dial-timeout=3s", "--command-timeout=5s"] + list(args),
                           input=stdin, capture_output=True, text=True, timeout=20,
                           env=dict(os.environ, ETCDCTL_API="3"))
        return p.returncode, (p.stdout + p.stderr).strip()

    def start_etcd(self):
        urls = ",".join("http://%s:%d" % (a, ETCD_PORT)
                        for a in ["127.0.0.1"] + [n + ".1" for n in NET.values()])
        peer = "http://127.0.0.1:%d" % ETCD_PEER
        self.procs["etcd"] = Process("etcd", [
            "etcd", "--name", "default", "--data-dir", self.path("etcd"),
            "--listen-client-urls", urls, "--advertise-client-urls",
            "http://127.0.0.1:%d" % ETCD_PORT, "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer, "--initial-cluster", "default=" + peer],
            self.path("etcd.log"))
        end, out = time.monotonic() + WAIT, ""
        while time.monotonic() < end and self.procs["etcd"].alive():
            rc, out = self.etcdctl("endpoint", "health")
            if rc == 0:
                break
            time.sleep(0.2)
        else:
            return self.tap.point(False, "etcd answers on %s" % urls,
                                  [out, "etcd %s (is etcd-server installed?)" %
                                   ("exited" if not self.procs["etcd"].alive() else
                                    "not healthy within %.0f s" % WAIT)]
                                  + self.procs["etcd"].tail())
        return self.tap.point(True, "etcd answers on %s" % urls)

    def put_snapshot(self, backend):
        """The snapshot, its endpoints at backend `backend`, into etcd."""
        text = interop.snapshot_yaml(CLUSTER, [(CLUSTER, self.backends[backend][1])])
        with open(self.path("snapshot-%s.yaml" % backend), "w") as f:
            f.write(text)
        rc, out = self.etcdctl("put", PREFIX + "default.yaml", stdin=text)
        return self.tap.point(rc == 0, "etcdctl put %sdefault.yaml (endpoints at backend %s)"
                              % (PREFIX, backend), [] if rc == 0 else [out])

    # --- replicas and the balancer -----------------------------------------
    def replica_addr(self, r):
        return "%s.2:%d" % (NET[r], XDS_PORT)

    def start_replica(self, r, run):
        cfg = self.path("xdsd-%s.yaml" % r)
        with open(cfg, "w") as f:
            f.write("listen: %s\nadmin_listen: 127.0.0.1:0\nlog_level: debug\n"
                    "source: etcd\nwatch_delay: 100ms\n"
                    "etcd:\n  endpoints: ['%s.1:%d']\n  prefix: %s\n  dial_timeout: 1s\n"
                    "# one connection per address, but from the balancer\n"
                    "max_connections_per_address: 1\n"
                    "trusted_proxies: [%s]\n"
                    % (self.replica_addr(r), NET[r], ETCD_PORT, PREFIX,
                       ", ".join(n + ".3" for n in NET.values())))
            if self.schema:
                f.write("schema: %s\n" % self.schema)
        p = Process("replica %s" % r.upper(), self.netns.exec_in(r) + [self.xdsd, "-c", cfg],
                    self.path("xdsd-%s-%d.log" % (r, run)))
        self.procs[r] = p
        self.replica_logs.append(p)
        line = p.wait_line(lambda ln: "serving the snapshots of etcd prefix" in ln, WAIT)
        trusted = p.wait_line(lambda ln: "trusted proxies" in ln and
                              all(n + ".3" in ln for n in NET.values()), 1)
        ok = line is not None and trusted is not None
        return self.tap.point(ok, "replica %s%s on %s (namespace %s) serves etcd prefix %s, "
                              "trusting the balancer's addresses"
                              % (r.upper(), " (again)" if run > 1 else "", self.replica_addr(r),
                                 self.netns.name[r], PREFIX),
                              [line, trusted] if ok else
                              ["serving line: %s, trusted_proxies line: %s; replica %s"
                               % (line, trusted, "exited with status %s" % p.proc.returncode
                                  if not p.alive() else "running")] + p.tail())

    def start_haproxy(self):
        cfg = self.path("haproxy.cfg")
        with open(cfg, "w") as f:
            f.write("global\n  maxconn 256\n"
                    "defaults\n  mode tcp\n  timeout connect 2s\n"
                    "  timeout client 10m\n  timeout server 10m\n"
                    "  retries 3\n  option redispatch\n"
                    "frontend xds\n  bind 127.0.0.1:%d\n  default_backend replicas\n"
                    "# every connection to A while A is up\n"
                    "backend replicas\n  balance first\n" % XDS_PORT)
            check = readme_health_check(self.srcdir)
            if not check:
                return self.tap.point(False, "README.md gives haproxy's gRPC health check")
            f.write("# the gRPC health check of README.md\n" + "\n".join(check) + "\n")
            for r in ("a", "b"):
                f.write("  server %s %s source %s.3 check inter 200ms fall 1 rise 2\n"
                        % (r, self.replica_addr(r), NET[r]))
        p = Process("haproxy", ["/usr/sbin/haproxy", "-db", "-f", cfg], self.path("haproxy.log"))
        self.procs["haproxy"] = p
        end = time.monotonic() + WAIT
        ok = False
        while time.monotonic() < end and p.alive() and not ok:
            try:
                socket.create_connection(("127.0.0.1", XDS_PORT), 1).close()
                ok = True
            except OSError:
                time.sleep(0.1)
        return self.tap.point(ok, "haproxy (TCP mode) on 127.0.0.1:%d in front of both "
                              "replicas, checking them by gRPC health" % XDS_PORT,
                              [] if ok else p.tail())

    def haproxy_says(self, r, state, count):
        """haproxy's log says `count` times that replica r is `state`
        (UP, DOWN), within WAIT; said as a TAP point."""
        p = self.procs["haproxy"]
        needle = "Server replicas/%s is %s" % (r, state)
        end = time.monotonic() + WAIT
        while True:
            hits = [ln for ln in p.lines() if needle in ln]
            if len(hits) >= count or time.monotonic() >= end or not p.alive():
                break
            time.sleep(0.1)
        # up again only by a health check that passed: the README's
        # tcp-check found SERVING (layer 7), not just an open port
        ok = len(hits) >= count and (state != "UP" or "Layer7 check passed" in hits[-1])
        return self.tap.point(ok, "haproxy marks replica %s %s by its gRPC health check%s"
                              % (r.upper(), state.lower(),
                                 ": " + hits[-1].split(": ", 1)[-1].strip() if hits else ""),
                              [] if ok else p.tail(10))

    def check_limit(self):
        """The per-address limit holds for an address that is not trusted:
        a second direct connection to replica B from the LB side is
        refused. So only trusted_proxies lets the clients through."""
        first = DeltaClient(self.schema_obj, self.replica_addr("b"), "failover-direct-1")
        got = first.wait(first.holds_all, WAIT)
        resp, why = (None, "the first connection was not served") if not got else \
            delta_once(self.schema_obj, self.replica_addr("b"), EDS, CLUSTER, WAIT)
        first.stop()
        ok = resp is None and why is not None and "max_connections_per_address" in why
        return self.tap.point(ok, "without trusted_proxies the limit holds: a second direct "
                              "connection to replica B from %s.1 is refused" % NET["b"],
                              [why] if ok else ["second connection: %s" % (why or "served")]
                              + first.describe())

    # --- clients -------------------------------------------------------------
    def start_clients(self):
        self.delta = DeltaClient(self.schema_obj, "127.0.0.1:%d" % XDS_PORT,
                                 "failover-delta-%d" % self.pid)
        ok = True
        for kind in self.kinds:
            node_id = "failover-%s-%d" % (kind, self.pid)
            boot = self.write_bootstrap("bootstrap-%s.json" % kind, node_id,
                                        "127.0.0.1:%d" % XDS_PORT, kind)
            cmd, env = self.commands[kind]
            env = dict(os.environ, GRPC_XDS_BOOTSTRAP=boot, **env)
            with open(self.path("%s.log" % kind), "w") as err:
                proc = subprocess.Popen(
                    spawn_prefix() + cmd + ["--first-deadline", str(FIRST_DEADLINE),
                                            "--interval-ms", str(RPC_INTERVAL_MS), TARGET],
                    env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
            self.clients[kind] = (proc, ClientResults(proc, self.path("%s.out" % kind)), node_id)
        end = time.monotonic() + START_WAIT   # all start at once
        for kind, (proc, res, node_id) in self.clients.items():
            i = res.first_answer("A", 0, 0, max(0.1, end - time.monotonic()))
            with res.cond:
                started = res.events[0][1].get("client", "") if res.events else ""
            version = interop.CLIENTS[kind]["version"]
            good = i is not None and re.search(version, started) is not None
            ok &= self.tap.point(good, "the %s client (%s, node %s) calls backend A through "
                                 "%s every %d ms" % (kind, started or "?", node_id, TARGET,
                                                     RPC_INTERVAL_MS),
                                 [] if good else ["its start line must match /%s/" % version]
                                 + self.client_why(kind))
        got = self.delta.wait(self.delta.holds_all, WAIT)
        ok &= self.tap.point(bool(got), "the delta client holds the listener, route "
                             "configuration, cluster and endpoints",
                             [] if got else self.delta.describe())
        return ok

    def client_why(self, kind):
        proc, res, _ = self.clients[kind]
        out = ["%s client: %d RPCs, %d failed; %s" % (
            kind, len(res.snapshot()), len(res.failures()),
            "running" if proc.poll() is None else "exited %s" % proc.poll())]
        out += ["  " + s for s in summarize_failures(res.failures())]
        out += ["%s client stderr (%s), last lines:" % (kind, self.path(kind + ".log"))]
        return out + ["  " + ln for ln in tail(self.path(kind + ".log"), 15)]

    def node_ids(self):
        return [c[2] for c in self.clients.values()] + [self.delta.node_id]

    def streams_on(self, r, timeout=WAIT):
        """The clients' nodes whose streams replica r logs as coming
        from the balancer's address, within timeout."""
        peer = "%s.3:" % NET[r]
        p = self.procs[r]
        end = time.monotonic() + timeout
        while True:
            lines = [ln for ln in p.lines() if peer in ln]
            found = {n for n in self.node_ids() if any("node '%s'" % n in ln for ln in lines)}
            if len(found) == len(self.node_ids()) or time.monotonic() >= end:
                return found
            time.sleep(0.1)

    def rpcs_stay(self, who, since):
        """Over SETTLE seconds after now, and at least three RPCs of each
        client since `since` (however long those take on a loaded
        machine), each client's RPCs are all answered by `who`."""
        time.sleep(SETTLE)
        ok = True
        for kind, (_, res, _) in self.clients.items():
            res.wait_count(3, not_before=since, timeout=WAIT)
            done = [t for t, r in res.snapshot() if t >= since]
            got = [r for t, r in res.snapshot() if t >= since]
            bad = [r for r in got if not r.get("ok") or r.get("who") != who]
            good = len(got) >= 3 and not bad
            gap = max(b - a for a, b in zip([since] + done, done)) if done else 0
            ok &= self.tap.point(good, "the %s client keeps calling backend %s (%d RPCs in the "
                                 "last %.1f s, none failed, at most %.1f s apart)"
                                 % (kind, who, len(got), time.monotonic() - since, gap),
                                 [] if good else ["answers: %s" % ", ".join(
                                     r.get("who") or r.get("code", "?") for r in got[-10:])]
                                 + self.client_why(kind))
        return ok

    # --- the scenario -------------------------------------------------------------
    def failover(self):
        on_a = self.streams_on("a")
        n = len(self.node_ids())
        self.tap.point(len(on_a) == n, "all %d clients are on replica A, from the balancer's "
                       "address %s.3 (%s)" % (n, NET["a"], ", ".join(sorted(on_a))),
                       [] if len(on_a) == n else
                       ["missing: %s" % sorted(set(self.node_ids()) - on_a)]
                       + self.procs["a"].tail())
        with self.delta.cond:
            held_before = {t: dict(v) for t, v in self.delta.held.items()}
        t_kill = time.monotonic()
        self.procs["a"].kill()
        self.tap.comment(["replica A killed (SIGKILL)"])
        self.haproxy_says("a", "DOWN", 1)

        on_b = self.streams_on("b", timeout=2 * WAIT)
        ok = self.tap.point(len(on_b) == n, "each client is back, through the balancer, on "
                            "replica B (%s), all %.1f s after the kill (at most %.0f s)"
                            % (", ".join(sorted(on_b)), time.monotonic() - t_kill, 2 * WAIT),
                            [] if len(on_b) == n else
                            ["missing: %s" % sorted(set(self.node_ids()) - on_b)]
                            + self.delta.describe() + self.procs["b"].tail()
                            + self.procs["haproxy"].tail(5))

        if ok:
            self.rpcs_stay("A", t_kill)
        # The answers to the four requests of its new stream, and
        # whatever else came on it until now (a while later: the RPCs
        # above took SETTLE). A first attempt may meet the balancer
        # before its health check has marked A down (the socket closes,
        # nothing is answered) and the client opens its stream again:
        # what counts is what every stream since the kill was sent.
        k = self.delta.wait(lambda: self.delta.answered_since(1), WAIT)
        with self.delta.cond:
            streams = list(self.delta.streams)
            got = [rec for st in streams[1:] for rec in st["got"]]
        resent = [(rec["type"].rsplit(".", 1)[-1], n, size) for rec in got
                  for n, _, body, size in rec["resources"] if body]
        held = sum(len(v) for v in held_before.values())
        good = k is not None and not resent and held == len(TYPES)
        why = []
        if k is None:
            why.append("its requests were not all answered within %.0f s" % WAIT)
        if resent:
            why.append("re-sent: " + ", ".join("%s %s (%d bytes)" % x for x in resent))
        self.tap.point(good, "the delta client, back with initial_resource_versions of the %d "
                       "resources it holds, is sent none of them: %d resources, %d bytes of "
                       "resources (%d responses of %d bytes in all on %d stream%s since the kill: "
                       "the not-found notices of %s)"
                       % (held, len(resent), sum(x[2] for x in resent), len(got),
                          sum(rec["bytes"] for rec in got), len(streams) - 1,
                          "" if len(streams) == 2 else "s", PROBE_NAME),
                       why + ["held before: %s" % held_before] + self.delta.describe()
                       + self.procs["b"].tail(10) if not good else [])
        return ok

    def follow(self):
        since = time.monotonic()
        if not self.put_snapshot("B"):
            return False
        port_b = self.backends["B"][1]
        versions = {}
        for r in ("a", "b"):
            end, seen = time.monotonic() + WAIT, None
            while time.monotonic() < end:
                resp, why = delta_once(self.schema_obj, self.replica_addr(r), EDS, CLUSTER, 5)
                if resp is not None and resp.resources and resp.resources[0].HasField("resource"):
                    cla = self.schema_obj.cls("envoy.config.endpoint.v3.ClusterLoadAssignment")()
                    resp.resources[0].resource.Unpack(cla)
                    ports = [e.endpoint.address.socket_address.port_value
                             for loc in cla.endpoints for e in loc.lb_endpoints]
                    seen = "version %s, endpoints at ports %s" % (resp.resources[0].version, ports)
                    if ports == [port_b]:
                        versions[r] = resp.resources[0].version
                        break
                else:
                    seen = why or "no resource"
                time.sleep(0.2)
            self.tap.point(r in versions, "replica %s serves the new endpoints (backend B, port "
                           "%d): %s" % (r.upper(), port_b, seen),
                           [] if r in versions else ["within %.0f s" % WAIT] + self.procs[r].tail())
        same = len(versions) == 2 and versions["a"] == versions["b"]
        self.tap.point(same, "both replicas serve it under the same version (%s)"
                       % ", ".join("%s: %s" % (r.upper(), v) for r, v in sorted(versions.items())))

        for kind, (_, res, _) in self.clients.items():
            i = res.first_answer("B", 0, since, WAIT)
            self.tap.point(i is not None, "the %s client's RPCs move to backend B" % kind,
                           [] if i is not None else self.client_why(kind))
        self.rpcs_stay("B", time.monotonic())

        def new_eds():
            for st in self.delta.streams[1:]:
                for rec in st["got"]:
                    if rec["t"] >= since and rec["type"] == EDS and any(body for _, _, body, _ in rec["resources"]):
                        return rec
            return None
        rec = self.delta.wait(new_eds, WAIT)
        names = [(n, v) for n, v, body, _ in rec["resources"] if body] if rec else []
        good = names == [(CLUSTER, versions.get("b"))]
        self.tap.point(good, "the delta client is sent that one resource, %s version %s"
                       % (CLUSTER, versions.get("b")),
                       [] if good else ["got: %s" % names] + self.delta.describe())

    def stop_all(self):
        for kind, (proc, res, _) in self.clients.items():
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                rc = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
                rc = "killed after 10 s"
            res.thread.join(5)
            fails = res.failures()
            self.tap.point(rc == 0, "the %s client stops when asked (status %s)" % (kind, rc))
            self.tap.point(not fails and res.snapshot(), "no RPC of the %s client failed (%d RPCs, "
                           "%d failed)" % (kind, len(res.snapshot()), len(fails)),
                           summarize_failures(fails))
        self.delta.stop()
        lines = []
        for p in self.replica_logs:
            lines += [(p.log, ln) for ln in p.lines()]
        nacks = ["%s: %s" % x for x in lines if "NACK" in x[1]]
        errors = ["%s: %s" % x for x in lines if " error: " in x[1]]
        balancer = re.compile(r"from ipv4:(%s)\.3:" % "|".join(re.escape(n) for n in NET.values()))
        refused = ["%s: %s" % x for x in lines if " refused" in x[1] and balancer.search(x[1])]
        self.tap.point(not nacks, "no client sent a NACK (%d)" % len(nacks), nacks[:5])
        self.tap.point(not errors, "no replica logged an error (%d)" % len(errors), errors[:5])
        self.tap.point(not refused, "no stream through the balancer was refused (%d)"
                       % len(refused), refused[:5])
        for r in ("a", "b"):
            rc = self.procs[r].kill(signal.SIGTERM)
            self.tap.point(rc == 0, "replica %s exits 0 on SIGTERM (status %s)" % (r.upper(), rc),
                           [] if rc == 0 else self.procs[r].tail())

    def run(self):
        if not self.setup_work():
            return
        # npm, pip, go and Maven may need the network: before the netns
        prepared = True
        for kind in self.kinds:
            if self.prepare_client(kind):
                self.commands[kind] = (self.client_cmd, self.client_env)
            else:
                prepared = False
        if not prepared or not self.make_netns():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if not self.check_grpcio():
            return
        from xds_schema import Schema
        self.schema_obj = Schema(self.schema or os.path.join(self.builddir, "proto", "xds-api.pb"))
        if not (self.start_backends() and self.start_etcd() and self.put_snapshot("A")):
            return
        if not (self.start_replica("a", 1) and self.start_replica("b", 1) and self.start_haproxy()):
            return
        self.check_limit()
        if not self.start_clients():
            return
        if not self.failover():
            return
        if not self.start_replica("a", 2):
            return
        self.haproxy_says("a", "UP", 1)
        self.follow()
        self.stop_all()

    def cleanup(self):
        signal.alarm(0)
        if self.delta is not None:
            self.delta.stop()
        for proc, _, _ in self.clients.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for p in self.procs.values():
            p.kill()
        for server, _ in self.backends.values():
            server.stop(0)
        self.netns.destroy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--netns", help="prefix of the namespaces' names")
    ap.add_argument("--clients", default=",".join(DEFAULT_CLIENTS),
                    help="the kinds of interop.py's clients to run (default %(default)s)")
    args = ap.parse_args()
    args.clients = args.clients.split(",")
    unknown = [k for k in args.clients if k not in interop.CLIENTS]
    if unknown or len(set(args.clients)) != len(args.clients):
        ap.error("--clients: each of %s at most once" % ", ".join(sorted(interop.CLIENTS)))
    tap = Tap()
    tap.comment(["failover: two xdsd replicas on one etcd prefix behind haproxy; "
                 "%s and a delta client" % ", ".join(interop.CLIENTS[k]["what"]
                                                     for k in args.clients)])

    def on_alarm(*_):
        raise interop.Timeout()

    def on_term(signum, _):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, on_term)
    f = Failover(args, tap)
    try:
        f.run()
    except interop.Timeout:
        tap.point(False, "the scenario finished within %d s" % OVERALL_TIMEOUT,
                  [ln for p in f.procs.values() for ln in p.tail(8)])
    except SystemExit:
        tap.point(False, "the test ran to its end", ["interrupted by a signal"])
    except Exception:  # a bug here must still read as TAP
        import traceback
        tap.point(False, "the driver ran without an exception",
                  traceback.format_exc().splitlines())
    finally:
        f.cleanup()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
