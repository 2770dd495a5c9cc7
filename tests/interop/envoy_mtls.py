# SPDX-License-Identifier: Apache-2.0
"""Interop: real Envoys reach xdsd over mutual TLS, each proving an
identity, and each is served only the secrets (SDS) that identity may
have.

  1. Certificates by tests/lib/make-certs.sh: a CA, xdsd's (localhost,
     127.0.0.1), two client certificates whose URI SANs are
     spiffe://example.org/ns/prod/sa/frontend and .../backend, and two
     more server certificates ("xdsd server one" and "two") that the
     Envoys' listeners present. xdsd runs with the settings of
     examples/envoy/mtls/xdsd.yaml (mTLS only; each identity may speak
     for its own node ids) and serves examples/envoy/mtls/snapshots/
     default.yaml: a listener and a certificate (a Secret) per identity,
     each "@allow"ed to it, and the route, cluster and endpoints of
     everyone (web at backend A).
  2. Two Envoys start from examples/envoy/mtls/bootstrap.yaml, the xds
     cluster presenting one client certificate each: "frontend" over
     state-of-the-world ADS, "backend" over delta ADS. Each also has a
     static listener of its own (in its bootstrap, as a compromised or
     misconfigured proxy might) whose certificate it asks xdsd for by
     the other identity's secret name.
  3. For each Envoy: xdsd's /clients shows its stream with its identity;
     it holds exactly its own listener and its own certificate; the
     other's secret, which it asked for, it never got (warming in its
     config dump, never in a response: xdsd's log says who asked for
     what and why it was withheld, and /metrics counts it); HTTPS
     requests through its listener reach backend A and meet its own
     certificate; a TLS handshake with the listener that wants the
     other's secret fails (it has no certificate).
  4. No NACK, no error; the Envoys exit 0, xdsd too.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
mtls.sh); needs XDSD and XDSD_BUILDDIR (work files in
$XDSD_BUILDDIR/tests/interop/envoy-mtls.work, kept), XDSD_SCHEMA when set.
"""
import copy
import os
import signal
import ssl
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap, run_scenario  # noqa: E402
import envoy_harness as eh  # noqa: E402
from envoy_traffic import ENVOY_VERSION, by_name  # noqa: E402

START_TIMEOUT = 30
WAIT = 20
REQUESTS = 10           # HTTPS requests through each Envoy's listener
OVERALL_TIMEOUT = 180
MTLS = os.path.join(eh.EXAMPLES, "mtls")
SPIFFE = "spiffe://example.org/ns/prod/sa/"
TLS_SOCKET = "envoy.transport_sockets.tls"
DOWNSTREAM_TLS = ("type.googleapis.com/envoy.extensions.transport_sockets.tls.v3."
                  "DownstreamTlsContext")
HCM = ("type.googleapis.com/envoy.extensions.filters.network."
       "http_connection_manager.v3.HttpConnectionManager")


class Proxy:
    """One Envoy: its identity (the certificate it presents to xdsd),
    its listener and secret in the snapshot, the certificate that
    listener presents, and the other identity's secret it asks for."""

    def __init__(self, who, api, serving_cert, subject, other):
        self.who, self.api = who, api
        self.identity = SPIFFE + who
        self.node_id = "%s-%d" % (who, os.getpid())
        self.listener = who + "-https"
        self.secret = who + "-cert"
        self.serving_cert, self.subject = serving_cert, subject
        self.stolen = other + "-cert"
        self.port = eh.free_port()
        self.steal_port = eh.free_port()
        self.envoy = None


