# SPDX-License-Identifier: Apache-2.0
"""Two xdsd replicas on one etcd prefix behind haproxy, in network
namespaces of a test's own: what tests/interop/failover.py (gRPC's xDS
clients) and envoy_failover.py (real Envoys) share. See
tests/interop/README.md, "Failover".

  LB namespace    etcd, haproxy (TCP mode, "balance first": every
                  connection to replica A while it is up), the test and
                  the clients it runs;
  A, B            one xdsd replica each, on 10.200.1.2 and 10.200.2.2,
                  reached over a veth pair from the LB namespace; both
                  take their snapshot from the same etcd prefix.

haproxy connects to replica A from 10.200.1.3 and to B from 10.200.2.3;
the replicas allow one connection per address
(max_connections_per_address: 1) and list those two addresses in
trusted_proxies.

`Replicas` is a mixin: the test class gives it `tap` (interop.Tap),
`path(name)` (a file of its work directory), `netns` (a Netns),
`procs` ({} of Process: etcd, haproxy, a, b), `replica_logs` ([] of
every replica's Process), `xdsd` and `schema` (the binary and the
descriptor set, "" for the built-in one), `prefix` (the etcd key
prefix of the snapshots) and `node_ids()` (its clients' nodes). Standard library only, so that Debian's
python3 and the venv's both run it.
"""
import ctypes
import os
import re
import signal
import socket
import subprocess
import time

from interop import spawn_prefix, tail

NET = {"a": "10.200.1", "b": "10.200.2"}   # <net>.1 LB side, .2 the replica, .3 haproxy
XDS_PORT = 18000         # every replica, and haproxy on 127.0.0.1 in LB
ETCD_PORT, ETCD_PEER = 2379, 2380
WAIT = 15.0              # for any one step: generous, the machine is shared
CLONE_NEWNET = 0x40000000


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
    """The three namespaces and the two veth pairs between them."""

    def __init__(self, prefix):
        self.name = {k: "%s-%s" % (prefix, k) for k in ("lb", "a", "b")}
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
        for r, net in NET.items():
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


class Replicas:
    """etcd, the replicas and haproxy, started as the steps of a test
    (each one TAP point); see the module's comment for what the class
    that mixes it in provides."""

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
                    % (self.replica_addr(r), NET[r], ETCD_PORT, self.prefix,
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
                                 self.netns.name[r], self.prefix),
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
        return self.tap.point(ok, "haproxy (TCP mode) on 127.0.0.1:%d in front of both replicas"
                              % XDS_PORT, [] if ok else p.tail())

    def streams_on(self, r, timeout=WAIT):
        """The clients' nodes (node_ids()) whose streams replica r logs
        as coming from the balancer's address, within timeout."""
        peer = "%s.3:" % NET[r]
        p = self.procs[r]
        end = time.monotonic() + timeout
        while True:
            lines = [ln for ln in p.lines() if peer in ln]
            found = {n for n in self.node_ids() if any("node '%s'" % n in ln for ln in lines)}
            if len(found) == len(self.node_ids()) or time.monotonic() >= end:
                return found
            time.sleep(0.1)
