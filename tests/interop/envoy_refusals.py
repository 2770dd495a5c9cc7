# SPDX-License-Identifier: Apache-2.0
"""Interop: what a real Envoy refuses although xdsd's schema accepts it.

Every field of each change below is valid Envoy API, so `xdsd --check`
passes it; Envoy's own checks, which run when it builds a listener,
route table or cluster, refuse it. The operator must see that refusal
(xdsd's log, `xdsctl clients --nacked`, CSDS and /metrics, each with
Envoy's message), and Envoy must keep serving what it ran before.

  1. Backends A and B answer HTTP with their names. xdsd (no rollout)
     serves one snapshot per Envoy (keyed by its node cluster: each has
     a listener port of its own) from examples/envoy/snapshots/
     default.yaml; two Envoys, one over state-of-the-world ADS and one
     over delta ADS, carry a request loop each to backend A.
  2. Four changes Envoy refuses, one after the other, each applied to
     both snapshots and then taken back:
       LDS  listener ingress with two filter chains that match the same
            connections;
       LDS  ingress's HTTP filters ending in a filter that is not
            terminal (buffer, without the router);
       RDS  route configuration main with two virtual hosts for "*";
       CDS  cluster web with a ring hash whose minimum size exceeds its
            maximum.
     For each, and each Envoy: xdsd logs the NACK with Envoy's message;
     /clients shows that type NACKed with it and every other synced;
     `xdsctl clients --nacked` lists the node with the message; CSDS
     shows the node's resources of that type NACKED with the message in
     error_state; /metrics counts the NACKs (xdsd_nacks_total); Envoy's
     update_rejected counter of the type rose, and it still runs the
     previous resource; its requests keep reaching A without a failure
     (and never show the refused listener's server_name). Taking the
     change back puts both Envoys in step again: their config dumps
     equal xdsd's, versions included, every type synced.
  3. xdsd restarts with `rollout:` (canaries: node ids *-canary-*, a
     bake of ROLLOUT_BAKE s, require_canary: any); both Envoys reconnect, and a third, the
     canary, starts.
       A change Envoy takes (web's endpoints to B) reaches the canary
       first and the others only once it is promoted: xdsd sends them
       nothing before its "promoted" line, and then their requests move.
       A change the canary refuses (a listener "extra" added, ingress
       with duplicate filter chains): the canary NACKs, the rollout
       fails at once and rolls back (the canary runs the previous
       listeners again, "extra" gone); xdsctl rollout status and
       /metrics say failed, with the NACK; the other two Envoys are sent
       nothing at all, their config dumps (sampled all along) never hold
       "extra", and their requests never fail.
  4. No request failed over the whole run; every Envoy exits 0, xdsd too.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
refusals.sh); needs XDSD, XDSCTL and XDSD_BUILDDIR (work files in
$XDSD_BUILDDIR/tests/interop/envoy-refusals.work, kept), XDSD_SCHEMA when
set, and Debian's python3 with grpcio and protobuf for the CSDS client.
"""
import copy
import os
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap, run_scenario, summarize_failures  # noqa: E402
import envoy_harness as eh  # noqa: E402
from envoy_traffic import ENVOY_VERSION, by_name, move_endpoints  # noqa: E402

START_TIMEOUT = 30
WAIT = 20               # a NACK, a move, a sync: from the SIGHUP
UNDER_LOAD = 10         # requests each loop completes in each state
INTERVAL = 0.05
ROLLOUT_BAKE = 1.0
OVERALL_TIMEOUT = 300
CANARY = "*-canary-*"
TYPE_URL = {
    "listeners": "type.googleapis.com/envoy.config.listener.v3.Listener",
    "routes": "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
    "clusters": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
}
# Envoy's counter of the updates of each type it refused
REJECTED = {
    "listeners": "listener_manager.lds.update_rejected",
    "routes": "http.ingress.rds.main.update_rejected",
    "clusters": "cluster_manager.cds.update_rejected",
}
REFUSED_SERVER = "xdsd-refused"