class Scenario(eh.Ending):
    def __init__(self, tap):
        self.tap = tap
        self.work = None
        self.backends = {}
        self.xdsd = None
        self.proxies = [Proxy("frontend", "GRPC", "server", "xdsd server one", "backend"),
                        Proxy("backend", "DELTA_GRPC", "server2", "xdsd server two", "frontend")]

    def cert(self, name):
        return os.path.join(self.work, "certs", name)

    def diag(self):
        out = []
        for p in self.proxies:
            if p.envoy:
                out += p.envoy.log_tail(12)
        if self.xdsd:
            out += self.xdsd.log_tail(25)
        return out

    # --- the run ----------------------------------------------------------
    def setup(self):
        got = eh.prepare(self.tap, "envoy-mtls")
        if got is None:
            return False
        self.work, _, self.envoy_path = got
        script = os.path.join(eh.SRCDIR, "tests", "lib", "make-certs.sh")
        p = subprocess.run(["sh", script, os.path.join(self.work, "certs")],
                           capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        need = [n + ext for n in ("ca", "server", "server2", "frontend", "backend")
                for ext in (".pem", ".key") if n + ext != "ca.key"]
        missing = [n for n in need if not os.path.isfile(self.cert(n))]
        return self.tap.point(p.returncode == 0 and not missing,
                              "certificates made by tests/lib/make-certs.sh (CA, xdsd's, "
                              "client identities %sfrontend and %sbackend)" % (SPIFFE, SPIFFE),
                              (p.stdout + p.stderr).splitlines()[-5:] + missing)

    def xdsd_config(self):
        """examples/envoy/mtls/xdsd.yaml without what the harness sets
        (listen, snapshots), its certificates this run's."""
        conf = eh.load_yaml(os.path.join(MTLS, "xdsd.yaml"))
        for k in ("listen", "snapshots"):
            conf.pop(k, None)
        for k in ("cert", "key", "client_ca"):
            conf["tls"][k] = self.cert(os.path.basename(conf["tls"][k]))
        # the example's node id globs, for this run's node ids
        for rule in conf["authorize"]:
            assert rule["node_id"].endswith("-*"), rule
        return eh.yaml.safe_dump(conf, sort_keys=False)

    def snapshot(self):
        """examples/envoy/mtls/snapshots/default.yaml, with this run's
        ports, certificates and backend."""
        snap = eh.load_yaml(os.path.join(MTLS, "snapshots", "default.yaml"))
        for p in self.proxies:
            lis = by_name(snap["listeners"], p.listener)
            lis["address"]["socket_address"]["port_value"] = p.port
            tls = by_name(snap["secrets"], p.secret)["tls_certificate"]
            with open(self.cert(p.serving_cert + ".pem")) as f:
                tls["certificate_chain"] = {"inline_string": f.read()}
            with open(self.cert(p.serving_cert + ".key")) as f:
                tls["private_key"] = {"inline_string": f.read()}
        web = by_name(snap["endpoints"], "web", "cluster_name")
        web["endpoints"] = [{"lb_endpoints": [{"endpoint": {
            "address": self.backends["A"].address()}}]}]
        return snap

    def edit_for(self, p):
        """The bootstrap's certificates: this run's, of p's identity; and
        a static listener whose certificate is the other's secret."""
        def edit(boot):
            xds = by_name(boot["static_resources"]["clusters"], "xds")
            ctx = xds["transport_socket"]["typed_config"]["common_tls_context"]
            ctx["tls_certificates"][0]["certificate_chain"]["filename"] = self.cert(p.who + ".pem")
            ctx["tls_certificates"][0]["private_key"]["filename"] = self.cert(p.who + ".key")
            ctx["validation_context"]["trusted_ca"]["filename"] = self.cert("ca.pem")
            hcm = {"stat_prefix": "steal", "@type": HCM,
                   "route_config": {"name": "steal", "virtual_hosts": [{
                       "name": "all", "domains": ["*"], "routes": [{
                           "match": {"prefix": "/"},
                           "direct_response": {"status": 200,
                                               "body": {"inline_string": "stolen"}}}]}]},
                   "http_filters": [{"name": "envoy.filters.http.router", "typed_config": {
                       "@type": "type.googleapis.com/envoy.extensions.filters.http."
                                "router.v3.Router"}}]}
            # initial_fetch_timeout: Envoy would wait 15 s for the
            # secret before it starts without it
            boot["static_resources"]["listeners"] = [{
                "name": "steal",
                "address": {"socket_address": {"address": "127.0.0.1",
                                               "port_value": p.steal_port}},
                "filter_chains": [{
                    "transport_socket": {"name": TLS_SOCKET, "typed_config": {
                        "@type": DOWNSTREAM_TLS, "common_tls_context": {
                            "tls_certificate_sds_secret_configs": [{
                                "name": p.stolen, "sds_config": {
                                    "ads": {}, "resource_api_version": "V3",
                                    "initial_fetch_timeout": "1s"}}]}}},
                    "filters": [{"name": "envoy.filters.network.http_connection_manager",
                                 "typed_config": copy.deepcopy(hcm)}]}]}]
        return edit

    def start(self):
        self.backends["A"] = eh.Backend("A")
        self.xdsd = eh.Xdsd(os.environ["XDSD"], os.environ.get("XDSD_SCHEMA", ""), self.work,
                            config=self.xdsd_config())
        self.xdsd.write_snapshot(self.snapshot())
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves examples/envoy/mtls/snapshots/default.yaml over "
                              "mTLS with the settings of examples/envoy/mtls/xdsd.yaml on "
                              "127.0.0.1:%s" % self.xdsd.port, why):
            return False
        ok = True
        for p in self.proxies:
            p.envoy = eh.Envoy(self.envoy_path, self.work, "envoy-" + p.who, p.node_id,
                               self.xdsd.port, p.api, edit=self.edit_for(p),
                               bootstrap=os.path.join(MTLS, "bootstrap.yaml"))
            started, why = eh.start_ready(p.envoy, START_TIMEOUT)
            ok &= self.tap.point(started, "the %s Envoy (%s, node %s, certificate %s) starts "
                                 "from examples/envoy/mtls/bootstrap.yaml and is ready"
                                 % (p.who, p.api, p.node_id, p.identity), why)
        return ok

    def identities(self):
        for p in self.proxies:
            try:
                cl = self.xdsd.client(p.node_id)
            except (OSError, ValueError) as e:
                cl = [{"error": str(e)}]
            ids = [c.get("identity") for c in cl]
            try:
                hs = p.envoy.stats().get("cluster.xds.ssl.handshake", 0)
            except (OSError, ValueError):
                hs = 0
            self.tap.point(ids == [p.identity] and hs >= 1,
                           "the %s Envoy's stream reaches xdsd over TLS (cluster.xds.ssl."
                           "handshake %d) and /clients names its identity %s"
                           % (p.who, hs, p.identity), ["/clients: %s" % cl])
        rc, out = eh.xdsctl(self.xdsd, "clients")
        ok = rc == 0 and all(any(p.node_id in ln and p.identity in ln for ln in out.splitlines())
                             for p in self.proxies)
        self.tap.point(ok, "`xdsctl clients` shows each Envoy's node with its identity",
                       out.splitlines()[:6])

    def holdings(self):
        """Each Envoy holds its own listener and secret, and never the
        other's, which it asked for."""
        for p in self.proxies:
            def settled():
                try:
                    lis = p.envoy.config()["listeners"]["resources"]
                    sec = eh.envoy_secrets(p.envoy)
                except (OSError, ValueError):
                    return None
                return (sorted(lis), sec) if p.secret in sec["active"] and \
                    p.stolen in sec["warming"] else None
            got = eh.wait_until(settled, WAIT, 0.2)
            lis, sec = got or (None, None)
            ok = got is not None and lis == [p.listener] and sorted(sec["active"]) == [p.secret]
            self.tap.point(ok, "the %s Envoy holds its own listener (%s) and its own secret (%s) "
                           "alone; the other's secret %s, which it asked for, is still warming"
                           % (p.who, p.listener, p.secret, p.stolen),
                           ["listeners %s, secrets %s" % (lis, sec)] + ([] if ok else self.diag()))

    def withheld(self):
        """xdsd says who asked for a secret it may not have, and why;
        /metrics counts it; no response to it carried the secret."""
        for p in self.proxies:
            needle = "may not be served SDS '%s'" % p.stolen
            # (wait_until takes an empty list for an answer: "or None")
            lines = eh.wait_until(lambda: [ln for ln in self.xdsd.lines()
                                           if "node '%s'" % p.node_id in ln and needle in ln]
                                  or None, WAIT, 0.1)
            ok = bool(lines) and " warn: " in lines[0] and p.identity in lines[0] and \
                "@allow" in lines[0]
            self.tap.point(ok, "xdsd warns that the %s Envoy's identity may not be served "
                           "the other's secret %s, naming node, identity and \"@allow\""
                           % (p.who, p.stolen), (lines or ["no such line"])[:1] +
                           ([] if ok else self.xdsd.log_tail()))
        try:
            n = eh.metric(eh.metrics(self.xdsd), "xdsd_resources_withheld_total",
                          type="secrets")
        except (OSError, ValueError) as e:
            n = None
            self.tap.comment(["/metrics: %s" % e])
        self.tap.point(n == len(self.proxies), "/metrics counts the %d secrets withheld "
                       "(xdsd_resources_withheld_total{type=\"secrets\"} %s)"
                       % (len(self.proxies), n))

    def traffic(self):
        ca = self.cert("ca.pem")
        for p in self.proxies:
            got = []
            for _ in range(REQUESTS):
                try:
                    status, body, cn = eh.https_get(p.port, ca)
                    got.append((status, cn, body))
                except OSError as e:
                    got.append(("error", str(e)[:100], None))
            good = [g for g in got if g == (200, p.subject, "A")]
            self.tap.point(len(good) == REQUESTS,
                           "%d HTTPS requests through the %s Envoy's listener (port %d) meet its "
                           "certificate (%s, from its secret) and reach backend A"
                           % (REQUESTS, p.who, p.port, p.subject),
                           ["%s" % (g,) for g in got if g not in good][:5])
            # Envoy accepts the connection and closes it in the
            # handshake: the client sees the end of the stream, or a
            # reset, as the timing goes (not a refused connection)
            try:
                eh.https_get(p.steal_port, ca, timeout=5)
                why = "the handshake succeeded"
            except (ssl.SSLError, ConnectionResetError) as e:
                why = None
                self.tap.comment(["port %d: %s" % (p.steal_port, e)])
            except OSError as e:
                why = "not a TLS refusal: %s" % e
            self.tap.point(why is None, "a TLS handshake with the %s Envoy's listener that "
                           "wants %s fails: it never got a certificate" % (p.who, p.stolen),
                           [why] if why else [])

    def envoys(self):
        return [(p.who, p) for p in self.proxies]

    def checks(self):
        self.log_clean()

    def run(self):
        if not self.setup():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if self.start():
            self.identities()
            self.holdings()
            self.withheld()
            self.traffic()
            self.checks()
        self.stop()


def main():
    tap = Tap()
    tap.comment(["real Envoys %s over mutual TLS to xdsd, each served only its identity's "
                 "secrets" % ENVOY_VERSION])
    return run_scenario(tap, Scenario(tap), OVERALL_TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
