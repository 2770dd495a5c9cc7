# SPDX-License-Identifier: Apache-2.0
"""Interop: a real Envoy takes every other type it can from xdsd, scoped
routes, secrets, runtime layers and (over delta) virtual hosts, with
TTLs on some, and carries HTTP and HTTPS traffic through their changes
without a failed request (--api GRPC: state of the world; DELTA_GRPC:
incremental). envoy_traffic.py does the same for listeners, routes,
clusters and endpoints; this driver reuses its Scenario.

  1. Backends on loopback: web (A), api (B), canary (C), and secure (S),
     HTTPS only, which requires a client certificate of the test CA
     (tests/lib/make-certs.sh) and says which one it saw. xdsd serves
     examples/envoy/every-type/snapshots/default/ (over SotW without
     vhds.yaml) with its ports, the certificates inline and shorter TTLs;
     one Envoy starts from examples/envoy/every-type/bootstrap.yaml.
       SRDS  requests to the listener "edge" with x-tenant: tenant-a
             reach A, with tenant-b B (scoped routes from xdsd);
       SDS   an HTTPS client sees the listener "edge-tls" present
             server.pem (its SHA-256 and subject), and S sees Envoy
             present frontend.pem, both secrets from xdsd;
       RTDS  /runtime shows the layer "xdsd" as the runtime
             "edge-runtime" says;
       VHDS  (delta) the host www.example.com reaches A through the
             virtual host Envoy got on connecting, archive.example.com
             (on demand) B once Envoy asked xdsd for it, and a host no
             virtual host serves gets 404 at once.
     Envoy must then hold exactly what xdsd serves, every type at
     xdsd's versions (envoy_harness.differences, more_differences).
  2. Request loops (tenant-a, tenant-b, HTTPS, and over delta
     www.example.com and archive.example.com), each change a SIGHUP: tenant-b's scope moves to
     tenant-a's route configuration (to A), its own dropped; the runtime
     sends tenant-a's (so both tenants) to the canary (C); edge-cert
     rotates to server2.pem; the client certificate to backend.pem;
     (delta) www's virtual host moves to B, the on-demand archive's to
     A, and an on-demand virtual host for news.example.com is added:
     Envoy is not sent it until a request for that host makes it ask.
     After each the loops move as the change says and Envoy holds
     exactly what xdsd serves.
  3. xdstp:// names: a second Envoy (node cluster "xdstp") takes
     examples/envoy/xdstp/snapshots/xdstp.yaml, a resource of every type
     but virtual hosts named by an xdstp name, from
     examples/envoy/xdstp/bootstrap.yaml: its listeners, clusters and
     scoped routes as glob collections (rule X2), route configurations,
     endpoints, an HTTPS listener's secret and its runtime layer by
     name. Request loops (ingress, tenant-a, tenant-b, HTTPS) follow an
     endpoint move, the runtime sending tenant-a to the canary, the
     certificate rotated and a scope moved, its route configuration
     dropped; after each its config dump equals xdsd's.
  4. TTLs: the runtime layer carries one, and so does a cluster "probe"
     the test adds, which no route names; xdsd sends heartbeats and
     Envoy keeps both (and every other cluster, which a SotW heartbeat
     of bodies alone once took away). xdsd then stops: Envoy drops the
     layer when its TTL runs out (tenant-a falls back to A) and then the
     probe, and serves on; xdsd starts again and Envoy is in step once
     more.
  5. Envoy's /stats show no update_rejected and no initial fetch timeout;
     xdsd logged no NACK and no error; no request failed.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
types-sotw.sh, envoy-types-delta.sh); needs XDSD and XDSD_BUILDDIR (work
files in $XDSD_BUILDDIR/tests/interop/envoy-types-<sotw|delta>.work,
kept), XDSD_SCHEMA when set.
"""
import glob
import os
import signal
import ssl
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import summarize_failures  # noqa: E402
import envoy_harness as eh  # noqa: E402
import envoy_traffic as et  # noqa: E402

