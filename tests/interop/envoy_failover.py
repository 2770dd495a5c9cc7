# SPDX-License-Identifier: Apache-2.0
"""Failover with real Envoys: two xdsd replicas on one etcd prefix
behind haproxy, started by tests/interop/failover.py's own steps, and
Envoys that reach xdsd through the balancer outlive the replica they
are on.

  1. In network namespaces of this test's own: etcd with a snapshot per
     Envoy (examples/envoy/snapshots/default.yaml, its listener port and
     web's endpoints at backend A), replicas A and B serving that
     prefix, haproxy sending every connection to A while A is up. Two
     Envoys, one over state-of-the-world ADS and one over delta ADS,
     whose xds cluster is haproxy: both are on replica A (its log names
     their nodes, from the balancer's address) and their listeners reach
     backend A; a request loop runs through each.
  2. Replica A is killed (SIGKILL) during the loops: each Envoy is back
     on replica B through the balancer (B's log names its node, from
     the balancer's address; Envoy's connected_state is 1 again, on a
     second connection to xdsd), no request through either Envoy fails,
     and replica B sends the delta Envoy, which comes back with
     initial_resource_versions, no resource at all (rule D7) and the
     SotW Envoy none of its listeners and clusters (rule S12); Envoy's
     own counters show no update rejected, and for the delta Envoy no
     listener or cluster update at all.
  3. etcd moves web's endpoints to backend B: both Envoys' requests
     move there, through replica B.
  4. No request failed over the whole run; no replica logged a NACK, an
     error or a refusal of a stream from the balancer; the Envoys exit
     0, replica B too.

Prints TAP. Needs root (ip netns), etcd, haproxy; runs under the interop
venv's python (tests/interop/envoy-failover.sh). Takes XDSD,
XDSD_BUILDDIR and XDSD_SCHEMA like the other interop tests; work files
go to $XDSD_BUILDDIR/tests/interop/envoy-failover.work. --netns PREFIX
names the namespaces PREFIX-lb, PREFIX-a and PREFIX-b; they and every
process started in them are gone when it exits, on failure too.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap, Timeout, summarize_failures  # noqa: E402
import failover as fo  # noqa: E402
from failover import NET, WAIT, XDS_PORT, Netns  # noqa: E402
import envoy_harness as eh  # noqa: E402
from envoy_traffic import ENVOY_VERSION, move_endpoints  # noqa: E402

START_TIMEOUT = 30
INTERVAL = 0.05          # each request loop: 20 requests a second
UNDER_LOAD = 10          # requests each loop completes in each state
OVERALL_TIMEOUT = 120


class Member:
    """One Envoy behind the balancer: its node, snapshot key, listener
    port and request loop."""

    def __init__(self, name, api):
        self.name, self.api = name, api
        self.delta = api == "DELTA_GRPC"
        self.key = "fo-" + name
        self.node_id = "fo-%s-%d" % (name, os.getpid())
        self.port = eh.free_port()
        self.snap = None
        self.envoy = None
        self.loop = None


class EnvoyFailover:
    # The namespaces, etcd, the replicas and haproxy as failover.sh makes
    # them: failover.py's own steps, which need of this object only its
    # tap, netns, procs, replica_logs, xdsd, schema, srcdir, path() and
    # node_ids(). The snapshots go under its etcd prefix.
    make_netns = fo.Failover.make_netns
    etcdctl = fo.Failover.etcdctl
    start_etcd = fo.Failover.start_etcd
    replica_addr = fo.Failover.replica_addr
    start_replica = fo.Failover.start_replica
    start_haproxy = fo.Failover.start_haproxy
    streams_on = fo.Failover.streams_on
    prefix = fo.PREFIX

    def __init__(self, args, tap):
        self.tap = tap
        self.netns = Netns(args.netns or "xdsd-efo-%d" % os.getpid())
        self.procs = {}         # etcd, haproxy, a, b -> failover.Process
        self.replica_logs = []  # every replica's Process, the killed one too
        self.xdsd = os.environ.get("XDSD", "")
        self.schema = os.environ.get("XDSD_SCHEMA", "")
        self.srcdir = eh.SRCDIR
        self.work = None
        self.backends = {}
        self.members = [Member("sotw", "GRPC"), Member("delta", "DELTA_GRPC")]

    def path(self, name):
        return os.path.join(self.work, name)

    def node_ids(self):
        return [m.node_id for m in self.members]

    def diag(self):
        out = []
        for m in self.members:
            if m.loop:
                res = m.loop.snapshot()
                fails = [r for r in res if not r["ok"]]
                out.append("loop of %s: %d requests, %d failed; last: %s" % (
                    m.name, len(res), len(fails),
                    " ".join(str(r["who"] if r["ok"] else r["code"]) for r in res[-8:])))
                out += ["  " + s for s in summarize_failures(fails)]
            if m.envoy:
                out += m.envoy.log_tail(8)
        for p in self.procs.values():
            out += p.tail(8)
        return out

    # --- the run ----------------------------------------------------------
    def setup(self):
        builddir = os.environ.get("XDSD_BUILDDIR", "")
        if not builddir or not self.xdsd or not os.access(self.xdsd, os.X_OK):
            self.tap.point(False, "XDSD and XDSD_BUILDDIR name the build",
                           ["XDSD=%r XDSD_BUILDDIR=%r; run through `make check`"
                            % (self.xdsd, builddir)])
            return False
        self.work = os.path.join(builddir, "tests", "interop", "envoy-failover.work")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        envoy, why = eh.envoy_binary()
        version = ""
        if envoy:
            version = " ".join(subprocess.run([envoy, "--version"], capture_output=True,
                                              text=True, timeout=30).stdout.split())
        ok = envoy is not None and "/%s/" % ENVOY_VERSION in version
        self.envoy_path = envoy
        return self.tap.point(ok, "the venv's Envoy is %s (%s)" % (ENVOY_VERSION, envoy),
                              [why or "envoy --version: %s" % version])

    def put_snapshots(self, what):
        """Every member's snapshot into etcd (the replicas watch the
        prefix, and take the changes of one watch_delay together)."""
        why = []
        for m in self.members:
            text = eh.yaml.safe_dump(m.snap, sort_keys=False)
            with open(self.path("snapshot-%s.yaml" % m.key), "w") as f:
                f.write(text)
            rc, out = self.etcdctl("put", "%s%s.yaml" % (self.prefix, m.key), stdin=text)
            if rc != 0:
                why.append(out)
        return self.tap.point(not why, "etcd gets the snapshots %s (%s)" % (
            ", ".join(m.key for m in self.members), what), why)

    def start_envoys(self):
        ok = True
        for m in self.members:
            m.envoy = eh.Envoy(self.envoy_path, self.work, "envoy-" + m.name, m.node_id,
                               XDS_PORT, m.api, cluster=m.key)
            started, why = eh.start_ready(m.envoy, START_TIMEOUT)
            who = started and eh.first_answer(m.port, START_TIMEOUT)
            ok &= self.tap.point(who == "A", "the %s Envoy (%s, node %s), its xds cluster "
                                 "haproxy on 127.0.0.1:%d, is ready and its listener reaches "
                                 "backend A" % (m.name, m.api, m.node_id, XDS_PORT),
                                 why + ([] if who == "A" else ["answered by %r" % who]))
        if not ok:
            return False
        on_a = self.streams_on("a")
        ok = self.tap.point(len(on_a) == len(self.members),
                            "both Envoys are on replica A, from the balancer's address %s.3"
                            % NET["a"], [] if len(on_a) == len(self.members) else
                            ["missing: %s" % sorted(set(self.node_ids()) - on_a)]
                            + self.procs["a"].tail())
        for m in self.members:
            m.loop = eh.Traffic(m.name, m.port, "/", self.backends, INTERVAL).start()
        return ok

    def failover(self):
        before = {m.name: m.envoy.stats() for m in self.members}
        for m in self.members:
            m.loop.count(time.monotonic(), UNDER_LOAD, WAIT)
        t_kill = time.monotonic()
        self.procs["a"].kill()
        self.tap.comment(["replica A killed (SIGKILL)"])
        on_b = self.streams_on("b", timeout=2 * WAIT)
        ok = self.tap.point(len(on_b) == len(self.members),
                            "each Envoy is back, through the balancer, on replica B (its log "
                            "names the node from %s.3), %.1f s after the kill (at most %.0f s)"
                            % (NET["b"], time.monotonic() - t_kill, 2 * WAIT),
                            [] if len(on_b) == len(self.members) else
                            ["missing: %s" % sorted(set(self.node_ids()) - on_b)] + self.diag())
        if not ok:
            return False

        # Envoy's side: connected again, on a second connection
        def reconnected(m):
            st = m.envoy.stats()
            return st.get("control_plane.connected_state") == 1 and \
                st.get("cluster.xds.upstream_cx_total", 0) >= 2
        for m in self.members:
            back = eh.wait_until(lambda: reconnected(m), WAIT, 0.1)
            st = m.envoy.stats()
            self.tap.point(back, "the %s Envoy is connected again (connected_state %s, "
                           "cluster.xds.upstream_cx_total %s)"
                           % (m.name, st.get("control_plane.connected_state"),
                              st.get("cluster.xds.upstream_cx_total")))

        # traffic went on through the kill, and goes on on replica B
        now = time.monotonic()
        why = []
        for m in self.members:
            if not m.loop.count(now, UNDER_LOAD, WAIT):
                why.append("%s: fewer than %d requests within %.0f s" % (m.name, UNDER_LOAD, WAIT))
            fails = [r for r in m.loop.snapshot(t_kill) if not r["ok"]]
            others = {r["who"] for r in m.loop.snapshot(t_kill) if r["ok"] and r["who"] != "A"}
            if fails or others:
                why.append("%s: %d failed, answers from %s" % (m.name, len(fails), others))
                why += ["  " + s for s in summarize_failures(fails)]
        self.tap.point(not why, "no request through either Envoy failed across the kill, and "
                       "both go on reaching backend A (%d requests each since)" % UNDER_LOAD,
                       why + (self.diag() if why else []))

        # what replica B sent them: nothing they hold
        lines = self.procs["b"].lines()
        for m in self.members:
            sent = eh.sent_resources(lines, m.node_id)
            if m.delta:
                resent = [(t, n) for t, n in sent if n]
                desc = "no resource at all (rule D7: it came back with initial_resource_versions)"
            else:
                resent = [(t, n) for t, n in sent if n and t in ("LDS", "CDS")]
                desc = "none of its listeners and clusters (rule S12)"
            self.tap.point(not resent, "replica B sends the %s Envoy %s (responses: %s)"
                           % (m.name, desc, ", ".join("%s %d" % x for x in sent) or "none"),
                           ["resent: %s" % resent] if resent else [])
        # and Envoy's own counters say the same: update_success counts
        # the responses it took (update_attempt, its requests, moves
        # with the new stream whatever comes)
        for m in self.members:
            after = m.envoy.stats()
            rose = {k: after.get(k, 0) - before[m.name].get(k, 0) for k in after
                    if k.endswith((".update_rejected", ".update_success"))
                    and after.get(k, 0) != before[m.name].get(k, 0)}
            rejected = [k for k in rose if k.endswith(".update_rejected")]
            taken = [k for k in rose if k.endswith(".update_success") and (
                m.delta or k.startswith(("listener_manager.lds.", "cluster_manager.cds.")))]
            self.tap.point(not rejected and not taken,
                           "the %s Envoy's own counters: no update rejected, and %s "
                           "(moved: %s)" % (m.name, "no update taken at all" if m.delta else
                                           "no listener or cluster update taken",
                                           ", ".join("%s +%d" % kv for kv in sorted(rose.items()))
                                           or "none"))
        return True

    def follow(self):
        since = time.monotonic()
        for m in self.members:
            move_endpoints(m.snap, "web", self.backends["B"])
        if not self.put_snapshots("web's endpoints at backend B"):
            return
        for m in self.members:
            r = m.loop.answer(lambda r: r["who"] == "B", since, WAIT)
            self.tap.point(r is not None, "the %s Envoy's requests move to backend B, "
                           "served by replica B" % m.name, [] if r else self.diag())

    def stop_all(self):
        for m in self.members:
            if m.loop:
                m.loop.stop()
                res = m.loop.snapshot()
                fails = [r for r in res if not r["ok"]]
                self.tap.point(bool(res) and not fails, "no request through the %s Envoy "
                               "failed (%d requests, %d failed)" % (m.name, len(res), len(fails)),
                               summarize_failures(fails))
        for m in self.members:
            if m.envoy and m.envoy.proc:
                rc = m.envoy.stop()
                self.tap.point(rc == 0, "the %s Envoy exits 0 on /quitquitquit (status %s)"
                               % (m.name, rc), [] if rc == 0 else m.envoy.log_tail())
        lines = [(p.log, ln) for p in self.replica_logs for ln in p.lines()]
        nacks = ["%s: %s" % x for x in lines if "NACK" in x[1]]
        errors = ["%s: %s" % x for x in lines if " error: " in x[1]]
        balancer = re.compile(r"from ipv4:(%s)\.3:" % "|".join(re.escape(n) for n in NET.values()))
        refused = ["%s: %s" % x for x in lines if " refused" in x[1] and balancer.search(x[1])]
        self.tap.point(not nacks, "no Envoy sent a NACK (%d)" % len(nacks), nacks[:5])
        self.tap.point(not errors, "no replica logged an error (%d)" % len(errors), errors[:5])
        self.tap.point(not refused, "no stream through the balancer was refused (%d)"
                       % len(refused), refused[:5])
        rc = self.procs["b"].kill(signal.SIGTERM)
        self.tap.point(rc == 0, "replica B exits 0 on SIGTERM (status %s)" % rc,
                       [] if rc == 0 else self.procs["b"].tail())

    def run(self):
        if not self.setup() or not self.make_netns():
            return
        signal.alarm(OVERALL_TIMEOUT)
        for name in ("A", "B"):     # in the balancer's namespace, as this test is now
            self.backends[name] = eh.Backend(name)
        for m in self.members:
            m.snap = eh.fleet_snapshot(m.port, self.backends["A"])
        if not (self.start_etcd() and self.put_snapshots("web's endpoints at backend A")):
            return
        if not (self.start_replica("a", 1) and self.start_replica("b", 1)
                and self.start_haproxy()):
            return
        if self.start_envoys() and self.failover():
            self.follow()
        self.stop_all()

    def cleanup(self):
        signal.alarm(0)
        for m in self.members:
            if m.loop:
                m.loop.stop()
            p = m.envoy and m.envoy.proc
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        for p in self.procs.values():
            p.kill()
        for b in self.backends.values():
            b.stop()
        self.netns.destroy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--netns", help="prefix of the namespaces' names")
    args = ap.parse_args()
    tap = Tap()
    tap.comment(["failover with real Envoys %s: two xdsd replicas on one etcd prefix behind "
                 "haproxy, a SotW and a delta Envoy" % ENVOY_VERSION])

    def on_alarm(*_):
        raise Timeout()

    def on_term(signum, _):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, on_term)
    f = EnvoyFailover(args, tap)
    try:
        f.run()
    except Timeout:
        tap.point(False, "the scenario finished within %d s" % OVERALL_TIMEOUT, f.diag())
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