def hcm(snap):
    return by_name(snap["listeners"], "ingress")["filter_chains"][0]["filters"][0]["typed_config"]


def duplicate_chains(s):
    """Two filter chains with the same (empty) match: Envoy cannot tell
    which one a connection takes."""
    hcm(s)["server_name"] = REFUSED_SERVER
    lis = by_name(s["listeners"], "ingress")
    lis["filter_chains"].append(copy.deepcopy(lis["filter_chains"][0]))


def non_terminal_last(s):
    """The HTTP filter chain ends in buffer: nothing would answer."""
    h = hcm(s)
    h["server_name"] = REFUSED_SERVER
    h["http_filters"] = [{
        "name": "envoy.filters.http.buffer",
        "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters.http."
                                  "buffer.v3.Buffer", "max_request_bytes": 65536}}]


def two_wildcards(s):
    """A second virtual host for "*" in front of the first."""
    by_name(s["routes"], "main")["virtual_hosts"].insert(0, {
        "name": "refused", "domains": ["*"],
        "routes": [{"match": {"prefix": "/"}, "direct_response": {"status": 503}}]})


def ring_too_small(s):
    """A ring hash whose minimum size is above its maximum."""
    web = by_name(s["clusters"], "web")
    web["lb_policy"] = "RING_HASH"
    web["ring_hash_lb_config"] = {"minimum_ring_size": 4096, "maximum_ring_size": 1024}


# (what, section, xdsd's short type name, the change, Envoy's message)
CASES = [
    ("LDS, listener ingress with two filter chains of the same match", "listeners", "LDS",
     duplicate_chains, "has the same matching rules defined as"),
    ("LDS, ingress's HTTP filters end in buffer, not in a terminal filter", "listeners",
     "LDS", non_terminal_last, "non-terminal filter named envoy.filters.http.buffer"),
    ("RDS, route configuration main with two virtual hosts for *", "routes", "RDS",
     two_wildcards, "Only a single wildcard domain is permitted in route main"),
    ("CDS, cluster web with minimum_ring_size above maximum_ring_size", "clusters", "CDS",
     ring_too_small, "ring hash: minimum_ring_size (4096) > maximum_ring_size (1024)"),
]


class Member:
    """One Envoy of the fleet: its node, its snapshot key, its listener
    port, its request loop and what xdsd served it (Steps)."""

    def __init__(self, name, api):
        self.name, self.api = name, api
        self.delta = api == "DELTA_GRPC"
        self.key = "refuse-" + name
        self.node_id = "refuse-%s-%d" % (name, os.getpid())
        self.port = eh.free_port()
        self.snap = None
        self.envoy = None
        self.loop = None
        self.steps = eh.Steps()


