# SPDX-License-Identifier: Apache-2.0
"""Interop: a real Envoy reports the load it sends to xdsd, its load
reporting server (docs/protocol.md rules M1, M2).

  1. xdsd serves examples/envoy/snapshots/default.yaml with this run's
     ports, and a second cluster: "/b" goes to cluster web-b (backend
     B), everything else to web (backend A), each endpoint in a
     locality of its own (region loopback, zones a and b); it asks for
     a report every second (load_reports.interval: 1s).
  2. One Envoy starts from examples/envoy/bootstrap.yaml, over SotW ADS,
     with cluster_manager.load_stats_config naming the same xds cluster:
     Envoy opens StreamLoadStats to xdsd as its node.
  3. Requests to each cluster until xdsd has Envoy's report of it (Envoy
     reports a cluster from the report period after it took it on);
     then HTTP requests through its listener, REQUESTS_A to web and
     REQUESTS_B to web-b, all answered by their backend.
  4. xdsd's /loads counts exactly those requests more under each cluster,
     its endpoints' locality and Envoy's node, no errors; /metrics has
     them per cluster and locality, xdsctl loads shows them.
  5. No NACK, no error; Envoy exits 0, xdsd too.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
loads.sh); needs XDSD and XDSD_BUILDDIR (work files in
$XDSD_BUILDDIR/tests/interop/envoy-loads.work, kept), XDSD_SCHEMA when set.
"""
import os
import shutil
import signal
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap, Timeout  # noqa: E402
import envoy_harness as eh  # noqa: E402
from envoy_traffic import ENVOY_VERSION, by_name  # noqa: E402

START_TIMEOUT = 30
REPORT_WAIT = 30        # for the requests to show in /loads
REQUESTS_A, REQUESTS_B = 30, 20
OVERALL_TIMEOUT = 180
NODE_ID = "edge-loads-%d" % os.getpid()


