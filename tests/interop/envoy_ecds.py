# SPDX-License-Identifier: Apache-2.0
"""Interop: real Envoys take an HTTP filter's config from xdsd by ECDS
(extension configs, docs/protocol.md rules E1 and E2), over state of the
world and delta ADS, and it changes what their requests get without
their listener changing.

  1. Backend A; xdsd serves each Envoy a snapshot of its own (keyed by
     its node cluster: two Envoys cannot bind one port), the example's
     (examples/envoy/snapshots/default.yaml, listener on a port of the
     Envoy's own) with one more HTTP filter in its listener, "tag", a
     header_mutation filter whose config comes by ECDS
     (config_discovery over ADS) and adds `x-tag: one` to every answer.
     A SotW and a delta Envoy start from examples/envoy/bootstrap.yaml
     (drain time an hour, so that a draining listener's connections stay
     open while the test looks at them). Their requests reach A with
     `x-tag: one`; Envoy's config dump holds the config at xdsd's version.
  2. change (rule E1): a keep-alive connection to each Envoy, then the
     config alone changes (`x-tag: two`), SIGHUP. On that same
     connection the answers move to `two`; xdsd sent the Envoy ECDS and
     no listener; Envoy's listener was neither modified nor drained
     (listener_manager.listener_modified, lds.update_success,
     total_filter_chains_draining) and its ECDS counter of the filter
     counts the reload; a request loop on new connections never failed.
  3. move (rule E2): the listener moves to another filter config,
     "tag-v2" (`x-tag: moved`), and "tag" goes from the snapshot. New
     connections get `moved`; the keep-alive connection, which the old,
     draining listener holds, goes on getting 200 with `x-tag: two`
     (Envoy answers 500 when its filter's config is removed); xdsd never
     said "tag" removed; the Envoy still holds both configs.
  4. upstream (rule E1): the cluster "web" runs an upstream HTTP
     filter, "up-tag", a header_mutation whose config comes by ECDS
     too (the cluster's HttpProtocolOptions) and adds `x-up: one` to
     answers from the backend; the config alone changes (`x-up: two`):
     answers move to `two`, xdsd sent ECDS and no cluster, and Envoy's
     cluster was not modified.
  5. Envoy's /stats show no update_rejected and no init_fetch_timeout;
     xdsd logged no NACK and no error, and /clients shows every type of
     each Envoy synced; the Envoys and xdsd exit 0.

Prints TAP. Runs under the interop venv's python (tests/interop/envoy-
ecds.sh); needs XDSD and XDSD_BUILDDIR (work files in
$XDSD_BUILDDIR/tests/interop/envoy-ecds.work, kept), XDSD_SCHEMA when set.
"""
import http.client
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
OVERALL_TIMEOUT = 180
INTERVAL = 0.05
KEEP = 5                # answers the kept connection must get in a state
HEADER_MUTATION = ("type.googleapis.com/envoy.extensions.filters.http."
                   "header_mutation.v3.HeaderMutation")
ECDS_DUMP = "type.googleapis.com/envoy.admin.v3.EcdsConfigDump"


def tag_config(name, value):
    """An extension config: header_mutation adding x-tag: value."""
    return {"name": name, "typed_config": {
        "@type": HEADER_MUTATION,
        "mutations": {"response_mutations": [
            {"append": {"header": {"key": "x-tag", "value": value}}}]}}}


def ecds_filter(name):
    """An HTTP filter whose config comes by ECDS over ADS."""
    return {"name": name, "config_discovery": {
        "config_source": {"ads": {}, "resource_api_version": "V3"},
        "type_urls": [HEADER_MUTATION]}}


def up_config(value):
    """The upstream filter's config: header_mutation adding x-up: value
    to the backend's answers."""
    c = tag_config("up-tag", value)
    c["typed_config"]["mutations"]["response_mutations"][0]["append"]["header"]["key"] = "x-up"
    return c


