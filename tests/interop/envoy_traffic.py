# SPDX-License-Identifier: Apache-2.0
"""Interop: a real Envoy takes listeners, routes, clusters and endpoints
from xdsd over ADS (--api GRPC: state of the world; DELTA_GRPC:
incremental) and carries HTTP traffic through every change without a
failed request.

  1. Three HTTP backends on loopback answer with their names A, B, C.
     xdsd serves examples/envoy/snapshots/default.yaml (listener
     "ingress" on a free port, RDS "main", EDS cluster "web" at A); one
     Envoy starts from examples/envoy/bootstrap.yaml. Its requests must
     reach A, and its /config_dump must hold exactly what xdsd serves,
     at xdsd's versions (envoy_harness.differences).
  2. Request loops through Envoy (each every 50 ms, a new connection each)
     run while the snapshot changes, each change a SIGHUP:
       EDS   web's endpoints move from A to B;
       CDS   a cluster "api" (at C) is added and "main" routes /api to it;
       CDS   "api" is replaced by "api-v2" (at A) and removed;
       LDS   a listener "ingress-2" (a port of its own, RDS "second") is
             added, and a loop through it starts once it answers;
       LDS   "ingress" changes in place (its server_name);
     after each, the loops' answers must move as the change says, and
     Envoy's /config_dump must again equal xdsd's, versions included.
  3. Envoy's /stats show no update_rejected, nothing warming, one
     connection to xdsd for the whole run; xdsd logged no NACK and no
     error, and shows Envoy's types synced.
  4. xdsd stops (SIGTERM) and starts again on the same port: Envoy goes
     on serving while it is gone, reconnects, and is sent nothing it
     holds (rules S12 and D7); its config dump still equals xdsd's.
  5. A listener on a port this test holds: Envoy cannot bind it and
     NACKs (rules S4, D9); xdsd logs the NACK with Envoy's reason and
     /clients shows it, Envoy serves on with the other listeners, and
     once the snapshot drops the listener Envoy is in step again.
  6. No request failed over the whole run; both exit 0.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
sotw.sh, envoy-delta.sh); needs XDSD and XDSD_BUILDDIR (work files in
$XDSD_BUILDDIR/tests/interop/envoy-<sotw|delta>.work, kept), XDSD_SCHEMA
when set.
"""
import argparse
import copy
import os
import shutil
import signal
import subprocess
import sys
import time

# the modules beside this one are read from the source tree, which the
# tests leave as they found it
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap, run_scenario, summarize_failures  # noqa: E402
import envoy_harness as eh  # noqa: E402

ENVOY_VERSION = eh.ENVOY_VERSION
START_TIMEOUT = 30      # Envoy's first configuration, from its start
MOVE_TIMEOUT = 20       # a change's effect on traffic, from its SIGHUP (longer
                        # than Envoy's 15 s initial fetch timeout, which
                        # checks() reports by itself)
CONVERGE_TIMEOUT = 15   # Envoy's config_dump equal to xdsd's, after that
OVERALL_TIMEOUT = 240
INTERVAL = 0.05         # each request loop: 20 requests a second
UNDER_LOAD = 10         # requests each loop completes in each state
HCM = ("type.googleapis.com/envoy.extensions.filters.network."
       "http_connection_manager.v3.HttpConnectionManager")


def eds_cluster(name):
    return {"name": name, "type": "EDS", "connect_timeout": "1s",
            "eds_cluster_config": {"eds_config": {"ads": {},
                                                  "resource_api_version": "V3"}}}


def endpoints(name, backend):
    return {"cluster_name": name,
            "endpoints": [{"lb_endpoints": [{"endpoint": {"address": backend.address()}}]}]}


def by_name(items, name, key="name"):
    return [x for x in items if x.get(key) == name][0]


def move_endpoints(snap, cluster, backend):
    """The endpoints of `cluster` become `backend` alone."""
    eps = snap["endpoints"]
    eps[eps.index(by_name(eps, cluster, "cluster_name"))] = endpoints(cluster, backend)