class Scenario(eh.Ending):
    def __init__(self, tap):
        self.tap = tap
        self.work = None
        self.backends = {}
        self.xdsd = None
        self.envoy = None
        self.port = None
        self.base = None  # /loads before the requests counted

    def diag(self):
        out = self.envoy.log_tail(15) if self.envoy else []
        return out + (self.xdsd.log_tail(25) if self.xdsd else [])

    def setup(self):
        builddir = os.environ.get("XDSD_BUILDDIR", "")
        binary = os.environ.get("XDSD", "")
        if not builddir or not binary or not os.access(binary, os.X_OK):
            self.tap.point(False, "XDSD and XDSD_BUILDDIR name the build",
                           ["XDSD=%r XDSD_BUILDDIR=%r; run through `make check`"
                            % (binary, builddir)])
            return False
        self.work = os.path.join(builddir, "tests", "interop", "envoy-loads.work")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        envoy, why = eh.envoy_binary()
        version = ""
        if envoy:
            version = " ".join(subprocess.run([envoy, "--version"], capture_output=True,
                                              text=True, timeout=30).stdout.split())
        self.envoy_path = envoy
        return self.tap.point(envoy is not None and "/%s/" % ENVOY_VERSION in version,
                              "the venv's Envoy is %s (%s)" % (ENVOY_VERSION, envoy),
                              [why or "envoy --version: %s" % version])

    def snapshot(self):
        """The example snapshot, its listener on this run's port, "/b" to
        a second cluster, each cluster's endpoint in a zone of its own."""
        snap = eh.load_yaml(eh.EXAMPLE_SNAPSHOT)
        by_name(snap["listeners"], "ingress")["address"]["socket_address"]["port_value"] = \
            self.port
        routes = by_name(snap["routes"], "main")["virtual_hosts"][0]["routes"]
        routes.insert(0, {"match": {"prefix": "/b"}, "route": {"cluster": "web-b"}})
        web = by_name(snap["clusters"], "web")
        snap["clusters"].append(dict(web, name="web-b"))
        snap["endpoints"] = [
            {"cluster_name": name, "endpoints": [{
                "locality": {"region": "loopback", "zone": zone},
                "lb_endpoints": [{"endpoint": {"address": self.backends[who].address()}}]}]}
            for name, zone, who in (("web", "a", "A"), ("web-b", "b", "B"))]
        return snap

    @staticmethod
    def edit(boot):
        """Envoy's load reports go to xdsd, over the cluster its ADS
        takes."""
        boot["cluster_manager"] = {"load_stats_config": {
            "api_type": "GRPC", "transport_api_version": "V3",
            "grpc_services": [{"envoy_grpc": {"cluster_name": "xds"}}]}}

    def start(self):
        self.backends = {"A": eh.Backend("A"), "B": eh.Backend("B")}
        self.port = eh.free_port()
        self.xdsd = eh.Xdsd(os.environ["XDSD"], os.environ.get("XDSD_SCHEMA", ""), self.work,
                            config="load_reports:\n  interval: 1s\n")
        self.xdsd.write_snapshot(self.snapshot())
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves the example snapshot with clusters web and web-b "
                              "on 127.0.0.1:%s, asking for load reports every second"
                              % self.xdsd.port, why):
            return False
        self.envoy = eh.Envoy(self.envoy_path, self.work, "envoy", NODE_ID, self.xdsd.port,
                              "GRPC", edit=self.edit)
        started, why = eh.start_ready(self.envoy, START_TIMEOUT)
        return self.tap.point(started, "Envoy (node %s) starts from examples/envoy/bootstrap.yaml "
                              "with cluster_manager.load_stats_config naming xdsd, and is ready"
                              % NODE_ID, why)

    def opened(self):
        """rule M1: Envoy opened StreamLoadStats as its node."""
        needle = "node '%s': reporting load" % NODE_ID
        lines = eh.wait_until(lambda: [ln for ln in self.xdsd.lines()
                                       if "(LRS from " in ln and needle in ln] or None,
                              START_TIMEOUT, 0.1)
        self.tap.point(bool(lines), "Envoy opened StreamLoadStats to xdsd as node %s (rule M1)"
                       % NODE_ID, (lines or ["no such line"])[:1] +
                       ([] if lines else self.diag()))

    def warm(self):
        """Envoy reports a cluster from the report period after it took
        it on: load it sent before is never reported. So requests go to
        each cluster until xdsd has a report of it; what was counted by
        then is the base the requests below add to."""
        def both():
            for path in ("/", "/b"):
                try:
                    eh.http_get(self.port, path)
                except OSError:
                    pass
            try:
                got = self.reported()
            except (OSError, ValueError, KeyError):
                return None
            return got if "web" in got and "web-b" in got else None
        self.base = eh.wait_until(both, REPORT_WAIT, 0.2)
        if self.base is not None:
            # the last of those requests are in the next report at the
            # latest: two reports on, none is still to come
            seen = self.reports()
            if eh.wait_until(lambda: self.reports() >= seen + 2, REPORT_WAIT, 0.1):
                self.base = self.reported()
        return self.tap.point(self.base is not None,
                              "xdsd has Envoy's reports of web and web-b (%s)" % self.base,
                              [] if self.base else self.diag())

    def reports(self):
        """How many reports xdsd's log says Envoy's stream carried."""
        needle = "node '%s': LRS: " % NODE_ID
        return sum(1 for ln in self.xdsd.lines() if needle in ln and " reported" in ln)

    def traffic(self):
        got = {"A": 0, "B": 0}
        bad = []
        for path, n in (("/", REQUESTS_A), ("/b", REQUESTS_B)):
            for _ in range(n):
                try:
                    status, body, _ = eh.http_get(self.port, path)
                except OSError as e:
                    status, body = "error", str(e)[:100]
                if status == 200 and body in got:
                    got[body] += 1
                else:
                    bad.append("%s %s: %s" % (path, status, body))
        return self.tap.point(got == {"A": REQUESTS_A, "B": REQUESTS_B} and not bad,
                              "%d HTTP requests through Envoy reach web's backend A, %d reach "
                              "web-b's B" % (REQUESTS_A, REQUESTS_B),
                              ["answers: %s" % got] + bad[:5])

    def reported(self):
        """/loads of Envoy's node: {cluster: (requests, errors, zones)}."""
        out = {}
        for e in self.xdsd.admin("/loads").get("loads", []):
            if e.get("node") != NODE_ID or e.get("locality") is None:
                continue
            r, err, zones = out.get(e["cluster"], (0, 0, []))
            out[e["cluster"]] = (r + e["total"]["requests"], err + e["total"]["errors"],
                                 zones + ["%s/%s" % (e["locality"]["region"],
                                                     e["locality"]["zone"])])
        return out

    def loads(self):
        """rule M2: every request is counted under its cluster, its
        endpoint's locality and Envoy's node: no more, no fewer."""
        want = {"web": (self.base["web"][0] + REQUESTS_A, 0, ["loopback/a"]),
                "web-b": (self.base["web-b"][0] + REQUESTS_B, 0, ["loopback/b"])}

        def counted():
            try:
                got = self.reported()
            except (OSError, ValueError, KeyError):
                return None
            done = all(got.get(c, (0,))[0] >= w[0] for c, w in want.items())
            return got if done else None
        got = eh.wait_until(counted, REPORT_WAIT, 0.2)
        if got is None:
            try:
                got = self.reported()
            except (OSError, ValueError, KeyError) as e:
                got = {"error": str(e)}
        got = {c: v for c, v in got.items() if c in want}
        self.tap.point(got == want, "xdsd's /loads counts %d more requests of Envoy's to web in "
                       "loopback/a and %d to web-b in loopback/b, no errors (rule M2)"
                       % (REQUESTS_A, REQUESTS_B),
                       ["/loads of node %s: %s" % (NODE_ID, got)] +
                       ([] if got == want else self.diag()))
        try:
            sample = eh.metrics(self.xdsd)
        except (OSError, ValueError) as e:
            sample = {}
            self.tap.comment(["/metrics: %s" % e])
        found = {c: eh.metric(sample, "xdsd_load_requests_total", cluster=c,
                              locality=w[2][0] + "/")
                 for c, w in want.items()}
        self.tap.point(all(found[c] == w[0] for c, w in want.items()),
                       "/metrics: xdsd_load_requests_total{cluster=\"web\",locality="
                       "\"loopback/a/\"} %d and web-b's %d" % (want["web"][0], want["web-b"][0]),
                       ["%s" % found])
        rc, out = eh.xdsctl(self.xdsd, "loads")
        rows = [ln for ln in out.splitlines() if NODE_ID in ln]
        ok = rc == 0 and any("web " in ln and "loopback/a/" in ln for ln in rows) and \
            any("web-b" in ln and "loopback/b/" in ln for ln in rows)
        self.tap.point(ok, "`xdsctl loads` shows a row per cluster and locality of Envoy's node",
                       out.splitlines()[:6])

    def envoys(self):
        return [(None, self)]

    def checks(self):
        self.log_clean()

    def run(self):
        if not self.setup():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if self.start():
            self.opened()
            if self.warm() and self.traffic():
                self.loads()
            self.checks()
        self.stop()


def run(tap):
    """The scenario, its processes stopped whatever happens."""
    sc = Scenario(tap)
    try:
        sc.run()
    except Timeout:
        tap.point(False, "the scenario finished within %d s" % OVERALL_TIMEOUT, sc.diag())
    except SystemExit:
        tap.point(False, "the test ran to its end", ["interrupted by a signal"])
    except Exception:  # a bug here must still read as TAP
        import traceback
        tap.point(False, "the driver ran without an exception",
                  traceback.format_exc().splitlines())
    finally:
        sc.cleanup()


def main():
    tap = Tap()
    tap.comment(["a real Envoy %s reports its load to xdsd (LRS)" % ENVOY_VERSION])

    def on_alarm(*_):
        raise Timeout()

    def on_term(signum, _):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, on_term)
    run(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