def upstream_filters(cluster):
    """`cluster` runs "up-tag", by ECDS, before the upstream codec."""
    cluster["typed_extension_protocol_options"] = {
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
            "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
            "explicit_http_config": {"http_protocol_options": {}},
            "http_filters": [ecds_filter("up-tag"), {
                "name": "envoy.filters.http.upstream_codec",
                "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters."
                                 "http.upstream_codec.v3.UpstreamCodec"}}]}}


class Proxy:
    """One Envoy and its snapshot (keyed by its node cluster)."""

    def __init__(self, api):
        self.api = api
        self.delta = api == "DELTA_GRPC"
        self.mode = "delta" if self.delta else "sotw"
        self.node_id = "ecds-%s-%d" % (self.mode, os.getpid())
        self.key = "ecds-" + self.mode
        self.port = eh.free_port()
        self.envoy = None
        self.snap = None
        self.loop = None
        self.kept = None        # the keep-alive connection

    def listener(self):
        return by_name(self.snap["listeners"], "ingress")

    def http_filters(self):
        return self.listener()["filter_chains"][0]["filters"][0]["typed_config"][
            "http_filters"]


class Scenario(eh.Ending):
    def __init__(self, tap):
        self.tap = tap
        self.work = None
        self.backends = {}
        self.xdsd = None
        self.proxies = [Proxy("GRPC"), Proxy("DELTA_GRPC")]

    def diag(self, p=None):
        out = []
        for q in [p] if p else self.proxies:
            if q.loop:
                res = q.loop.snapshot()
                fails = [r for r in res if not r["ok"]]
                out.append("%s loop: %d requests, %d failed" % (q.mode, len(res), len(fails)))
                out += ["  " + s for s in summarize_failures(fails)]
            if q.envoy:
                out += q.envoy.log_tail(12)
        if self.xdsd:
            out += self.xdsd.log_tail(20)
        return out

    # --- what Envoy and xdsd hold ---------------------------------------
    def envoy_configs(self, p):
        """{name: version_info} of the extension configs Envoy holds."""
        _, body = p.envoy.get("/config_dump")
        out = {}
        for c in json.loads(body).get("configs", []):
            if c.get("@type") == ECDS_DUMP:
                for f in c.get("ecds_filters", []):
                    out[f.get("ecds_filter", {}).get("name")] = f.get("version_info")
        return out

    def xdsd_configs(self, p):
        """({name: resource version}, the type's version) xdsd serves p."""
        for t in self.xdsd.admin("/config_dump?snapshot=" + p.key).get("types", []):
            if t.get("type") == "extension_configs":
                return ({r["name"]: r.get("version") for r in t.get("resources", [])},
                        t.get("version"))
        return {}, None

    def in_step(self, p, names, changed=None):
        """Envoy holds exactly the configs `names`, each at the version
        xdsd gives it (delta: its own; SotW: the version_info of the
        response that brought it, the type's for those of `changed`, all
        by default: a SotW response carries only the configs that
        changed, so the others keep an earlier one). None when it does
        not."""
        try:
            held = self.envoy_configs(p)
            versions, type_version = self.xdsd_configs(p)
        except (OSError, ValueError):
            return None
        changed = names if changed is None else changed
        if p.delta:
            want = {n: versions.get(n) for n in names}
        else:
            want = {n: type_version if n in changed else held.get(n) for n in names}
        return held if held == want else None

    def kept_get(self, p):
        """(status, x-tag, connection header) of one request on p's
        keep-alive connection; raises OSError when it is gone."""
        p.kept.request("GET", "/")
        r = p.kept.getresponse()
        r.read()
        return r.status, r.getheader("x-tag"), r.getheader("connection")

    def moves_to(self, p, since, header, value, what):
        """A point: p's loop's answers since `since` come to have
        `header: value`, and keep it."""
        fresh = p.loop.answer(lambda r: r["ok"] and r["headers"][header] == value,
                              since, WAIT)
        later = [r for r in p.loop.snapshot(since)
                 if fresh is not None and r["seq"] > fresh["seq"]]
        stale = [r for r in later if r["ok"] and r["headers"][header] != value]
        self.tap.point(fresh is not None and not stale, what,
                       (["later %s: %s" % (header, r["headers"][header]) for r in stale][:3]
                        if fresh else self.diag(p)))

    def reload(self, what, change):
        """change(proxy) for every Envoy's snapshot, written, SIGHUP;
        the log's length before it, or None (with a failed point)."""
        for p in self.proxies:
            change(p)
            self.xdsd.write_snapshot(p.snap, p.key)
        ok, line, mark = self.xdsd.reload()
        if not ok:
            self.tap.point(False, "%s: xdsd reloads on SIGHUP" % what,
                           [line] + self.xdsd.log_tail())
            return None
        return mark

    # --- the run ----------------------------------------------------------
    def setup(self):
        got = eh.prepare(self.tap, "envoy-ecds")
        if got is None:
            return False
        self.work, binary, self.envoy_path = got
        self.xdsd = eh.Xdsd(binary, os.environ.get("XDSD_SCHEMA", ""), self.work)
        return True

    def start(self):
        self.backends["A"] = eh.Backend("A")
        for p in self.proxies:
            p.snap = eh.fleet_snapshot(p.port, self.backends["A"])
            filters = p.http_filters()
            filters.insert(0, ecds_filter("tag"))
            upstream_filters(by_name(p.snap["clusters"], "web"))
            p.snap["extension_configs"] = [tag_config("tag", "one"), up_config("one")]
            self.xdsd.write_snapshot(p.snap, p.key)
        ok, why = self.xdsd.start()
        if not self.tap.point(ok, "xdsd serves each Envoy the example snapshot with an HTTP "
                              "filter \"tag\" whose config comes by ECDS (x-tag: one)", why):
            return False
        ok = True
        for p in self.proxies:
            p.envoy = eh.Envoy(self.envoy_path, self.work, "envoy-" + p.mode, p.node_id,
                               self.xdsd.port, p.api, cluster=p.key,
                               args=["--drain-time-s", "3600"])
            started, why = eh.start_ready(p.envoy, START_TIMEOUT)
            ok &= self.tap.point(started, "the %s Envoy (node %s) is ready" % (p.mode, p.node_id),
                                 why)
        if not ok:
            return False
        for p in self.proxies:
            def tagged():
                try:
                    status, body, resp = eh.http_get(p.port, "/")
                except OSError:
                    return None
                return ((status, body, resp.getheader("x-tag"), resp.getheader("x-up"))
                        if status == 200 else None)
            got = eh.wait_until(tagged, START_TIMEOUT, 0.1)
            want = (200, "A", "one", "one")
            self.tap.point(got == want, "a request through the %s Envoy reaches backend A, the "
                           "listener's ECDS filter adds x-tag: one and the cluster's upstream "
                           "ECDS filter x-up: one (%s)" % (p.mode, got),
                           [] if got == want else self.diag(p))
            held = eh.wait_until(lambda: self.in_step(p, ["tag", "up-tag"]), WAIT, 0.2)
            self.tap.point(held is not None, "the %s Envoy's config dump holds the extension "
                           "config \"tag\" at xdsd's version (%s)" % (p.mode, held),
                           [] if held else ["Envoy holds %s" % self.envoy_configs(p)])
        for p in self.proxies:
            p.loop = eh.Traffic(p.mode, p.port, "/", ["A"], INTERVAL,
                                keep=["x-tag", "x-up"]).start()
        return all(p.loop.answer(lambda r: r["ok"], 0, WAIT) for p in self.proxies)

    def change(self):
        """rule E1: the config alone changes; the listener does not."""
        before = {}
        for p in self.proxies:
            p.kept = http.client.HTTPConnection("127.0.0.1", p.port, timeout=5)
            got = self.kept_get(p)
            self.tap.point(got[:2] == (200, "one"), "a keep-alive connection to the %s Envoy "
                           "gets x-tag: one (%s)" % (p.mode, got))
            before[p.mode] = (p.envoy.stats(), p.kept.sock.getsockname())
        mark = self.reload("change", lambda p: p.snap.update(
            extension_configs=[tag_config("tag", "two"), up_config("one")]))
        if mark is None:
            return False
        since = time.monotonic()
        ok = True
        for p in self.proxies:
            stats0, sock0 = before[p.mode]

            def moved():
                try:
                    got = self.kept_get(p)
                except OSError as e:
                    return "gone: %s" % e
                return got if got[1] == "two" else None
            got = eh.wait_until(moved, WAIT, 0.05)
            same = p.kept.sock is not None and p.kept.sock.getsockname() == sock0
            ok &= self.tap.point(isinstance(got, tuple) and got[0] == 200 and same
                                 and got[2] != "close",
                                 "change: on the same keep-alive connection the %s Envoy's "
                                 "answers move to x-tag: two (%s)" % (p.mode, got),
                                 [] if got else self.diag(p))
            sent = [t for _, t, _ in self.xdsd.sent(p.node_id, mark)]
            self.tap.point("ECDS" in sent and "LDS" not in sent,
                           "change: xdsd sent the %s Envoy ECDS and no listener (%s)"
                           % (p.mode, ", ".join(sent) or "nothing"))
            stats = p.envoy.stats()
            keys = ("listener_manager.listener_modified", "listener_manager.listener_removed",
                    "listener_manager.lds.update_success")
            moved_keys = ["%s %s -> %s" % (k, stats0.get(k), stats.get(k))
                          for k in keys if stats0.get(k) != stats.get(k)]
            draining = stats.get("listener_manager.total_filter_chains_draining")
            reloads = "extension_config_discovery.http_filter.tag.config_reload"
            self.tap.point(not moved_keys and draining == 0
                           and stats.get(reloads, 0) == stats0.get(reloads, 0) + 1,
                           "change: the %s Envoy's listener was neither modified nor drained, "
                           "and its ECDS counter of \"tag\" counts one reload (%s %s -> %s)"
                           % (p.mode, reloads, stats0.get(reloads), stats.get(reloads)),
                           moved_keys + (["total_filter_chains_draining %s" % draining]
                                         if draining != 0 else []))
            self.moves_to(p, since, "x-tag", "two", "change: requests on new connections "
                          "to the %s Envoy move to x-tag: two and stay" % p.mode)
            held = eh.wait_until(lambda: self.in_step(p, ["tag", "up-tag"], ["tag"]), WAIT, 0.2)
            self.tap.point(held is not None, "change: the %s Envoy holds \"tag\" at xdsd's new "
                           "version (%s)" % (p.mode, held))
        return ok

    def move(self):
        """rule E2: the listener moves to "tag-v2"; "tag" goes, but not
        from the Envoys, whose draining listeners still run it."""
        def to_v2(p):
            p.http_filters()[0] = ecds_filter("tag-v2")
            p.snap["extension_configs"] = [tag_config("tag-v2", "moved"), up_config("one")]
        mark = self.reload("move", to_v2)
        if mark is None:
            return
        since = time.monotonic()
        for p in self.proxies:
            fresh = p.loop.answer(lambda r: r["ok"] and r["headers"]["x-tag"] == "moved",
                                  since, WAIT)
            self.tap.point(fresh is not None, "move: requests on new connections to the %s "
                           "Envoy get x-tag: moved (the new listener's config)" % p.mode,
                           [] if fresh else self.diag(p))
            # the stream settles: every type synced on the new snapshot
            synced = eh.wait_until(lambda: all(
                t.get("state") == "synced" for t in eh.type_states(self.xdsd, p.node_id).values())
                and eh.type_states(self.xdsd, p.node_id), WAIT, 0.1)
            got = []
            for _ in range(KEEP):
                try:
                    got.append(self.kept_get(p))
                except OSError as e:
                    got.append(("gone", str(e)[:80], None))
                    break
                time.sleep(INTERVAL)
            ok = len(got) == KEEP and all(g[:2] == (200, "two") for g in got)
            self.tap.point(bool(synced) and ok,
                           "move: once xdsd shows the %s Envoy synced, its keep-alive "
                           "connection, held by the draining listener, still gets 200 with "
                           "x-tag: two, %d times (%s)" % (p.mode, KEEP, got[-1:]),
                           [str(g) for g in got if g[:2] != (200, "two")][:3] +
                           ([] if synced else ["/clients: %s" % eh.type_states(
                               self.xdsd, p.node_id)]))
            removed = [ln for ln in self.xdsd.lines()[mark:]
                       if "node '%s': sending ECDS" % p.node_id in ln
                       and not ln.rstrip().endswith(" 0 removed")]
            self.tap.point(not removed, "move: xdsd said no extension config removed to the "
                           "%s Envoy" % p.mode, removed[:3])
            try:
                held = sorted(self.envoy_configs(p))
            except (OSError, ValueError) as e:
                held = [str(e)]
            self.tap.point(held == ["tag", "tag-v2", "up-tag"], "move: the %s Envoy holds the "
                           "new config and the old one its draining listener runs, beside the "
                           "upstream filter's (%s)" % (p.mode, held))

    def upstream(self):
        """rule E1 for a cluster's upstream filter: its config alone
        changes; the cluster does not."""
        before = {p.mode: p.envoy.stats() for p in self.proxies}
        mark = self.reload("upstream", lambda p: p.snap.update(
            extension_configs=[tag_config("tag-v2", "moved"), up_config("two")]))
        if mark is None:
            return
        since = time.monotonic()
        for p in self.proxies:
            self.moves_to(p, since, "x-up", "two", "upstream: answers through the %s Envoy "
                          "move to x-up: two, the cluster's upstream filter's new config, "
                          "and stay" % p.mode)
            sent = [t for _, t, _ in self.xdsd.sent(p.node_id, mark)]
            self.tap.point("ECDS" in sent and "CDS" not in sent and "LDS" not in sent,
                           "upstream: xdsd sent the %s Envoy ECDS and no cluster nor listener "
                           "(%s)" % (p.mode, ", ".join(sent) or "nothing"))
            stats0, stats = before[p.mode], p.envoy.stats()
            keys = ("cluster_manager.cluster_modified", "cluster_manager.cluster_removed",
                    "cluster_manager.cds.update_success")
            moved_keys = ["%s %s -> %s" % (k, stats0.get(k), stats.get(k))
                          for k in keys if stats0.get(k) != stats.get(k)]
            self.tap.point(not moved_keys, "upstream: the %s Envoy's cluster was not modified"
                           % p.mode, moved_keys)

    def checks(self):
        for p in self.proxies:
            self.stats_clean(p.mode, p.envoy)
            fails = p.loop.failures() if p.loop else []
            self.tap.point(p.loop is not None and not fails,
                           "no request on new connections to the %s Envoy failed (%d requests)"
                           % (p.mode, len(p.loop.snapshot()) if p.loop else 0),
                           summarize_failures(fails))
        self.log_clean()

    def run(self):
        if not self.setup():
            return
        signal.alarm(OVERALL_TIMEOUT)
        if self.start() and self.change():
            self.move()
            self.upstream()
        self.checks()
        self.stop()


def main():
    tap = Tap()
    tap.comment(["real Envoys %s take an HTTP filter's config from xdsd by ECDS, SotW and "
                 "delta" % ENVOY_VERSION])
    return run_scenario(tap, Scenario(tap), OVERALL_TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
