# SPDX-License-Identifier: Apache-2.0
"""Interop: real Envoys fetch clusters from xdsd on demand (on-demand CDS,
docs/protocol.md rule D12), with the `on_demand` HTTP filter whose
`odcds` config source is xdsd over delta ADS (on-demand CDS needs
delta).

  1. Backends A and B; xdsd serves each Envoy a snapshot of its own
     (keyed by its node cluster), the example's (listener on a port of
     the Envoy's own, RDS "main" routing / to the EDS cluster "web" at A)
     with the on_demand filter before the router (odcds over ADS,
     timeout 120 s) and a route /by-header to the cluster a request
     names in x-cluster (cluster_header). Two delta Envoys: "named",
     started from examples/envoy/bootstrap.yaml without its cds_config
     (every cluster it has comes on demand), and "wildcard", with it
     (its CDS subscription is a wildcard, the on-demand names beside it);
     the wildcard Envoy's snapshot routes every request by x-cluster and
     has no cluster at first: its wildcard is answered empty (rule D2).
  2. on_demand: the named Envoy is ready and xdsd sent it no cluster; its
     first request for / makes it ask for "web" by name (xdsd's /clients:
     CDS not a wildcard), then for web's endpoints: the request is
     answered by A, and Envoy holds web at xdsd's version.
  3. fail_fast: on each Envoy a request naming cluster "late", which the
     snapshot lacks, is answered 503 on xdsd's answer (xdsd logged a CDS
     response saying one name missing; Envoy logged "cluster late not
     found during on-demand discovery", not its timeout), well before
     the 120 s the filter would wait. The wildcard Envoy's CDS on
     /clients is a wildcard with a name beside it.
  4. comes_later: a second request for "late" is held (Envoy, subscribed
     to it already, asks nothing more); a reload brings "late" (at B):
     xdsd sends it, and the held request is answered by B, on each
     Envoy; a new one is too.
  5. No update_rejected, no init_fetch_timeout (the wildcard Envoy's
     empty CDS was answered, not waited out for 15 s), no NACK, no
     error; the Envoys and xdsd exit 0.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
odcds.sh); needs XDSD and XDSD_BUILDDIR (work files in
$XDSD_BUILDDIR/tests/interop/envoy-odcds.work, kept), XDSD_SCHEMA when set.
"""
import os
import signal
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap, run_scenario  # noqa: E402
import envoy_harness as eh  # noqa: E402
from envoy_traffic import ENVOY_VERSION, by_name  # noqa: E402

START_TIMEOUT = 30
WAIT = 20               # a reload's or a request's effect
ODCDS_TIMEOUT = 120     # how long the on_demand filter holds a request
REQUEST_TIMEOUT = 60    # the client's own patience: below ODCDS_TIMEOUT
OVERALL_TIMEOUT = 240
ON_DEMAND = "type.googleapis.com/envoy.extensions.filters.http.on_demand.v3.OnDemand"


class Proxy:
    """One delta Envoy and its snapshot (keyed by its node cluster);
    `wildcard`: it keeps the bootstrap's cds_config."""

    def __init__(self, wildcard):
        self.wildcard = wildcard
        self.mode = "wildcard" if wildcard else "named"
        self.node_id = "odcds-%s-%d" % (self.mode, os.getpid())
        self.key = "odcds-" + self.mode
        self.port = eh.free_port()
        self.envoy = None
        self.snap = None

    def edit(self, boot):
        if not self.wildcard:
            del boot["dynamic_resources"]["cds_config"]


def get(port, path, cluster=None, timeout=5.0):
    """(status, body) of GET path, naming `cluster` in x-cluster; raises
    OSError when there is no answer."""
    status, body, _ = eh.http_get(port, path, timeout,
                                  headers={"x-cluster": cluster} if cluster else None)
    return status, body