EXAMPLE = os.path.join(eh.EXAMPLES, "every-type")
BOOTSTRAP = os.path.join(EXAMPLE, "bootstrap.yaml")
SNAPSHOT_DIR = os.path.join(EXAMPLE, "snapshots", "default")
RTDS_LAYERS = {"xdsd": "edge-runtime"}   # the bootstrap's layer: its runtime
XDSTP = os.path.join(eh.EXAMPLES, "xdstp")
XDSTP_ENDPOINTS = "xdstp://cp.example/envoy.config.endpoint.v3.ClusterLoadAssignment/edge/"
XDSTP_ROUTES = "xdstp://cp.example/envoy.config.route.v3.RouteConfiguration/edge/"
XDSTP_SCOPES = "xdstp://cp.example/envoy.config.route.v3.ScopedRouteConfiguration/edge/"
XDSTP_CERT = "xdstp://cp.example/envoy.extensions.transport_sockets.tls.v3.Secret/edge/cert"
XDSTP_RUNTIME = "xdstp://cp.example/envoy.service.runtime.v3.Runtime/edge/flags"
CANARY_KEY = "edge.tenant_a.canary_percent"
# The example's TTL made short enough to run out within the test, and
# the probe's, well after the layer's.
RUNTIME_TTL, PROBE_TTL = "2s", "8s"
RECONNECT = 40        # Envoy's backoff between attempts grows to 30 s
EXPIRY_TIMEOUT = 30   # a TTL run out, from xdsd's end (the longest is 8 s)
HEARTBEATS = 3        # heartbeats of the runtime layer to wait for


def load_example(delta):
    """The example's files merged into one snapshot, as xdsd merges a
    snapshot directory; over SotW without vhds.yaml (VHDS is delta
    only)."""
    snap = {}
    for path in sorted(glob.glob(os.path.join(SNAPSHOT_DIR, "*.yaml"))):
        if not delta and os.path.basename(path) == "vhds.yaml":
            continue
        for section, items in eh.load_yaml(path).items():
            snap.setdefault(section, []).extend(items)
    return snap


def by_name(items, name, key="name"):
    return et.by_name(items, name, key)


def pem(path):
    with open(path) as f:
        return f.read()