class Scenario(eh.Ending):
    def __init__(self, tap):
        self.tap = tap
        self.work = None
        self.backends = {}
        self.xdsd = None
        self.daemons = []       # every xdsd of the run, for their logs
        self.members = []

    # --- helpers --------------------------------------------------------
    def diag(self, members=None):
        out = []
        for m in members or self.members:
            if m.loop:
                res = m.loop.snapshot()
                fails = [r for r in res if not r["ok"]]
                out.append("loop of %s: %d requests, %d failed; last: %s" % (
                    m.name, len(res), len(fails),
                    " ".join(str(r["who"] if r["ok"] else r["code"]) for r in res[-8:])))
                out += ["  " + s for s in summarize_failures(fails)]
            if m.envoy:
                out += m.envoy.log_tail(10)
        if self.xdsd:
            out += self.xdsd.log_tail(20)
        return out

    def write(self):
        for m in self.members:
            self.xdsd.write_snapshot(m.snap, m.key)

    def reload(self, what, change, record=True):
        """change(snapshot) on every member's snapshot, SIGHUP; records
        the step of each unless the change is one Envoy refuses. Returns
        (log length before it, SIGHUP time) or None."""
        for m in self.members:
            change(m.snap)
        self.write()
        t = time.monotonic()
        ok, line, mark = self.xdsd.reload()
        if not self.tap.point(ok, "%s: xdsd takes the change (its schema accepts it)" % what,
                              [line] + ([] if ok else self.xdsd.log_tail())):
            return None
        if record:
            for m in self.members:
                m.steps.add(self.xdsd, mark, m.key)
        return mark, t

    def differences(self, m):
        try:
            want = m.steps.expected_versions(m.node_id, m.delta)
            return eh.differences(m.envoy.config(), self.xdsd.dump(m.key), want)
        except (OSError, ValueError, KeyError) as e:
            return ["cannot read a config dump: %s" % e]

    def in_step(self, what, members=None):
        """Each member's Envoy holds exactly what xdsd serves it, and
        /clients shows every type synced; one point per member."""
        ok = True
        for m in members or self.members:
            same = eh.wait_until(lambda: not self.differences(m), WAIT, 0.2)

            def synced():
                st = eh.type_states(self.xdsd, m.node_id)
                return bool(st) and all(t["state"] == "synced" for t in st.values())
            sync = eh.wait_until(synced, WAIT, 0.1)
            why = ([] if same else self.differences(m)[:10]) + \
                ([] if sync else ["/clients: %s" % {k: v["state"] for k, v in
                                                    eh.type_states(self.xdsd, m.node_id).items()}])
            ok &= self.tap.point(same and sync, "%s: %s Envoy (%s) holds exactly xdsd's "
                                 "resources at xdsd's versions, every type synced"
                                 % (what, m.name, m.api), why + (self.diag([m]) if why else []))
        return ok

    def served_on(self, members, since, server=None):
        """Each loop completes UNDER_LOAD more requests from now; all of
        them since `since` reached backend A (and none through a listener
        named `server`). One point."""
        now = time.monotonic()
        why = []
        for m in members:
            if not m.loop.count(now, UNDER_LOAD, WAIT):
                why.append("%s: fewer than %d requests within %d s" % (m.name, UNDER_LOAD, WAIT))
            res = m.loop.snapshot(since)
            bad = [r for r in res if not r["ok"] or (server and r.get("server") == server)]
            if bad:
                why.append("%s: %d of %d requests failed or came through the refused "
                           "listener" % (m.name, len(bad), len(res)))
                why += ["  " + s for s in summarize_failures(bad)]
        return why

    # --- the run ----------------------------------------------------------
    def setup(self):
        got = eh.prepare(self.tap, "envoy-refusals")
        if got is None:
            return False
        self.work, binary, self.envoy_path = got
        self.xdsd = eh.Xdsd(binary, os.environ.get("XDSD_SCHEMA", ""), self.work,
                            port=eh.free_port())
        self.daemons.append(self.xdsd)
        return True

    def add_member(self, name, api):
        m = Member(name, api)
        m.snap = eh.fleet_snapshot(m.port, self.backends["A"])
        self.members.append(m)
        return m

    def start_member(self, m):
        m.envoy = eh.Envoy(self.envoy_path, self.work, "envoy-" + m.name, m.node_id,
                           self.xdsd.port, m.api, cluster=m.key)
        ok, why = eh.start_ready(m.envoy, START_TIMEOUT)
        who = ok and eh.first_answer(m.port, START_TIMEOUT)
        if not self.tap.point(who == "A", "%s Envoy (%s, node %s) is ready and its listener "
                              "on port %d reaches backend A" % (m.name, m.api, m.node_id, m.port),
                              why + (["answered by %r" % who] if ok else []) + self.diag([m])):
            return False
        m.loop = eh.Traffic(m.name, m.port, "/", self.backends, INTERVAL).start()
        return True

    def start(self):
        for name in ("A", "B"):
            self.backends[name] = eh.Backend(name)
        self.add_member("sotw", "GRPC")
        self.add_member("delta", "DELTA_GRPC")
        self.write()
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves a snapshot per Envoy (keys %s) on 127.0.0.1:%s"
                              % (", ".join(m.key for m in self.members), self.xdsd.port), why):
            return False
        for m in self.members:
            m.steps.add(self.xdsd, 0, m.key)
        return all([self.start_member(m) for m in self.members]) and self.in_step("at start")

    def refuse(self, what, section, short, change, message):
        saved = {m.name: copy.deepcopy(m.snap) for m in self.members}
        try:
            rejected0 = {m.name: m.envoy.stats().get(REJECTED[section], 0) for m in self.members}
            nacks0 = eh.metric(eh.metrics(self.xdsd), "xdsd_nacks_total", type=section)
        except (OSError, ValueError) as e:
            return self.tap.point(False, "%s: Envoy's /stats and xdsd's /metrics answer" % what,
                                  [str(e)])
        got = self.reload(what, change, record=False)
        if got is None:
            return False
        mark, t = got

        # xdsd's log: the NACK of each Envoy, with Envoy's own words
        for m in self.members:
            # (wait_until takes an empty list for an answer: "or None")
            lines = eh.wait_until(lambda: eh.nack_lines(self.xdsd, m.node_id, short, mark)
                                  or None, WAIT, 0.1)
            self.tap.point(bool(lines) and message in lines[0],
                           "%s: the %s Envoy NACKs %s and xdsd logs it with Envoy's message "
                           "(\"%s\")" % (what, m.name, short, message),
                           (lines or ["no NACK of %s by %s within %d s" % (short, m.node_id, WAIT)])
                           [:2] + ([] if lines else self.diag([m])))

        # /clients: that type NACKed with the message, the others synced
        for m in self.members:
            def nacked():
                st = eh.type_states(self.xdsd, m.node_id)
                t = st.get(section, {})
                return st if t.get("state") == "nacked" and \
                    message in ((t.get("last_nack") or {}).get("message") or "") else None
            st = eh.wait_until(nacked, WAIT, 0.1) or eh.type_states(self.xdsd, m.node_id)
            others = {k: v["state"] for k, v in st.items() if k != section and v["state"] != "synced"}
            self.tap.point(nacked() is not None and not others,
                           "%s: /clients shows the %s Envoy's %s NACKed with that message, "
                           "every other type synced" % (what, m.name, section),
                           ["%s: %s" % (section, st.get(section)), "not synced: %s" % others])

        # xdsctl clients --nacked: both nodes, with the message
        rc, out = eh.xdsctl(self.xdsd, "clients", "--nacked")
        missing = [m.node_id for m in self.members if m.node_id not in out]
        self.tap.point(rc == 0 and not missing and "%s NACKed at " % section in out
                       and message in out,
                       "%s: `xdsctl clients --nacked` lists both Envoys, with \"%s NACKed at "
                       "...: %s\"" % (what, section, message),
                       ["exit status %s; missing %s" % (rc, missing)] + out.splitlines()[:12])

        # CSDS: the node's resources of the type NACKED, the message in error_state
        doc, why = eh.csds(self.xdsd)
        for m in self.members:
            cfgs = (doc or {}).get(m.node_id, {}).get(TYPE_URL[section], [])
            refused = [g for g in cfgs if g.get("client_status") == "NACKED"
                       and message in ((g.get("error_state") or {}).get("details") or "")]
            self.tap.point(bool(refused), "%s: CSDS shows the %s Envoy's %s NACKED (%s), with "
                           "Envoy's message in error_state" % (
                               what, m.name, section,
                               ", ".join(g.get("name", "?") for g in refused) or "none"),
                           [why] if why else ["%s: %s" % (g.get("name"), g.get("client_status"))
                                              for g in cfgs][:6])

        # /metrics counts them
        try:
            nacks = eh.metric(eh.metrics(self.xdsd), "xdsd_nacks_total", type=section)
        except (OSError, ValueError) as e:
            nacks = None
            self.tap.comment(["/metrics: %s" % e])
        self.tap.point(nacks is not None and nacks >= nacks0 + len(self.members),
                       "%s: /metrics xdsd_nacks_total{type=\"%s\"} rose by at least %d "
                       "(%s to %s)" % (what, section, len(self.members), nacks0, nacks))

        # Envoy refused it, runs the previous resource, and serves on
        for m in self.members:
            try:
                rejected = m.envoy.stats().get(REJECTED[section], 0)
                cfg = m.envoy.config()[section]
            except (OSError, ValueError) as e:
                self.tap.point(False, "%s: the %s Envoy's admin answers" % (what, m.name), [str(e)])
                continue
            prev = saved[m.name][section]
            name = {"listeners": "ingress", "routes": "main", "clusters": "web"}[section]
            runs = cfg["resources"].get(name, {}).get("resource")
            # xdsd's dump of the previous step has the previous resource
            # as Envoy shows it (proto3 JSON of the same descriptors)
            want = m.steps.steps[-1][2][section]["resources"][name]["resource"]
            ok = rejected > rejected0[m.name] and runs == want
            self.tap.point(ok, "%s: the %s Envoy counts the update rejected (%s %d -> %d) and "
                           "still runs the previous %s '%s'" % (
                               what, m.name, REJECTED[section], rejected0[m.name], rejected,
                               section[:-1], name),
                           [] if ok else ["runs %s" % str(runs)[:300], "previous %s" % str(want)[:300],
                                          "(the snapshot had %d %s)" % (len(prev), section)])
        why = self.served_on(self.members, t, REFUSED_SERVER)
        self.tap.point(not why, "%s: both Envoys serve on with the previous configuration "
                       "(%d requests each, all from backend A)" % (what, UNDER_LOAD),
                       why + (self.diag() if why else []))

        # taken back: in step again
        for m in self.members:
            m.snap = saved[m.name]
        what_back = "%s, taken back" % what.split(",")[0]
        if self.reload(what_back, lambda s: None) is None:
            return False
        return self.in_step(what_back)

    def refusals(self):
        for what, section, short, change, message in CASES:
            if not self.refuse(what, section, short, change, message):
                return False
        return True

    # --- the staged rollout ------------------------------------------------
    def restart_with_rollout(self):
        what = "xdsd restarted with rollout: (canaries %s, bake %.1f s)" % (CANARY, ROLLOUT_BAKE)
        rc = self.xdsd.stop()
        if not self.tap.point(rc == 0, "%s: the first xdsd exits 0 on SIGTERM" % what,
                              [] if rc == 0 else self.xdsd.log_tail()):
            return False
        old = self.xdsd
        self.xdsd = eh.Xdsd(old.binary, old.schema, self.work, port=old.port, name="xdsd-rollout",
                            # each Envoy has a snapshot key of its own and
                            # only the canary's has a canary: one canary's
                            # ACK proves the change (require_canary: any)
                            config="rollout:\n  canary: ['%s']\n  bake: %dms\n"
                            "  require_canary: any\n"
                            % (CANARY, int(ROLLOUT_BAKE * 1000)))
        self.daemons.append(self.xdsd)
        canary = self.add_member("canary", "GRPC")
        self.write()
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "%s: it starts again on port %d" % (what, old.port), why):
            return False
        # the same Steps go on: a restarted xdsd sends a SotW Envoy none
        # of the listeners and clusters it holds (rule S12), so their
        # versions are still the first xdsd's
        for m in self.members:
            m.steps.add(self.xdsd, 0, m.key)
        back = all(eh.wait_until(lambda: bool(eh.type_states(self.xdsd, m.node_id)), 30, 0.1)
                   for m in self.members if m is not canary)
        if not self.tap.point(bool(back), "%s: both Envoys reconnect" % what,
                              [] if back else self.diag()):
            return False
        return self.start_member(canary) and self.in_step(what)

    def logged(self, needle, since):
        """The index of xdsd's first log line from `since` on holding
        `needle`, waiting WAIT s for it; None if none came."""
        def find():
            for i, ln in enumerate(self.xdsd.lines()):
                if i >= since and needle in ln:
                    return i
            return None
        return eh.wait_until(find, WAIT, 0.1)

    def rollout_good(self):
        """A change Envoy takes: the canary first, the others after the bake."""
        what = "rollout 1, web's endpoints moved to B"
        canary = self.members[-1]
        others = self.members[:-1]
        got = self.reload(what, lambda s: move_endpoints(s, "web", self.backends["B"]))
        if got is None:
            return False
        mark, t = got
        first = canary.loop.answer(lambda r: r["who"] == "B", t, WAIT)
        self.tap.point(first is not None, "%s: the canary's requests move to B" % what,
                       [] if first else self.diag([canary]))
        promoted = self.logged("rollout 1 promoted (", mark)
        early = [(i, n) for m in others for i, _, _ in self.xdsd.sent(m.node_id, mark)
                 for n in [m.name] if promoted is None or i < promoted]
        self.tap.point(promoted is not None and not early,
                       "%s: the others are sent nothing until xdsd logs the promotion after "
                       "the bake" % what,
                       (["no promotion logged within %d s" % WAIT] if promoted is None else []) +
                       ["sent %s before it (log line %d)" % (n, i) for i, n in early[:4]])
        moved = all(m.loop.answer(lambda r: r["who"] == "B", t, WAIT) for m in others)
        self.tap.point(moved, "%s: then their requests move to B too" % what,
                       [] if moved else self.diag(others))
        return self.in_step(what)

    def rollout_refused(self):
        """A change the canary refuses: rolled back, the others never see it."""
        what = "rollout 2, listener extra added and ingress given duplicate filter chains"
        canary = self.members[-1]
        others = self.members[:-1]
        try:
            counters0 = {m.name: m.envoy.stats() for m in self.members}
        except (OSError, ValueError) as e:
            return self.tap.point(False, "%s: the Envoys' /stats answer" % what, [str(e)])
        watches = {m.name: eh.Watch(m.envoy) for m in self.members}
        extra_ports = {m.name: eh.free_port() for m in self.members}
        saved = {m.name: copy.deepcopy(m.snap) for m in self.members}
        try:
            for m in self.members:
                lis = copy.deepcopy(by_name(m.snap["listeners"], "ingress"))
                lis["name"] = "extra"
                lis["address"]["socket_address"]["port_value"] = extra_ports[m.name]
                lis["filter_chains"][0]["filters"][0]["typed_config"]["stat_prefix"] = "extra"
                m.snap["listeners"].append(lis)
            got = self.reload(what, duplicate_chains, record=False)
            if got is None:
                return False
            mark, t = got
            failed = self.logged("rollout 2 failed: ", mark)
            line = self.xdsd.lines()[failed] if failed is not None else ""
            nack = eh.nack_lines(self.xdsd, canary.node_id, "LDS", mark)
            self.tap.point(failed is not None and "has the same matching rules" in line
                           and canary.node_id in line and bool(nack),
                           "%s: the canary NACKs, and the rollout fails at once with its node "
                           "and message and rolls back" % what,
                           [line or "no 'rollout 2 failed' line within %d s" % WAIT] + nack[:1]
                           + ([] if failed is not None else self.diag([canary])))
            # back to the previous listeners: "extra" gone from the canary
            for m in self.members:
                m.snap = saved[m.name]

            def rolled_back():
                try:
                    cfg = canary.envoy.config()["listeners"]
                except (OSError, ValueError):
                    return False
                return "extra" not in cfg["resources"] and \
                    eh.type_states(self.xdsd, canary.node_id).get(
                        "listeners", {}).get("state") == "synced"
            back = eh.wait_until(rolled_back, WAIT, 0.1)
            self.tap.point(back, "%s: the canary is served the previous listeners again and "
                           "ACKs them (listener extra gone, listeners synced)" % what,
                           [] if back else self.diag([canary]))
            rc, out = eh.xdsctl(self.xdsd, "rollout", "status")
            try:
                sample = eh.metrics(self.xdsd)
            except (OSError, ValueError):
                sample = {}
            state = eh.metric(sample, "xdsd_rollout_state", state="failed")
            count = eh.metric(sample, "xdsd_rollout_nacks")
            ok = rc == 1 and "failed" in out and canary.node_id in out and \
                "has the same matching rules" in out and state == 1 and count == 1
            self.tap.point(ok, "%s: `xdsctl rollout status` says failed (exit 1) with the "
                           "canary's NACK; /metrics xdsd_rollout_state{state=\"failed\"} %s, "
                           "xdsd_rollout_nacks %s" % (what, state, count),
                           ["exit status %s" % rc] + out.splitlines()[:12])
            why = self.served_on(self.members, t)
        finally:
            for w in watches.values():
                w.stop()
        sent = [(m.name, typ, v) for m in others for _, typ, v in self.xdsd.sent(m.node_id, mark)]
        self.tap.point(not sent, "%s: the Envoys that are no canary were sent nothing "
                       "(xdsd's log)" % what, ["sent %s %s %s" % x for x in sent[:6]])
        # What each Envoy did with listeners meanwhile, by its own
        # counters (complete, where the sampled config dumps may miss a
        # state held for a moment): the canary added extra and removed
        # it again, the others changed nothing at all.
        for m in self.members:
            try:
                now = m.envoy.stats()
            except (OSError, ValueError):
                now = {}
            rose = {k: now.get(k, 0) - counters0[m.name].get(k, 0) for k in (
                "listener_manager.lds.update_attempt", "listener_manager.lds.update_rejected",
                "listener_manager.listener_added", "listener_manager.listener_removed")}
            w = watches[m.name]
            held = w.held(lambda c: "extra" in c["listeners"]["resources"])
            if m is canary:
                ok = rose["listener_manager.listener_added"] == 1 and \
                    rose["listener_manager.listener_removed"] == 1 and \
                    rose["listener_manager.lds.update_rejected"] == 1
                self.tap.point(ok, "%s: the canary's own counters show it added listener extra "
                               "and removed it again, and rejected one update (%s)"
                               % (what, ", ".join("%s +%d" % (k.rsplit(".", 1)[-1], v)
                                                  for k, v in rose.items())),
                               ["its config dump held extra in %d of %d states sampled"
                                % (len(held), len(w.seen))])
                continue
            ok = not held and w.seen and not w.errors and not any(rose.values())
            self.tap.point(ok, "%s: the %s Envoy never held listener extra: not in its config "
                           "dump (%d states sampled, every %.1f s), and its counters of LDS "
                           "updates and listeners added and removed did not move"
                           % (what, m.name, len(w.seen), w.interval),
                           ["held it in %d states; %d unreadable dumps; counters rose: %s"
                            % (len(held), w.errors, rose)])
        self.tap.point(not why, "%s: every Envoy serves on (%d requests each, none failed)"
                       % (what, UNDER_LOAD), why + (self.diag() if why else []))
        # the files as what is served, for a later reload
        self.write()
        return self.in_step("rollout 2, rolled back")

    def checks(self):
        for m in self.members:
            if not m.loop:
                continue
            m.loop.stop()
            res = m.loop.snapshot()
            fails = [r for r in res if not r["ok"]]
            self.tap.point(bool(res) and not fails, "no request through the %s Envoy failed "
                           "(%d requests, %d failed)" % (m.name, len(res), len(fails)),
                           summarize_failures(fails))
        errors = [ln for x in self.daemons for ln in x.lines()
                  if " error: " in ln and " error: rollout 2 failed: " not in ln]
        self.tap.point(not errors, "xdsd logged no error but the failed rollout's (%s)"
                       % ", ".join(os.path.basename(x.log) for x in self.daemons), errors[:5])

    def run(self):
        if not self.setup():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if self.start() and self.refusals() and self.restart_with_rollout() and \
                self.rollout_good():
            self.rollout_refused()
        self.checks()
        self.stop()

    def envoys(self):
        return [(m.name, m) for m in self.members]


def main():
    tap = Tap()
    tap.comment(["what a real Envoy %s refuses although xdsd's schema accepts it, with and "
                 "without a staged rollout" % ENVOY_VERSION])
    return run_scenario(tap, Scenario(tap), OVERALL_TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
