#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A REST-JSON xDS subscription as Envoy's REST subscriptions run one,
with urllib and json only: POST a DiscoveryRequest (lowerCamelCase, as
Envoy writes it), send back the version and nonce of each answer, and
follow the daemon through a reload.

    rest-client.py PORT SNAPSHOT_FILE DAEMON_PID DAEMON_LOG

The daemon runs with rest_poll_timeout: 1s. Reports each check on
stderr (stdout is the calling test's TAP); exits 1 at the first
failure. Whether a poll was held, and until what, is not timed here:
the calling test reads why the daemon answered each one in its log.
"""
import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
NODE = {"id": "python-1", "cluster": "web",
        "userAgentName": "rest-client.py"}


def poll(port, path, version="", nonce="", names=(), error=None):
    """One request; returns its answer."""
    req = {"versionInfo": version, "node": NODE,
           "resourceNames": list(names), "typeUrl": CDS,
           "responseNonce": nonce}
    if error is not None:
        req["errorDetail"] = {"code": 3, "message": error}
    data = json.dumps(req).encode()
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                               data=data, method="POST",
                               headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(r, timeout=20) as resp:
        if resp.status != 200:
            fail("status %d" % resp.status)
        if not resp.headers["Content-Type"].startswith("application/json"):
            fail("content type %s" % resp.headers["Content-Type"])
        return json.load(resp)


def fail(msg):
    print("rest-client.py: failed: " + msg, file=sys.stderr)
    sys.exit(1)


def ok(cond, msg):
    if not cond:
        fail(msg)
    print("rest-client.py: ok: " + msg, file=sys.stderr)


def clusters(answer):
    names = []
    for r in answer.get("resources", []):
        if r.get("@type") != CDS:
            fail("resource of type %s" % r.get("@type"))
        names.append(r["name"])
    return names


def held_polls(log):
    """How many polls the daemon's log says it held."""
    with open(log, errors="replace") as f:
        return f.read().count("holds version")


def reload_once_held(path, pid, log, before):
    """Once the daemon holds one more poll than `before` (its log says
    so), renames cluster "b" to "c" in the snapshot and sends SIGHUP."""
    def run():
        end = time.monotonic() + 20
        while held_polls(log) <= before and time.monotonic() < end:
            time.sleep(0.05)
        with open(path) as f:
            text = f.read()
        with open(path + ".tmp", "w") as f:
            f.write(text.replace("{name: b,", "{name: c,"))
        os.rename(path + ".tmp", path)
        os.kill(pid, signal.SIGHUP)
    t = threading.Thread(target=run)
    t.start()
    return t


def main():
    port, snapshot, pid, log = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    path = "/v3/discovery:clusters"

    first = poll(port, path)
    ok(clusters(first) == ["a", "b"], "first poll: every cluster")
    ok(first["typeUrl"] == CDS and len(first["versionInfo"]) == 16,
       "first poll: type URL and version")

    # Back with what it holds: answered when the reload changes it.
    t = reload_once_held(snapshot, pid, log, held_polls(log))
    second = poll(port, path, first["versionInfo"], first["nonce"])
    t.join()
    ok(second["versionInfo"] != first["versionInfo"], "a new version")
    ok(clusters(second) == ["a", "c"], "the reloaded clusters")

    # Nothing changes: the same answer after rest_poll_timeout.
    third = poll(port, path, second["versionInfo"], second["nonce"])
    ok(third["versionInfo"] == second["versionInfo"] and
       third["nonce"] == second["nonce"], "the same version and nonce")

    # A NACK of it waits as well, instead of getting it back at once.
    fourth = poll(port, path, first["versionInfo"], third["nonce"],
                  error="cluster c refused")
    ok(fourth["versionInfo"] == second["versionInfo"] and
       clusters(fourth) == ["a", "c"], "a NACK is answered with the current content")

    # Bad input is a 400 naming the field.
    bad = urllib.request.Request(
        "http://127.0.0.1:%d%s" % (port, path),
        data=json.dumps({"node": {"ID": "x"}}).encode(), method="POST")
    try:
        urllib.request.urlopen(bad, timeout=10)
        fail("an unknown field was accepted")
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        ok(e.code == 400 and "node.ID: unknown field" in text,
           "unknown field: 400 with its path")


if __name__ == "__main__":
    main()