class Scenario(eh.Ending):
    def __init__(self, tap):
        self.tap = tap
        self.work = None
        self.backends = {}
        self.xdsd = None
        self.proxies = [Proxy(False), Proxy(True)]

    def diag(self, p=None):
        out = []
        for q in [p] if p else self.proxies:
            if q.envoy:
                out += q.envoy.log_tail(12)
        if self.xdsd:
            out += self.xdsd.log_tail(20)
        return out

    def envoy_lines(self, p, needle):
        try:
            with open(p.envoy.log, errors="replace") as f:
                return [ln for ln in f if needle in ln]
        except OSError:
            return []

    def cds_state(self, p):
        """The node's CDS on xdsd's /clients, or {}."""
        return eh.type_states(self.xdsd, p.node_id).get("clusters", {})

    def snapshot(self, p):
        snap = eh.fleet_snapshot(p.port, self.backends["A"])
        hcm = by_name(snap["listeners"], "ingress")["filter_chains"][0]["filters"][0][
            "typed_config"]
        hcm["http_filters"].insert(0, {"name": "envoy.filters.http.on_demand", "typed_config": {
            "@type": ON_DEMAND, "odcds": {
                "source": {"ads": {}, "resource_api_version": "V3"},
                "timeout": "%ds" % ODCDS_TIMEOUT}}})
        routes = by_name(snap["routes"], "main")["virtual_hosts"][0]["routes"]
        by_header = {"match": {"prefix": "/by-header"},
                     "route": {"cluster_header": "x-cluster"}}
        if p.wildcard:
            # no cluster at first: its wildcard starts empty
            routes[:] = [by_header]
            del snap["clusters"], snap["endpoints"]
        else:
            routes.insert(0, by_header)
        return snap

    # --- the run ----------------------------------------------------------
    def setup(self):
        got = eh.prepare(self.tap, "envoy-odcds")
        if got is None:
            return False
        self.work, binary, self.envoy_path = got
        self.xdsd = eh.Xdsd(binary, os.environ.get("XDSD_SCHEMA", ""), self.work)
        return True

    def start(self):
        for name in ("A", "B"):
            self.backends[name] = eh.Backend(name)
        for p in self.proxies:
            p.snap = self.snapshot(p)
            self.xdsd.write_snapshot(p.snap, p.key)
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves each Envoy the example snapshot with the "
                              "on_demand filter (odcds over ADS) and a route by x-cluster", why):
            return False
        for p in self.proxies:
            p.envoy = eh.Envoy(self.envoy_path, self.work, "envoy-" + p.mode, p.node_id,
                               self.xdsd.port, "DELTA_GRPC", cluster=p.key, edit=p.edit)
            started, why = eh.start_ready(p.envoy, START_TIMEOUT)
            ok &= self.tap.point(started, "the %s Envoy (delta ADS, %s) is ready"
                                 % (p.mode, "CDS by wildcard" if p.wildcard else
                                    "no CDS subscription of its own"), why)
        return ok

    def on_demand(self):
        """The named Envoy asks for a route's cluster when a request
        needs it, and the request is served."""
        p = self.proxies[0]
        before = [t for _, t, _ in self.xdsd.sent(p.node_id)]
        self.tap.point("CDS" not in before, "on_demand: xdsd sent the named Envoy no cluster "
                       "before a request needed one (%s)" % ", ".join(before))
        mark = len(self.xdsd.lines())
        try:
            got = get(p.port, "/", timeout=REQUEST_TIMEOUT)
        except OSError as e:
            got = ("error", str(e))
        self.tap.point(got == (200, "A"), "on_demand: the named Envoy's first request for / "
                       "is answered by backend A (%s)" % (got,), [] if got == (200, "A")
                       else self.diag(p))
        sent = [t for _, t, _ in self.xdsd.sent(p.node_id, mark)]
        cds = self.cds_state(p)
        self.tap.point(sent[:1] == ["CDS"] and "EDS" in sent and cds.get("wildcard") is False
                       and cds.get("names") == 1,
                       "on_demand: the request made it ask xdsd for \"web\" by name, then for "
                       "its endpoints (%s; /clients: CDS wildcard %s, %s names)"
                       % (", ".join(sent), cds.get("wildcard"), cds.get("names")))

        def holds_web():
            try:
                c = p.envoy.config()["clusters"]["resources"]
                x = self.xdsd.dump(p.key)["clusters"]["resources"]
            except (OSError, ValueError, KeyError):
                return None
            return "web" in c and c["web"]["version"] == x["web"]["version"] or None
        ok = eh.wait_until(holds_web, WAIT, 0.2)
        self.tap.point(bool(ok), "on_demand: the named Envoy holds web at xdsd's version")

    def fail_fast(self):
        """A request for a cluster the snapshot lacks fails on xdsd's
        answer, beside a wildcard and without one."""
        for p in self.proxies:
            mark = len(self.xdsd.lines())
            try:
                got = get(p.port, "/by-header", "late", timeout=REQUEST_TIMEOUT)
            except OSError as e:
                got = ("no answer within %d s" % REQUEST_TIMEOUT, str(e))
            self.tap.point(got[0] == 503, "fail_fast: the %s Envoy answers a request for cluster "
                           "\"late\", which xdsd lacks, with 503 (%s)" % (p.mode, got[0]),
                           [] if got[0] == 503 else self.diag(p))
            told = [ln for ln in self.xdsd.lines()[mark:]
                    if "node '%s': sending CDS" % p.node_id in ln and " 1 missing," in ln]
            found = self.envoy_lines(p, "cluster late not found during on-demand discovery")
            late = self.envoy_lines(p, "on-demand discovery for cluster late timed out")
            self.tap.point(bool(told) and bool(found) and not late,
                           "fail_fast: xdsd told the %s Envoy \"late\" does not exist, and the "
                           "Envoy failed the request on that answer, not on its %d s timeout"
                           % (p.mode, ODCDS_TIMEOUT),
                           (told or ["xdsd logged no CDS response with 1 missing"])[:1] +
                           (found or ["Envoy did not log 'cluster late not found'"])[:1] + late)
        cds = self.cds_state(self.proxies[1])
        self.tap.point(cds.get("wildcard") is True and (cds.get("names") or 0) >= 1,
                       "fail_fast: the wildcard Envoy's CDS on /clients is a wildcard with "
                       "names beside it (%s names)" % cds.get("names"), [str(cds)])

    def comes_later(self):
        """A held request for "late" is served once xdsd sends it."""
        held = {}
        threads = []
        for p in self.proxies:
            skipped = len(self.envoy_lines(p, "resource late is already subscribed to"))

            def ask(p=p):
                try:
                    held[p.mode] = get(p.port, "/by-header", "late", timeout=REQUEST_TIMEOUT)
                except OSError as e:
                    held[p.mode] = ("no answer", str(e)[:80])
            t = threading.Thread(target=ask, daemon=True)
            t.start()
            threads.append(t)
            # the request is held once Envoy passed on asking again
            waiting = eh.wait_until(lambda: len(self.envoy_lines(
                p, "resource late is already subscribed to")) > skipped or
                p.mode in held, WAIT, 0.05)
            self.tap.point(bool(waiting) and p.mode not in held,
                           "comes_later: the %s Envoy holds a second request for \"late\", "
                           "asking xdsd nothing more" % p.mode,
                           ["answered already: %s" % (held.get(p.mode),)] if p.mode in held
                           else [])
        for p in self.proxies:
            p.snap.setdefault("clusters", []).append({
                "name": "late", "type": "STATIC", "connect_timeout": "1s",
                "load_assignment": {"cluster_name": "late", "endpoints": [{"lb_endpoints": [
                    {"endpoint": {"address": self.backends["B"].address()}}]}]}})
            self.xdsd.write_snapshot(p.snap, p.key)
        ok, line, _ = self.xdsd.reload()
        self.tap.point(ok, "comes_later: a reload brings cluster \"late\" (at B)", [line])
        for t in threads:
            t.join(REQUEST_TIMEOUT + 5)
        for p in self.proxies:
            got = held.get(p.mode)
            self.tap.point(got == (200, "B"), "comes_later: the %s Envoy's held request is "
                           "answered by backend B once xdsd sends \"late\" (%s)" % (p.mode, got),
                           [] if got == (200, "B") else self.diag(p))
            try:
                again = get(p.port, "/by-header", "late")
            except OSError as e:
                again = ("error", str(e))
            self.tap.point(again == (200, "B"), "comes_later: a new request for \"late\" on the "
                           "%s Envoy is answered by B (%s)" % (p.mode, again))

    def checks(self):
        for p in self.proxies:
            self.stats_clean(p.mode, p.envoy, " (its CDS wildcard, empty at first, was answered "
                             "at once, rule D2)" if p.wildcard else "")
        self.log_clean()

    def run(self):
        if not self.setup():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if self.start():
            self.on_demand()
            self.fail_fast()
            self.comes_later()
            self.checks()
        self.stop()


def main():
    tap = Tap()
    tap.comment(["real Envoys %s fetch clusters from xdsd on demand (delta ADS)"
                 % ENVOY_VERSION])
    return run_scenario(tap, Scenario(tap), OVERALL_TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