class TypesScenario(et.Scenario):
    WORK = "envoy-types"
    WHAT = ("listeners, routes, scoped routes, virtual hosts, clusters, endpoints, secrets "
            "and runtime layers")

    def __init__(self, api, tap):
        super().__init__(api, tap)
        self.node_id = "envoy-types-%s-%d" % (self.mode, os.getpid())
        self.asked = set()   # on-demand virtual hosts Envoy asked for
        self.ports = {}

    # --- what Envoy must hold --------------------------------------------
    def differences(self):
        try:
            xd = self.xdsd.dump(self.key)
            want = self.steps.expected_versions(self.node_id, self.delta)
            sent = {}
            want_more = {"secrets": {
                name: self.steps.version_of("secrets", "SDS", name, self.node_id,
                                            self.delta, sent)
                for name in xd.get("secrets", {}).get("resources", {})}}
            cfg, vhosts = eh.vhds_split(self.envoy.config(), xd, want,
                                        self.steps.sent_versions(self.node_id, "VHDS"))
            return eh.differences(cfg, xd, want) + eh.more_differences(
                self.envoy.config_more(), vhosts, self.envoy.runtime(),
                self.envoy.text_stats(), xd, want_more, self.snap, RTDS_LAYERS, self.asked)
        except (OSError, ValueError, KeyError) as e:
            return ["cannot read a config dump: %r" % e]

    def moves_to(self, loop, pred, desc, since, what):
        """The loop's answers satisfy pred after `since`, within
        MOVE_TIMEOUT s, and every answer after the first of them does."""
        first = loop.answer(lambda r: r["ok"] and pred(r), since, et.MOVE_TIMEOUT)
        if first is None:
            return self.tap.point(False, "%s: requests on %s %s" % (what, loop.name, desc),
                                  ["no such answer within %d s of SIGHUP" % et.MOVE_TIMEOUT]
                                  + self.diag())
        loop.answer(lambda r: r["seq"] > first["seq"], since, et.MOVE_TIMEOUT)
        others = [r for r in loop.snapshot(since) if r["seq"] > first["seq"] and r["ok"]
                  and not pred(r)]
        return self.tap.point(not others, "%s: requests on %s %s (request #%d), and stay so"
                              % (what, loop.name, desc, first["seq"]),
                              ["later answers: %s" % others[:3]] if others else [])

    # --- the run ------------------------------------------------------------
    def setup(self):
        if not super().setup():
            return False
        certs = os.path.join(self.work, "certs")
        out = subprocess.run(["sh", os.path.join(eh.SRCDIR, "tests", "lib", "make-certs.sh"),
                              certs], capture_output=True, text=True, timeout=120)
        self.certs = certs
        return self.tap.point(out.returncode == 0, "tests/lib/make-certs.sh makes the "
                              "certificates (%s)" % certs, out.stderr.splitlines()[-5:])

    def cert(self, name):
        return os.path.join(self.certs, name)

    def secret(self, name, cert, key=None):
        s = by_name(self.snap["secrets"], name)
        if key is None:
            s["validation_context"]["trusted_ca"] = {"inline_string": pem(self.cert(cert))}
        else:
            s["tls_certificate"] = {"certificate_chain": {"inline_string": pem(self.cert(cert))},
                                    "private_key": {"inline_string": pem(self.cert(key))}}

    def start(self):
        tls = {"cert": self.cert("server.pem"), "key": self.cert("server.key"),
               "ca": self.cert("ca.pem")}
        for name in ("A", "B", "C"):
            self.backends[name] = eh.Backend(name)
        self.backends["S"] = eh.Backend("S", tls=tls)
        self.snap = load_example(self.delta)
        for lis in self.snap["listeners"]:
            port = self.ports[lis["name"]] = eh.free_port()
            lis["address"]["socket_address"]["port_value"] = port
        for cluster, b in (("web", "A"), ("api", "B"), ("canary", "C"), ("secure", "S")):
            et.move_endpoints(self.snap, cluster, self.backends[b])
        self.secret("edge-cert", "server.pem", "server.key")
        self.secret("edge-client-cert", "frontend.pem", "frontend.key")
        self.secret("backend-ca", "ca.pem")
        by_name(self.snap["runtimes"], "edge-runtime")["@ttl"] = RUNTIME_TTL
        # a cluster with a TTL that no route names, for its expiry
        probe = dict(by_name(self.snap["clusters"], "canary"), name="probe")
        probe["@ttl"] = PROBE_TTL
        self.snap["clusters"].append(probe)
        self.snap["endpoints"].append(et.endpoints("probe", self.backends["C"]))
        self.xdsd.write_snapshot(self.snap, self.key)
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves examples/envoy/every-type/snapshots/default%s "
                              "on 127.0.0.1:%s" % ("" if self.delta else " (but vhds.yaml)",
                                                   self.xdsd.port), why):
            return False
        self.steps.add(self.xdsd, 0, self.key)
        self.envoy = eh.Envoy(self.envoy_path, self.work, "envoy", self.node_id,
                              self.xdsd.port, self.api, bootstrap=BOOTSTRAP)
        ok, why = self.envoy.start()
        ready = ok and eh.wait_until(self.envoy.ready, et.START_TIMEOUT, 0.1)
        if not self.tap.point(bool(ready), "Envoy (every-type bootstrap, api_type %s) is "
                              "ready within %d s" % (self.api, et.START_TIMEOUT),
                              [] if ready else why + self.diag()):
            return False
        self.https = ssl.create_default_context(cafile=self.cert("ca.pem"))
        if not (self.first_srds() and self.first_sds()):
            return False
        if self.delta and not self.first_vhds():
            return False
        return self.converged("at start")

    def answer(self, port, headers=None, context=None):
        try:
            status, body, resp = eh.http_get(port, "/", headers=headers, context=context)
            return status, body, resp
        except OSError as e:
            return None, str(e), None

    def first_srds(self):
        port = self.ports["edge"]
        got = {}
        for tenant, who in (("tenant-a", "A"), ("tenant-b", "B")):
            r = eh.wait_until(lambda: self.answer(port, {"x-tenant": tenant})[:2] == (200, who),
                              et.START_TIMEOUT, 0.1)
            got[tenant] = self.answer(port, {"x-tenant": tenant})[:2]
            if not r:
                break
        status = self.answer(port, {"x-tenant": "tenant-z"})[0]
        ok = got == {"tenant-a": (200, "A"), "tenant-b": (200, "B")} and status == 404
        return self.tap.point(ok, "SRDS: through the listener edge, x-tenant tenant-a reaches "
                              "backend A and tenant-b B (their scoped routes), an unknown "
                              "tenant gets 404 (%s)" % status,
                              [] if ok else ["answers %s" % got] + self.diag())

    def first_sds(self):
        port = self.ports["edge-tls"]
        r = eh.wait_until(lambda: self.answer(port, context=self.https)[0] == 200,
                          et.START_TIMEOUT, 0.1)
        status, body, resp = self.answer(port, context=self.https)
        server = eh.cert_name(self.cert("server.pem"))
        client = eh.cert_name(self.cert("frontend.pem"))
        seen = (resp.peer_sha256 if resp else None, resp.getheader("x-client-cert")
                if resp else None)
        ok = bool(r) and body == "S" and seen == (server.split()[-1], client)
        return self.tap.point(ok, "SDS: over HTTPS the listener edge-tls presents edge-cert "
                              "(server.pem, %s), and backend S sees Envoy present "
                              "edge-client-cert (%s)" % (server.split()[0] + " ...",
                                                         client.split()[0]),
                              [] if ok else ["answer %s %r, certificates %s, expected %s"
                                             % (status, body, seen, (server, client))]
                              + self.diag())

    def first_vhds(self):
        port = self.ports["edge-vhds"]
        www = eh.wait_until(lambda: self.answer(port, {"Host": "www.example.com"})[:2]
                            == (200, "A"), et.START_TIMEOUT, 0.1)
        before = [ln for ln in self.xdsd.lines() if "VHDS request: " in ln]
        if not self.tap.point(bool(www) and len(before) == 1 and " 0 names" in before[0],
                              "VHDS: www.example.com reaches backend A through the virtual "
                              "host Envoy was sent for its first VHDS request, which names "
                              "none", before[:3] + ([] if www else self.diag())):
            return False
        mark = len(self.xdsd.lines())
        status, body, _ = self.answer(port, {"Host": "archive.example.com"})
        asked = [ln for ln in self.xdsd.lines()[mark:] if "VHDS request: 1 names" in ln]
        self.asked.add("edge-vhds/archive")
        self.tap.point((status, body) == (200, "B") and len(asked) == 1,
                       "VHDS on demand: archive.example.com, whose virtual host is "
                       "\"@on_demand\", reaches backend B once Envoy asked xdsd for it "
                       "(%d request)" % len(asked),
                       ["answer %s %r" % (status, body)] + asked[:3] + self.xdsd.log_tail(10))
        status, body, _ = self.answer(port, {"Host": "nowhere.example.com"})
        return self.tap.point(status == 404, "VHDS on demand: a host no virtual host serves "
                              "is answered 404 once xdsd said it does not exist (%s)" % status,
                              [] if status == 404 else [body] + self.diag())

    def changes(self):
        edge, tls = self.ports["edge"], self.ports["edge-tls"]
        ta = eh.Traffic("tenant-a", edge, "/", self.backends, et.INTERVAL,
                        headers={"x-tenant": "tenant-a"}).start()
        tb = eh.Traffic("tenant-b", edge, "/", self.backends, et.INTERVAL,
                        headers={"x-tenant": "tenant-b"}).start()
        https = eh.Traffic("edge-tls", tls, "/", self.backends, et.INTERVAL,
                           context=self.https).start()
        self.loops += [ta, tb, https]
        if self.delta:
            # www's virtual host came with the first answer, archive's
            # on demand (first_vhds asked for it)
            www, archive = (eh.Traffic(host, self.ports["edge-vhds"], "/", self.backends,
                                       et.INTERVAL, headers={"Host": host}).start()
                            for host in ("www.example.com", "archive.example.com"))
            self.loops += [www, archive]
        if not all(loop.answer(lambda r: r["ok"], 0, et.MOVE_TIMEOUT) for loop in self.loops):
            return self.tap.point(False, "the request loops are answered", self.diag())

        # A scope moved to a route configuration Envoy holds already: one
        # it does not hold yet, it asks for only once it read the scope,
        # which answers 404 meanwhile (tests/interop/README.md).
        what = "SRDS, scope tenant-b moved to tenant-a's route configuration (to A)"

        def move_scope(s):
            # the old route configuration goes: no scope names it
            s["routes"].remove(by_name(s["routes"], "tenant-b"))
            by_name(s["scoped_routes"], "tenant-b")["route_configuration_name"] = "tenant-a"
        t = self.reload(what, move_scope)
        if t is None or not self.moves(tb, "A", t, what) or not self.converged(what):
            return False
        stay = not [r for r in ta.snapshot(t) if r["ok"] and r["who"] != "A"]
        self.tap.point(stay, "%s: tenant-a's requests stay on backend A (its scope kept)"
                       % what, [] if stay else self.diag())

        what = "RTDS, %s set to 100 (tenant-a to the canary)" % CANARY_KEY
        t = self.reload(what, lambda s: by_name(s["runtimes"], "edge-runtime")["layer"]
                        .update({CANARY_KEY: 100}))
        if t is None or not self.moves(ta, "C", t, what) or not self.converged(what):
            return False

        what = "SDS, edge-cert rotated to server2.pem"
        new = eh.cert_name(self.cert("server2.pem")).split()[-1]
        t = self.reload(what, lambda s: self.secret("edge-cert", "server2.pem", "server2.key"))
        if t is None or not self.moves_to(https, lambda r: r["cert"] == new,
                                          "see server2.pem", t, what) \
                or not self.converged(what):
            return False

        what = "SDS, edge-client-cert rotated to backend.pem"
        client = eh.cert_name(self.cert("backend.pem"))
        t = self.reload(what, lambda s: self.secret("edge-client-cert", "backend.pem",
                                                    "backend.key"))
        if t is None or not self.moves_to(https, lambda r: r["client"] == client,
                                          "reach S with backend.pem", t, what) \
                or not self.converged(what):
            return False

        if self.delta:
            what = "VHDS, virtual host edge-vhds/www routed to api (B)"
            t = self.reload(what, lambda s: by_name(s["virtual_hosts"], "edge-vhds/www")
                            ["routes"][0].update(route={"cluster": "api"}))
            if t is None or not self.moves(www, "B", t, what) or not self.converged(what):
                return False
            what = "VHDS on demand, edge-vhds/archive (asked for) routed to web (A)"
            t = self.reload(what, lambda s: by_name(s["virtual_hosts"], "edge-vhds/archive")
                            ["routes"][0].update(route={"cluster": "web"}))
            if t is None or not self.moves(archive, "A", t, what) or not self.converged(what):
                return False
            return self.vhds_added()
        return True

    def vhds_added(self):
        """An on-demand virtual host added under load: Envoy, subscribed
        to VHDS by wildcard, is not sent it; the first request for its
        host makes Envoy ask for it, and that request is answered."""
        what = "VHDS on demand, edge-vhds/news added"
        news = {"name": "edge-vhds/news", "@on_demand": True, "domains": ["news.example.com"],
                "routes": [{"match": {"prefix": "/"}, "route": {"cluster": "canary"}}]}
        t = self.reload(what, lambda s: s["virtual_hosts"].append(news))
        if t is None or not self.converged("%s, not asked for" % what):
            return False
        mark = len(self.xdsd.lines())
        status, body, _ = self.answer(self.ports["edge-vhds"], {"Host": "news.example.com"})
        asked = [ln for ln in self.xdsd.lines()[mark:] if "VHDS request: 1 names" in ln]
        self.asked.add("edge-vhds/news")
        if not self.tap.point((status, body) == (200, "C") and len(asked) == 1,
                              "%s: the first request for news.example.com reaches backend C "
                              "once Envoy asked xdsd for it (%d request)" % (what, len(asked)),
                              ["answer %s %r" % (status, body)] + asked[:3]
                              + self.xdsd.log_tail(10)):
            return False
        return self.converged("%s, asked for" % what)

    def xdstp_differences(self, envoy, steps, node, snap):
        """How the xdstp Envoy differs from xdsd's snapshot "xdstp", as
        differences() for the first Envoy."""
        try:
            xd = self.xdsd.dump("xdstp")
            sent = {}
            want_more = {"secrets": {
                name: steps.version_of("secrets", "SDS", name, node, self.delta, sent)
                for name in xd.get("secrets", {}).get("resources", {})}}
            return eh.differences(envoy.config(), xd, steps.expected_versions(
                node, self.delta)) + eh.more_differences(
                envoy.config_more(), {}, envoy.runtime(), envoy.text_stats(), xd,
                want_more, snap, {"xdsd": XDSTP_RUNTIME})
        except (OSError, ValueError, KeyError) as e:
            return ["cannot read a config dump: %r" % e]

    def xdstp(self):
        """A second Envoy, every resource named by an xdstp name: its
        listeners, clusters and scoped routes by glob collection, its
        route configurations, endpoints, secret and runtime layer by
        name; traffic through each while they change."""
        what = "xdstp names"
        node = "envoy-xdstp-%s-%d" % (self.mode, os.getpid())
        snap = eh.load_yaml(os.path.join(XDSTP, "snapshots", "xdstp.yaml"))
        ports = {}
        for lis in snap["listeners"]:
            port = ports[lis["name"].rsplit("/", 1)[1]] = eh.free_port()
            lis["address"]["socket_address"]["port_value"] = port
        for cluster, b in (("web", "A"), ("api", "B"), ("canary", "C")):
            et.move_endpoints(snap, XDSTP_ENDPOINTS + cluster, self.backends[b])

        def use_cert(s, name):
            by_name(s["secrets"], XDSTP_CERT)["tls_certificate"] = {
                "certificate_chain": {"inline_string": pem(self.cert(name + ".pem"))},
                "private_key": {"inline_string": pem(self.cert(name + ".key"))}}
        use_cert(snap, "server")
        steps = eh.Steps()

        def reload(change):
            change(snap)
            self.xdsd.write_snapshot(snap, key="xdstp")
            t = time.monotonic()
            ok, line, mark = self.xdsd.reload()
            if not self.tap.point(ok, "%s: xdsd reloads on SIGHUP" % what,
                                  [] if ok else [line] + self.xdsd.log_tail()):
                return None
            steps.add(self.xdsd, mark, "xdstp")
            self.steps.add(self.xdsd, mark, self.key)   # nothing changed for the other Envoy
            return t
        if reload(lambda s: None) is None:
            return False
        boot = os.path.join(XDSTP, "bootstrap.yaml")
        envoy = eh.Envoy(self.envoy_path, self.work, "envoy-xdstp", node, self.xdsd.port,
                         self.api, cluster="xdstp", bootstrap=boot)
        loops = []

        def same(desc):
            diffs = [] if eh.wait_until(
                lambda: not self.xdstp_differences(envoy, steps, node, snap),
                et.CONVERGE_TIMEOUT, 0.2) else self.xdstp_differences(envoy, steps, node, snap)
            now = time.monotonic()
            slow = [loop.name for loop in loops
                    if not loop.count(now, et.UNDER_LOAD, et.MOVE_TIMEOUT)]
            return self.tap.point(
                not diffs and not slow, "%s: the xdstp Envoy holds exactly xdsd's listeners, "
                "routes, scoped routes, clusters, endpoints, secret and runtime layer, at "
                "xdsd's versions, and carries %d requests per loop so" % (desc, et.UNDER_LOAD),
                diffs[:10] + ["loop %s completed fewer" % n for n in slow] +
                (envoy.log_tail(5) if diffs else []))
        try:
            ok, why = envoy.start()
            ready = ok and eh.wait_until(envoy.ready, et.START_TIMEOUT, 0.1)
            if not self.tap.point(bool(ready), "%s: an Envoy from %s is ready" % (
                    what, os.path.relpath(boot, eh.SRCDIR)), [] if ready else
                    why + envoy.log_tail()):
                return False
            types = {t["type"]: t for c in self.xdsd.client(node) for t in c["types"]}
            by = {t: (types.get(t, {}).get("wildcard"), types.get(t, {}).get("names"))
                  for t in ("listeners", "clusters", "scoped_routes")}
            self.tap.point(by == {t: (False, 1) for t in by},
                           "%s: Envoy asks for its listeners, clusters and scoped routes as "
                           "one glob collection each (/clients: %s)" % (what, by), [])
            ingress = eh.Traffic("xdstp-ingress", ports["ingress"], "/", self.backends,
                                 et.INTERVAL).start()
            ta = eh.Traffic("xdstp-tenant-a", ports["tenants"], "/", self.backends,
                            et.INTERVAL, headers={"x-tenant": "tenant-a"}).start()
            tb = eh.Traffic("xdstp-tenant-b", ports["tenants"], "/", self.backends,
                            et.INTERVAL, headers={"x-tenant": "tenant-b"}).start()
            tls = eh.Traffic("xdstp-tls", ports["tls"], "/", self.backends, et.INTERVAL,
                             context=self.https).start()
            loops += [ingress, ta, tb, tls]
            first = {loop.name: loop.answer(lambda r: r["ok"], 0, et.MOVE_TIMEOUT)
                     for loop in loops}
            got = {n: (r["who"], r["cert"]) if r else None for n, r in first.items()}
            server = eh.cert_name(self.cert("server.pem")).split()[-1]
            want = {"xdstp-ingress": ("A", None), "xdstp-tenant-a": ("A", None),
                    "xdstp-tenant-b": ("B", None), "xdstp-tls": ("A", server)}
            if not self.tap.point(got == want, "%s: requests reach A through the listener, "
                                  "route configuration, cluster and endpoints named by xdstp "
                                  "names; by x-tenant tenant-a A and tenant-b B through "
                                  "scoped routes of a glob collection; over HTTPS with the "
                                  "secret edge/cert (server.pem)" % what,
                                  ["first answers %s, expected %s" % (got, want)]
                                  + envoy.log_tail(5)):
                return False
            if not same("%s at start" % what):
                return False

            desc = "%s, endpoints of web moved to B" % what
            t = reload(lambda s: et.move_endpoints(s, XDSTP_ENDPOINTS + "web",
                                                    self.backends["B"]))
            if t is None or not all(self.moves(loop, "B", t, desc) for loop in
                                    (ingress, ta, tls)) or not same(desc):
                return False

            desc = "%s, RTDS layer's %s set to 100" % (what, CANARY_KEY)
            t = reload(lambda s: by_name(s["runtimes"], XDSTP_RUNTIME)["layer"]
                       .update({CANARY_KEY: 100}))
            if t is None or not self.moves(ta, "C", t, desc) or not same(desc):
                return False

            desc = "%s, edge/cert rotated to server2.pem" % what
            new = eh.cert_name(self.cert("server2.pem")).split()[-1]
            t = reload(lambda s: use_cert(s, "server2"))
            if t is None or not self.moves_to(tls, lambda r: r["cert"] == new,
                                              "see server2.pem", t, desc) or not same(desc):
                return False

            desc = ("%s, scope tenant-b moved to tenant-a's route configuration, its own "
                    "dropped" % what)

            def move_scope(s):
                s["routes"].remove(by_name(s["routes"], XDSTP_ROUTES + "tenant-b"))
                by_name(s["scoped_routes"], XDSTP_SCOPES + "tenant-b").update(
                    route_configuration_name=XDSTP_ROUTES + "tenant-a")
            t = reload(move_scope)
            if t is None or not self.moves(tb, "C", t, desc) or not same(desc):
                return False
            for loop in loops:
                loop.stop()
            for loop in loops:
                fails = loop.failures()
                self.tap.point(not fails, "%s: no request on %s failed (%d requests)"
                               % (what, loop.name, len(loop.snapshot())),
                               summarize_failures(fails))
            return True
        finally:
            for loop in loops:
                loop.stop()
            rc = envoy.stop()
            self.tap.point(rc == 0, "%s: the second Envoy exits 0 (status %s)" % (what, rc),
                           [] if rc == 0 else envoy.log_tail())

    def heartbeats(self):
        """TTLs kept while heartbeats come: HEARTBEATS of the runtime
        layer's and one of the clusters' after the last change, Envoy
        still in step."""
        what = "TTL heartbeats"
        mark = len(self.xdsd.lines())

        def beats():
            lines = self.xdsd.lines()[mark:]
            rtds = [ln for ln in lines if "heartbeat of RTDS" in ln]
            cds = [ln for ln in lines if "heartbeat of CDS" in ln]
            return (rtds, cds) if len(rtds) >= HEARTBEATS and cds else None
        got = eh.wait_until(beats, 20, 0.2)
        if not self.tap.point(bool(got), "%s: xdsd sends Envoy heartbeats of the runtime "
                              "layer (%s TTL) and the clusters (probe: %s)"
                              % (what, RUNTIME_TTL, PROBE_TTL),
                              (got[0][:1] + got[1][:1]) if got else self.xdsd.log_tail()):
            return False
        return self.converged("%s: after %d of the runtime layer's" % (what, HEARTBEATS))

    def expiry(self):
        """xdsd goes: Envoy drops the runtime layer when its TTL runs out,
        then the probe cluster, and serves on; xdsd comes back, and Envoy
        takes both again."""
        what = "TTLs without xdsd"
        ta = self.loops[0]
        rc = self.xdsd.stop()
        t = time.monotonic()
        if not self.tap.point(rc == 0, "%s: xdsd exits 0 on SIGTERM (status %s)" % (what, rc),
                              [] if rc == 0 else self.xdsd.log_tail()):
            return

        def layer_gone():
            rt = self.envoy.runtime()
            i = rt.get("layers", []).index("xdsd")
            vals = rt.get("entries", {}).get(CANARY_KEY, {}).get("layer_values", [])
            return i >= len(vals) or vals[i] == ""
        gone = eh.wait_until(layer_gone, EXPIRY_TIMEOUT, 0.1)
        probe = "probe" in self.envoy.config()["clusters"]["resources"]
        self.tap.point(bool(gone) and probe, "%s: Envoy drops the runtime layer's key once "
                       "its TTL (%s) runs out, while the probe cluster (%s) is still there"
                       % (what, RUNTIME_TTL, PROBE_TTL),
                       [] if gone and probe else ["layer gone: %s, probe held: %s"
                                                  % (bool(gone), probe)])
        if gone:
            self.moves(ta, "A", t, "%s: tenant-a without the layer" % what)
        dropped = eh.wait_until(lambda: "probe" not in
                                self.envoy.config()["clusters"]["resources"],
                                EXPIRY_TIMEOUT, 0.1)
        clusters = sorted(self.envoy.config()["clusters"]["resources"])
        self.tap.point(bool(dropped) and clusters == ["api", "canary", "secure", "web"],
                       "%s: then Envoy drops the probe cluster, its TTL run out, and keeps "
                       "the others (%s)" % (what, ", ".join(clusters)), [] if dropped else
                       self.envoy.log_tail(10))
        old = self.xdsd
        self.xdsd = eh.Xdsd(old.binary, old.schema, self.work, port=old.port, name="xdsd-2")
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "%s: xdsd starts again on port %d" % (what, old.port), why):
            return
        self.steps.add(self.xdsd, 0, self.key)
        # Envoy comes back on its own backoff, up to 30 s apart after an
        # outage this long: the change is timed from its reconnection
        back = eh.wait_until(lambda: any("node '%s': client connected" % self.node_id in ln
                                         for ln in self.xdsd.lines()), RECONNECT, 0.2)
        if not self.tap.point(back, "%s: Envoy connects to xdsd again (within its backoff, "
                              "%d s)" % (what, RECONNECT), self.envoy.log_tail(5)):
            return
        t = time.monotonic()
        what = "xdsd back after the TTLs ran out"
        if self.moves(ta, "C", t, "%s: tenant-a to the canary again" % what):
            self.converged(what)

    def run(self):
        if not self.setup():
            return
        signal.alarm(et.OVERALL_TIMEOUT)
        if self.start() and self.changes() and self.xdstp() and self.heartbeats():
            self.checks()
            self.expiry()
        else:
            self.checks()
        self.check_traffic()
        self.stop()


if __name__ == "__main__":
    sys.exit(et.main(TypesScenario, __doc__, "takes scoped routes, secrets, runtime layers "
                     "and virtual hosts from xdsd"))
