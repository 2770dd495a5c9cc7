# SPDX-License-Identifier: Apache-2.0
"""Interop: a real Envoy takes a cluster's endpoints from xdsd by LEDS
(locality endpoints, docs/protocol.md rules G1-G3), over delta ADS, and
its traffic follows one endpoint's change.

  1. Backends A, B and C; xdsd serves the example snapshot
     (examples/envoy/snapshots/default.yaml, its listener on a port of
     the Envoy's own) with web's load assignment changed: one locality
     whose leds_cluster_locality_config names the glob collection
     xdstp://xdsd.test/envoy.config.endpoint.v3.LbEndpoint/web/zone-a/*,
     and two locality endpoints in it, "ep-1" at A and "ep-2" at B. A
     delta Envoy starts from examples/envoy/bootstrap.yaml.
  2. move (rules G1, G2): requests through the Envoy reach A and B; its
     config dump holds web's endpoints at A and B, and /clusters the
     same hosts. Under a request loop, "ep-2" moves to C, SIGHUP: the
     answers move from B to C, xdsd sent LEDS alone (no EDS, no CDS),
     one resource, and no request failed.
  3. new_cluster (rule G3): a new cluster "web2" whose one locality
     endpoint is C, and the route moved to it: the traffic moves to C
     and stays; xdsd sent CDS, EDS, LEDS and then RDS, and no Envoy
     subscription waited for its initial fetch timeout (Envoy warms
     web2 until its collection comes, holding its CDS ACK meanwhile).
  4. Envoy's /stats show no update_rejected and no init_fetch_timeout;
     xdsd logged no NACK and no error, and /clients shows every type of
     the Envoy synced; Envoy and xdsd exit 0.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
leds.sh); needs XDSD and XDSD_BUILDDIR (work files in
$XDSD_BUILDDIR/tests/interop/envoy-leds.work, kept), XDSD_SCHEMA when set.
"""
import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap, run_scenario, summarize_failures  # noqa: E402
import envoy_harness as eh  # noqa: E402
from envoy_traffic import ENVOY_VERSION, by_name  # noqa: E402

START_TIMEOUT = 30
WAIT = 20               # a change's effect, from its SIGHUP
OVERALL_TIMEOUT = 150
INTERVAL = 0.05
LEDS_TYPE = "envoy.config.endpoint.v3.LbEndpoint"
PREFIX = "xdstp://xdsd.test/%s/web/zone-a/" % LEDS_TYPE
EDS_DUMP = "type.googleapis.com/envoy.admin.v3.EndpointsConfigDump"


def locality_endpoint(name, backend):
    return {"@name": PREFIX + name, "endpoint": {"address": backend.address()}}