class Scenario(eh.Ending):
    # what a subclass changes: its work directory's name (WORK-<mode>.work)
    # and the types converged() says it compared
    WORK = "envoy"
    WHAT = "listeners, routes, clusters and endpoints"

    def __init__(self, api, tap):
        self.api = api
        self.delta = api == "DELTA_GRPC"
        self.mode = "delta" if self.delta else "sotw"
        self.tap = tap
        self.node_id = "envoy-%s-%d" % (self.mode, os.getpid())
        self.work = None
        self.backends = {}
        self.xdsd = None
        self.envoy = None
        self.loops = []
        self.steps = eh.Steps()
        self.snap = None
        # the snapshot key self.snap is served under (xdsd may serve more)
        self.key = "default"

    # --- helpers --------------------------------------------------------
    def diag(self):
        out = []
        for loop in self.loops:
            res = loop.snapshot()
            fails = [r for r in res if not r["ok"]]
            out.append("loop %s: %d requests, %d failed; last answers: %s" % (
                loop.name, len(res), len(fails),
                " ".join(str(r["who"] if r["ok"] else r["code"]) for r in res[-8:])))
            out += ["  " + s for s in summarize_failures(fails)]
        if self.envoy:
            out += self.envoy.log_tail(20)
        if self.xdsd:
            out += self.xdsd.log_tail(20)
        return out

    def differences(self):
        try:
            xd = self.xdsd.dump(self.key)
            want = self.steps.expected_versions(self.node_id, self.delta)
            return eh.differences(self.envoy.config(), xd, want)
        except (OSError, ValueError) as e:
            return ["cannot read a config dump: %s" % e]

    def converged(self, what):
        """Waits until Envoy holds exactly what xdsd serves, then until
        every request loop completed UNDER_LOAD more requests in that
        state (so each state carries traffic); one point."""
        ok = eh.wait_until(lambda: not self.differences(), CONVERGE_TIMEOUT, 0.2)
        diffs = [] if ok else self.differences()
        now = time.monotonic()
        for loop in self.loops:
            if not loop.count(now, UNDER_LOAD, MOVE_TIMEOUT):
                diffs.append("loop %s:%d%s completed fewer than %d requests in %d s"
                             % (loop.name, loop.port, loop.path, UNDER_LOAD, MOVE_TIMEOUT))
        return self.tap.point(
            not diffs, "%s: Envoy holds exactly xdsd's %s, at xdsd's versions%s" % (
                what, self.WHAT, ", and carries %d requests per loop so" % UNDER_LOAD
                if self.loops else ""),
            diffs[:12] + (self.diag() if diffs else []))

    def reload(self, what, change):
        """Applies change(snapshot), writes it, SIGHUP; records the step.
        Returns the time of the SIGHUP, or None (with a failed point)."""
        change(self.snap)
        self.xdsd.write_snapshot(self.snap, self.key)
        t = time.monotonic()
        ok, line, mark = self.xdsd.reload()
        if not ok:
            self.tap.point(False, "%s: xdsd reloads on SIGHUP" % what,
                           [line] + self.xdsd.log_tail())
            return None
        self.steps.add(self.xdsd, mark, self.key)
        return t

    def moves(self, loop, who, since, what):
        """The loop's answers come from `who` after `since`, within
        MOVE_TIMEOUT s, and every answer after the first of them did."""
        first = loop.answer(lambda r: r["ok"] and r["who"] == who, since, MOVE_TIMEOUT)
        if first is None:
            return self.tap.point(False, "%s: requests through %s move to backend %s"
                                  % (what, loop.path, who),
                                  ["no answer from %s within %d s of SIGHUP"
                                   % (who, MOVE_TIMEOUT)] + self.diag())
        # one more answer, so that "stays" has something to judge
        loop.answer(lambda r: r["seq"] > first["seq"], since, MOVE_TIMEOUT)
        after = [r for r in loop.snapshot(since) if r["seq"] > first["seq"]]
        others = sorted({str(r["who"]) for r in after if r["ok"] and r["who"] != who})
        return self.tap.point(not others, "%s: requests on %s:%d%s move to backend %s "
                              "(request #%d) and stay there"
                              % (what, loop.name, loop.port, loop.path, who, first["seq"]),
                              ["later answers from: " + ", ".join(others)] if others else [])

    # --- the run ----------------------------------------------------------
    def setup(self):
        builddir = os.environ.get("XDSD_BUILDDIR", "")
        binary = os.environ.get("XDSD", "")
        if not builddir or not binary or not os.access(binary, os.X_OK):
            self.tap.point(False, "XDSD and XDSD_BUILDDIR name the build",
                           ["XDSD=%r XDSD_BUILDDIR=%r; run through `make check` or see "
                            "tests/interop/README.md" % (binary, builddir)])
            return False
        self.work = os.path.join(builddir, "tests", "interop",
                                 "%s-%s.work" % (self.WORK, self.mode))
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        envoy, why = eh.envoy_binary()
        version = ""
        if envoy:
            out = subprocess.run([envoy, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
            version = " ".join(out.split())
        ok = envoy is not None and "/%s/" % ENVOY_VERSION in version
        self.tap.point(ok, "the venv's Envoy is %s (%s)" % (ENVOY_VERSION, envoy),
                       [why or "envoy --version: %s" % version])
        if not ok:
            return False
        self.envoy_path = envoy
        # a fixed port, so that xdsd can be restarted where Envoy looks
        self.xdsd = eh.Xdsd(binary, os.environ.get("XDSD_SCHEMA", ""), self.work,
                            port=eh.free_port())
        return True

    def start(self):
        for name in ("A", "B", "C"):
            self.backends[name] = eh.Backend(name)
        self.snap = eh.load_yaml(eh.EXAMPLE_SNAPSHOT)
        self.port1 = eh.free_port()
        lis = by_name(self.snap["listeners"], "ingress")
        lis["address"]["socket_address"]["port_value"] = self.port1
        move_endpoints(self.snap, "web", self.backends["A"])
        self.xdsd.write_snapshot(self.snap, self.key)
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves examples/envoy/snapshots/default.yaml on "
                              "127.0.0.1:%s (listener on port %d, endpoints at backend A)"
                              % (self.xdsd.port, self.port1), why):
            return False
        self.steps.add(self.xdsd, 0, self.key)
        self.envoy = eh.Envoy(self.envoy_path, self.work, "envoy", self.node_id,
                              self.xdsd.port, self.api)
        ok, why = self.envoy.start()
        ready = ok and eh.wait_until(self.envoy.ready, START_TIMEOUT, 0.1)
        if not self.tap.point(bool(ready), "Envoy (ads_config api_type %s, admin on port %s) "
                              "is ready within %d s" % (self.api, self.envoy.admin_port,
                                                       START_TIMEOUT),
                              [] if ready else why + self.diag()):
            return False
        kind = "delta ADS" if self.delta else "ADS"
        streams = [ln for ln in self.xdsd.lines()
                   if "(%s from " % kind in ln and "node '%s': serving snapshot" % self.node_id in ln]
        self.tap.point(bool(streams), "Envoy's %s stream reached xdsd" % kind,
                       streams[:1] or self.xdsd.log_tail())

        def first_answer():
            try:
                status, body, _ = eh.http_get(self.port1, "/")
                return body if status == 200 else None
            except OSError:
                return None
        who = eh.wait_until(first_answer, START_TIMEOUT, 0.1)
        if not self.tap.point(who == "A", "a request through Envoy's listener (LDS), "
                              "route (RDS), cluster (CDS) and endpoints (EDS) reaches "
                              "backend A",
                              [] if who == "A" else ["answered by %r" % who] + self.diag()):
            return False
        return self.converged("at start")

    def changes(self):
        root = eh.Traffic("ingress", self.port1, "/", self.backends, INTERVAL).start()
        api = eh.Traffic("ingress", self.port1, "/api/items", self.backends, INTERVAL).start()
        self.loops += [root, api]
        if not (root.answer(lambda r: r["ok"], 0, MOVE_TIMEOUT)
                and api.answer(lambda r: r["ok"], 0, MOVE_TIMEOUT)):
            return self.tap.point(False, "the request loops are answered", self.diag())
        B, C, A = self.backends["B"], self.backends["C"], self.backends["A"]

        # EDS: the endpoints move
        what = "EDS, web's endpoints moved from A to B"
        t = self.reload(what, lambda s: move_endpoints(s, "web", B))
        if t is None or not self.moves(root, "B", t, what) or not self.converged(what):
            return False

        # CDS + RDS: a cluster comes, a route to it
        what = "CDS, cluster api (at C) added, /api routed to it"

        def add_api(s):
            s["clusters"].append(eds_cluster("api"))
            s["endpoints"].append(endpoints("api", C))
            routes = by_name(s["routes"], "main")["virtual_hosts"][0]["routes"]
            routes.insert(0, {"match": {"prefix": "/api"}, "route": {"cluster": "api"}})
        t = self.reload(what, add_api)
        if t is None or not self.moves(api, "C", t, what) or not self.converged(what):
            return False

        # CDS + RDS: the cluster is replaced; the old one goes (rule A2)
        what = "CDS, api replaced by api-v2 (at A) and removed"

        def replace_api(s):
            s["clusters"] = [c for c in s["clusters"] if c["name"] != "api"]
            s["endpoints"] = [e for e in s["endpoints"] if e["cluster_name"] != "api"]
            s["clusters"].append(eds_cluster("api-v2"))
            s["endpoints"].append(endpoints("api-v2", A))
            by_name(s["routes"], "main")["virtual_hosts"][0]["routes"][0]["route"] = \
                {"cluster": "api-v2"}
        t = self.reload(what, replace_api)
        if t is None or not self.moves(api, "A", t, what) or not self.converged(what):
            return False
        stay = root.answer(lambda r: r["who"] == "B", t, MOVE_TIMEOUT) is not None \
            and not [r for r in root.snapshot(t) if r["ok"] and r["who"] != "B"]
        self.tap.point(stay, "%s: requests to / stay on backend B" % what,
                       [] if stay else self.diag())

        # LDS: a listener comes, with a route configuration of its own
        what = "LDS, listener ingress-2 (RDS second) added"
        self.port2 = eh.free_port()

        def add_listener(s):
            lis = copy.deepcopy(by_name(s["listeners"], "ingress"))
            lis["name"] = "ingress-2"
            lis["address"]["socket_address"]["port_value"] = self.port2
            hcm = lis["filter_chains"][0]["filters"][0]["typed_config"]
            hcm["stat_prefix"] = "ingress_2"
            hcm["rds"]["route_config_name"] = "second"
            s["listeners"].append(lis)
            route = copy.deepcopy(by_name(s["routes"], "main"))
            route["name"] = "second"
            route["virtual_hosts"][0]["routes"] = [
                {"match": {"prefix": "/"}, "route": {"cluster": "api-v2"}}]
            s["routes"].append(route)
        t = self.reload(what, add_listener)
        if t is None:
            return False

        def second_answers():
            try:
                return eh.http_get(self.port2, "/")[1]
            except OSError:
                return None
        who = eh.wait_until(second_answers, MOVE_TIMEOUT, 0.1)
        if not self.tap.point(who == "A", "%s: requests on its port %d reach backend A"
                              % (what, self.port2),
                              [] if who == "A" else ["answered by %r" % who] + self.diag()):
            return False
        self.loops.append(eh.Traffic("ingress-2", self.port2, "/", self.backends, INTERVAL).start())
        if not self.converged(what):
            return False

        # LDS: a listener changes in place; its connections drain
        what = "LDS, listener ingress changed (server_name)"

        def rename_server(s):
            hcm = by_name(s["listeners"], "ingress")["filter_chains"][0]["filters"][0]
            assert hcm["typed_config"]["@type"] == HCM
            hcm["typed_config"]["server_name"] = "xdsd-ingress-2"
        t = self.reload(what, rename_server)
        if t is None:
            return False
        r = root.answer(lambda r: r.get("server") == "xdsd-ingress-2", t, MOVE_TIMEOUT)
        if not self.tap.point(r is not None, "%s: answers through ingress come from the "
                              "changed listener (server: xdsd-ingress-2)" % what,
                              [] if r is not None else self.diag()):
            return False
        return self.converged(what)

    def check_traffic(self):
        for loop in self.loops:
            loop.stop()
        for loop in self.loops:
            res = loop.snapshot()
            fails = [r for r in res if not r["ok"]]
            span = 0.0
            with loop.cond:
                if loop.results:
                    span = loop.results[-1][0] - loop.results[0][0]
            self.tap.point(bool(res) and not fails, "no request on %s:%d%s failed "
                           "(%d requests over %.1f s, %d failed)"
                           % (loop.name, loop.port, loop.path, len(res), span, len(fails)),
                           summarize_failures(fails))

    def restart(self):
        """xdsd goes away and comes back on the same port with the same
        snapshot: Envoy serves on meanwhile, reconnects, and the new
        stream is sent nothing Envoy holds (SotW: wildcard listeners and
        clusters at the version Envoy names, rule S12; delta: every
        resource in initial_resource_versions, rule D7)."""
        what = "xdsd restarted"
        rc = self.xdsd.stop()
        if not self.tap.point(rc == 0, "%s: the first xdsd exits 0 on SIGTERM (status %s)"
                              % (what, rc), [] if rc == 0 else self.xdsd.log_tail()):
            return
        gone = eh.wait_until(lambda: self.envoy.stats().get(
            "control_plane.connected_state") == 0, MOVE_TIMEOUT, 0.1)
        now = time.monotonic()
        served = all(loop.count(now, UNDER_LOAD, MOVE_TIMEOUT) for loop in self.loops)
        fails = [r for loop in self.loops for r in loop.snapshot(now) if not r["ok"]]
        self.tap.point(bool(gone) and served and not fails,
                       "%s: while xdsd is gone Envoy knows it (connected_state 0) and "
                       "serves on (%d requests per loop)" % (what, UNDER_LOAD),
                       summarize_failures(fails) + ([] if gone else
                                                    ["connected_state stayed 1"]))
        old = self.xdsd
        self.xdsd = eh.Xdsd(old.binary, old.schema, self.work, port=old.port, name="xdsd-2")
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "%s: xdsd starts again on port %d" % (what, old.port), why):
            return

        def synced():
            try:
                c = self.xdsd.client(self.node_id)
            except (OSError, ValueError):
                return None
            return len(c) == 1 and c[0]["state"] == "synced" and \
                {t["type"] for t in c[0]["types"]} >= {"listeners", "clusters"}
        back = eh.wait_until(synced, 30, 0.1) and eh.wait_until(
            lambda: self.envoy.stats().get("control_plane.connected_state") == 1, 10, 0.1)
        if not self.tap.point(bool(back), "%s: Envoy reconnects and xdsd shows it synced"
                              % what, [] if back else self.diag()):
            return
        sent = self.xdsd.sent_resources(self.node_id)
        if self.delta:
            resent = [(t, n) for t, n in sent if n]
            desc = "no resource at all (rule D7)"
        else:
            resent = [(t, n) for t, n in sent if n and t in ("LDS", "CDS")]
            desc = "no listener and no cluster (rule S12)"
        self.tap.point(not resent, "%s: Envoy's new stream is sent %s (responses: %s)"
                       % (what, desc, ", ".join("%s %d" % x for x in sent) or "none"),
                       ["resent: %s" % resent] if resent else [])
        self.converged(what)
        nacks = [ln for ln in self.xdsd.lines() if "NACK of " in ln]
        self.tap.point(not nacks, "%s: Envoy sent the new xdsd no NACK" % what, nacks[:5])

    def refusal(self):
        """A listener Envoy cannot take (its port is held here): Envoy
        NACKs the listeners, xdsd records it with Envoy's reason, the
        other listeners carry on; the next snapshot without it is taken."""
        what = "LDS, listener busy on a port held by the test"
        held = eh.held_port()
        port = held.getsockname()[1]
        try:
            def add_busy(s):
                lis = copy.deepcopy(by_name(s["listeners"], "ingress-2"))
                lis["name"] = "busy"
                lis["address"]["socket_address"]["port_value"] = port
                lis["filter_chains"][0]["filters"][0]["typed_config"]["stat_prefix"] = "busy"
                s["listeners"].append(lis)
            t = self.reload(what, add_busy)
            if t is None:
                return
            reason = "cannot bind '127.0.0.1:%d'" % port
            nack = eh.wait_until(lambda: [ln for ln in self.xdsd.lines()
                                          if "node '%s': NACK of LDS" % self.node_id in ln],
                                 MOVE_TIMEOUT, 0.1)
            self.tap.point(bool(nack) and reason in nack[0] and "busy" in nack[0],
                           "%s: Envoy NACKs the listeners and xdsd logs it with Envoy's "
                           "reason (\"%s\")" % (what, reason),
                           nack[:2] or self.xdsd.log_tail())
            try:
                types = {ty["type"]: ty for c in self.xdsd.client(self.node_id)
                         for ty in c["types"]}
            except (OSError, ValueError):
                types = {}
            lds = types.get("listeners", {})
            others = sorted(k for k, ty in types.items()
                            if k != "listeners" and ty["state"] != "synced")
            ok = lds.get("state") == "nacked" and \
                reason in ((lds.get("last_nack") or {}).get("message") or "") and not others
            self.tap.point(ok, "%s: xdsd's /clients shows the listeners NACKed with that "
                           "reason, every other type synced" % what,
                           [] if ok else ["listeners: %s" % lds, "not synced: %s" % others])
            cfg = self.envoy.config()["listeners"]
            rejected = self.envoy.stats().get("listener_manager.lds.update_rejected")
            ok = any(r.startswith("busy: ") and reason in r for r in cfg["refused"]) and \
                "busy" not in cfg["resources"] and rejected == 1
            self.tap.point(ok, "%s: Envoy's config dump shows busy refused, beside the "
                           "listeners it runs (%s); lds.update_rejected %s"
                           % (what, ", ".join(sorted(cfg["resources"])), rejected),
                           [] if ok else cfg["refused"])
            now = time.monotonic()
            served = all(loop.count(now, UNDER_LOAD, MOVE_TIMEOUT) for loop in self.loops)
            fails = [r for loop in self.loops for r in loop.snapshot(t) if not r["ok"]]
            self.tap.point(served and not fails, "%s: the other listeners serve on "
                           "(%d requests per loop)" % (what, UNDER_LOAD),
                           summarize_failures(fails))

            what = "LDS, listener busy removed again"
            if self.reload(what, lambda s: s["listeners"].remove(
                    by_name(s["listeners"], "busy"))) is None:
                return
            self.converged(what)

            def listeners_synced():
                try:
                    return [ty["state"] for c in self.xdsd.client(self.node_id)
                            for ty in c["types"] if ty["type"] == "listeners"] == ["synced"]
                except (OSError, ValueError):
                    return False
            ok = eh.wait_until(listeners_synced, MOVE_TIMEOUT, 0.1)
            self.tap.point(ok, "%s: xdsd's /clients shows the listeners synced again" % what,
                           [] if ok else self.xdsd.log_tail())
        finally:
            held.close()

    def checks(self):
        stats = self.envoy.stats()
        with open(os.path.join(self.work, "envoy-stats.txt"), "w") as f:
            f.writelines("%s: %d\n" % kv for kv in sorted(stats.items()))
        rejected = {k: v for k, v in stats.items() if k.endswith(".update_rejected") and v}
        attempts = {k: v for k, v in stats.items() if k.endswith(".update_success")}
        self.tap.point(not rejected and attempts, "Envoy's /stats show no update_rejected "
                       "(%d update_success counters)" % len(attempts),
                       ["%s: %d" % kv for kv in sorted(rejected.items())])
        # A subscription that got nothing within 15 s gives up waiting
        # (a cluster then warms without endpoints): the server held back
        # what Envoy asked for.
        late = {k: v for k, v in stats.items() if k.endswith(".init_fetch_timeout") and v}
        self.tap.point(not late, "no xDS subscription of Envoy ran into its initial fetch "
                       "timeout (%d init_fetch_timeout counters)"
                       % len([k for k in stats if k.endswith(".init_fetch_timeout")]),
                       ["%s: %d" % kv for kv in sorted(late.items())])
        gauges = {k: stats.get(k) for k in ("control_plane.connected_state",
                                            "cluster.xds.upstream_cx_total",
                                            "listener_manager.total_listeners_warming",
                                            "cluster_manager.warming_clusters")}
        self.tap.point(gauges["control_plane.connected_state"] == 1
                       and gauges["cluster.xds.upstream_cx_total"] == 1
                       and gauges["listener_manager.total_listeners_warming"] == 0
                       and gauges["cluster_manager.warming_clusters"] == 0,
                       "Envoy stayed connected on its one connection to xdsd and warms "
                       "nothing", ["%s: %s" % kv for kv in gauges.items()])
        lines = self.xdsd.lines()
        nacks = [ln for ln in lines if "NACK of " in ln]
        self.tap.point(not nacks, "Envoy sent no NACK (xdsd logged %d)" % len(nacks), nacks[:5])
        errors = [ln for ln in lines if " error: " in ln]
        self.tap.point(not errors, "xdsd logged no error", errors[:5])
        streams = sorted(self.xdsd.streams(self.node_id))
        self.tap.point(len(streams) == 1, "Envoy opened one xDS stream in the whole run "
                       "(stream %s)" % ", ".join(streams), [])
        def status():
            """(clients, what of them is not synced)"""
            try:
                clients = self.xdsd.client(self.node_id)
            except (OSError, ValueError) as e:
                return [], ["/clients: %s" % e]
            unsynced = ["%s: %s (acked %s, current %s)" % (
                t["type"], t["state"], t["acked_version"], t["current_version"])
                for c in clients for t in c.get("types", [])
                # synced is xdsd's word for "in step": a version the
                # client needs nothing of (a delta removal of a name it
                # dropped itself) is never sent, nor ACKed
                if t["state"] != "synced"]
            if len(clients) != 1 or clients[0]["state"] != "synced":
                unsynced.append("%d streams of the node" % len(clients))
            return clients, unsynced
        # a heartbeat (TTLs) is pending until Envoy answers it: wait for
        # a moment between two
        eh.wait_until(lambda: not status()[1], CONVERGE_TIMEOUT, 0.05)
        clients, unsynced = status()
        self.tap.point(not unsynced,
                       "xdsd's /clients shows Envoy synced on every type (%s)"
                       % ", ".join(t["type"] for c in clients for t in c.get("types", [])),
                       unsynced)
        # Envoy says its version as a BuildVersion, not as the string
        ua = [(c.get("node") or {}).get("user_agent") for c in clients]
        want = {"name": "envoy", "version": ENVOY_VERSION}
        self.tap.point(ua == [want], "xdsd's /clients names Envoy's user agent and its "
                       "version (%s)" % ua, [] if ua == [want] else ["expected %s" % want])

    def run(self):
        if not self.setup():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if self.start():
            if self.changes():
                self.checks()
                self.restart()
                self.refusal()
            else:
                self.checks()
            self.check_traffic()
        self.stop()

    def envoys(self):
        return [(None, self)]

    def traffic_loops(self):
        return self.loops


def main(scenario=Scenario, doc=__doc__,
         what="carries HTTP traffic through xdsd's changes"):
    """Runs `scenario` (a Scenario class) for --api, as TAP; `doc` and
    `what` describe it. Returns the exit status."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--api", choices=("GRPC", "DELTA_GRPC"), required=True)
    args = ap.parse_args()
    tap = Tap()
    tap.comment(["a real Envoy %s over ADS (%s) %s" % (ENVOY_VERSION, args.api, what)])
    return run_scenario(tap, scenario(args.api, tap), OVERALL_TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