class Scenario(eh.Ending):
    def __init__(self, tap):
        self.tap = tap
        self.work = None
        self.backends = {}
        self.xdsd = None
        self.envoy = None
        self.loop = None
        self.snap = None
        self.port = eh.free_port()
        self.node_id = "leds-delta-%d" % os.getpid()

    def diag(self):
        out = []
        if self.loop:
            res = self.loop.snapshot()
            fails = [r for r in res if not r["ok"]]
            out.append("loop: %d requests, %d failed" % (len(res), len(fails)))
            out += ["  " + s for s in summarize_failures(fails)]
        if self.envoy:
            out += self.envoy.log_tail(12)
        if self.xdsd:
            out += self.xdsd.log_tail(20)
        return out

    # --- what Envoy holds -------------------------------------------------
    def dumped_ports(self):
        """The ports of web's endpoints in Envoy's config dump (EDS, where
        Envoy shows a cluster's endpoints, those of its LEDS localities
        too), sorted."""
        _, body = self.envoy.get("/config_dump?include_eds")
        ports = []
        for c in json.loads(body).get("configs", []):
            if c.get("@type") != EDS_DUMP:
                continue
            for d in c.get("dynamic_endpoint_configs", []):
                cla = d.get("endpoint_config", {})
                if cla.get("cluster_name") != "web":
                    continue
                for loc in cla.get("endpoints", []):
                    for lb in loc.get("lb_endpoints", []):
                        ports.append(lb["endpoint"]["address"]["socket_address"]["port_value"])
        return sorted(ports)

    def host_ports(self):
        """The ports of web's hosts in Envoy's /clusters, sorted."""
        _, body = self.envoy.get("/clusters?format=json")
        for c in json.loads(body).get("cluster_statuses", []):
            if c.get("name") == "web":
                return sorted(h["address"]["socket_address"]["port_value"]
                              for h in c.get("host_statuses", []))
        return []

    def ports(self, *names):
        return sorted(self.backends[n].port for n in names)

    # --- the run ----------------------------------------------------------
    def setup(self):
        got = eh.prepare(self.tap, "envoy-leds")
        if got is None:
            return False
        self.work, binary, self.envoy_path = got
        self.xdsd = eh.Xdsd(binary, os.environ.get("XDSD_SCHEMA", ""), self.work)
        return True

    def start(self):
        for n in "ABC":
            self.backends[n] = eh.Backend(n)
        self.snap = eh.fleet_snapshot(self.port, self.backends["A"])
        web = by_name(self.snap["endpoints"], "web", key="cluster_name")
        web["endpoints"] = [{
            "locality": {"zone": "zone-a"},
            "leds_cluster_locality_config": {
                "leds_config": {"ads": {}, "resource_api_version": "V3"},
                "leds_collection_name": PREFIX + "*"}}]
        self.snap["locality_endpoints"] = [
            locality_endpoint("ep-1", self.backends["A"]),
            locality_endpoint("ep-2", self.backends["B"])]
        self.xdsd.write_snapshot(self.snap)
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves the example snapshot with web's endpoints "
                              "as a LEDS collection of two locality endpoints (A, B)", why):
            return False
        self.envoy = eh.Envoy(self.envoy_path, self.work, "envoy-delta", self.node_id,
                              self.xdsd.port, "DELTA_GRPC")
        started, why = eh.start_ready(self.envoy, START_TIMEOUT)
        if not self.tap.point(started, "the delta Envoy (node %s) is ready" % self.node_id,
                              why):
            return False
        self.loop = eh.Traffic("delta", self.port, "/", ["A", "B", "C"], INTERVAL).start()
        since = time.monotonic()
        both = eh.wait_until(lambda: {r["who"] for r in self.loop.snapshot(since)
                                      if r["ok"]} >= {"A", "B"} or None, START_TIMEOUT, 0.1)
        self.tap.point(both is not None, "requests through the Envoy reach both endpoints of "
                       "the collection, backends A and B", [] if both else self.diag())
        want = self.ports("A", "B")
        got = eh.wait_until(lambda: self.dumped_ports() == want or None, WAIT, 0.2)
        self.tap.point(got is not None, "Envoy's config dump holds web's endpoints at A and B "
                       "(%s)" % self.dumped_ports())
        got = eh.wait_until(lambda: self.host_ports() == want or None, WAIT, 0.2)
        self.tap.point(got is not None, "Envoy's /clusters has web's hosts at A and B (%s)"
                       % self.host_ports())
        return both is not None

    def move(self):
        """rules G1, G2: one endpoint moves to another backend."""
        self.snap["locality_endpoints"][1] = locality_endpoint("ep-2", self.backends["C"])
        # the loop runs a while on A and B first
        self.loop.count(0, 40, WAIT)
        self.xdsd.write_snapshot(self.snap)
        ok, line, mark = self.xdsd.reload()
        if not self.tap.point(ok, "xdsd reloads on SIGHUP", [line] + self.xdsd.log_tail()):
            return
        since = time.monotonic()
        fresh = self.loop.answer(lambda r: r["ok"] and r["who"] == "C", since, WAIT)
        later = [r for r in self.loop.snapshot(since)
                 if fresh is not None and r["seq"] > fresh["seq"]]
        # answers from B may still come from requests already routed
        settled = eh.wait_until(lambda: self.host_ports() == self.ports("A", "C") or None,
                                WAIT, 0.1)
        after = time.monotonic()
        stale, who = [], set()
        if settled:
            self.loop.count(after, 40, WAIT)
            stale = [r for r in self.loop.snapshot(after) if r["ok"] and r["who"] == "B"]
            who = {r["who"] for r in self.loop.snapshot(after) if r["ok"]}
        self.tap.point(fresh is not None and settled is not None and not stale
                       and who == {"A", "C"},
                       "move: the moved endpoint's traffic goes to C, and once Envoy's hosts "
                       "are A and C requests reach A and C and none B (%d requests after the "
                       "first C, then %s)" % (len(later), sorted(who)),
                       self.diag() if fresh is None or not settled else
                       ["from B: %d" % len(stale)])
        sent = eh.sent_resources(self.xdsd.lines()[mark:], self.node_id)
        since_types = [t for t, _ in sent]
        leds = [n for t, n in sent if t == "LEDS"]
        self.tap.point(since_types == ["LEDS"] and leds == [1],
                       "move: xdsd sent the Envoy one LEDS response of one resource, and "
                       "neither EDS nor CDS (%s; %s)" % (", ".join(since_types) or "nothing",
                                                         leds))
        want = self.ports("A", "C")
        got = eh.wait_until(lambda: self.dumped_ports() == want or None, WAIT, 0.2)
        self.tap.point(got is not None, "move: Envoy's config dump holds web's endpoints at A "
                       "and C (%s)" % self.dumped_ports())

    def new_cluster(self):
        """rule G3: a new cluster whose endpoints come by LEDS, and the
        route moved to it: Envoy warms the cluster until its collection
        comes and holds its CDS ACK meanwhile, so xdsd sends the
        collection while CDS is unanswered."""
        prefix2 = "xdstp://xdsd.test/%s/web2/zone-a/" % LEDS_TYPE
        web2 = dict(by_name(self.snap["clusters"], "web"), name="web2")
        self.snap["clusters"].append(web2)
        self.snap["endpoints"].append({
            "cluster_name": "web2",
            "endpoints": [{"locality": {"zone": "zone-a"},
                           "leds_cluster_locality_config": {
                               "leds_config": {"ads": {}, "resource_api_version": "V3"},
                               "leds_collection_name": prefix2 + "*"}}]})
        self.snap["locality_endpoints"].append(
            {"@name": prefix2 + "ep-1", "endpoint": {"address": self.backends["C"].address()}})
        route = self.snap["routes"][0]["virtual_hosts"][0]["routes"][0]
        route["route"]["cluster"] = "web2"
        self.xdsd.write_snapshot(self.snap)
        ok, line, mark = self.xdsd.reload()
        if not self.tap.point(ok, "new cluster: xdsd reloads on SIGHUP",
                              [line] + self.xdsd.log_tail()):
            return
        since = time.monotonic()
        moved = self.loop.answer(lambda r: r["ok"] and r["who"] == "C", since, WAIT)
        if moved is not None:
            self.loop.count(time.monotonic(), 40, WAIT)
        after = self.loop.snapshot(since)
        later = [r for r in after if moved is not None and r["seq"] > moved["seq"]]
        stale = [r for r in later if r["ok"] and r["who"] != "C"]
        self.tap.point(moved is not None and later and not stale,
                       "new cluster: the route's traffic moves to web2, whose one locality "
                       "endpoint is C, and stays (%d requests after the first C)" % len(later),
                       self.diag() if moved is None else
                       ["from %s" % r["who"] for r in stale][:3])
        sent = [t for t, _ in eh.sent_resources(self.xdsd.lines()[mark:], self.node_id)]
        order = [t for t in ("CDS", "EDS", "LEDS", "RDS") if t in sent]
        self.tap.point(order == ["CDS", "EDS", "LEDS", "RDS"]
                       and sent.index("LEDS") < sent.index("RDS"),
                       "new cluster: xdsd sent the cluster, its load assignment and its "
                       "locality endpoints before the route (%s)" % ", ".join(sent))
        fetch = {k: v for k, v in self.envoy.stats().items()
                 if k.endswith("init_fetch_timeout") and v}
        self.tap.point(not fetch, "new cluster: no subscription of the Envoy waited for its "
                       "initial fetch timeout (the collection came while web2 warmed)",
                       ["%s: %d" % kv for kv in sorted(fetch.items())])

    def checks(self):
        if self.envoy:
            self.stats_clean(None, self.envoy)
        else:
            self.tap.point(False, "the Envoy ran")
        fails = self.loop.failures() if self.loop else []
        self.tap.point(self.loop is not None and not fails,
                       "no request through the Envoy failed (%d requests)"
                       % (len(self.loop.snapshot()) if self.loop else 0),
                       summarize_failures(fails))
        self.log_clean()
        states = eh.type_states(self.xdsd, self.node_id)
        synced = bool(states) and all(t.get("state") == "synced" for t in states.values())
        self.tap.point(synced and "locality_endpoints" in states,
                       "/clients shows every type of the Envoy synced, locality endpoints "
                       "among them (%s)" % sorted(states),
                       ["%s: %s" % (k, v.get("state")) for k, v in sorted(states.items())])

    def run(self):
        if not self.setup():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if self.start():
            self.move()
            self.new_cluster()
        self.checks()
        self.stop()

    def envoys(self):
        return [(None, self)]


def main():
    tap = Tap()
    tap.comment(["a real Envoy %s takes a cluster's endpoints from xdsd by LEDS, delta ADS"
                 % ENVOY_VERSION])
    return run_scenario(tap, Scenario(tap), OVERALL_TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
