#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Differential test of the transcoder against python3-protobuf.

For each document of tests/schema/corpus (YAML; its first comment lines
name the message type and, optionally, "schema: test" for the test
messages of tests/schema/proto), this checks that the C transcoder's
bytes

  - decode to the message python's json_format.ParseDict makes of the
    same document with the same descriptor set,
  - are identical to python's SerializeToString(deterministic=True)
    (with the contents of Anys serialized deterministically as well:
    python packs them without, see Pool.canonical),
  - are the same through every input path (YAML events, libyaml
    documents, JSON through jansson),
  - survive bytes -> JSON -> bytes unchanged (snake_case and camelCase),
    and the JSON printed is JSON python reads back to the same message;

and that, written into a snapshot file (YAML and JSON, whole and in
pieces on threads) with annotations beside their fields ("@ttl",
"@allow", and "@name" for list collections), every resource still
encodes to python's bytes of the document without them, and the
annotations read are those written.

One form is xdsd's own: a ResourceLocator (a list collection's member,
rule X3) may be written as its xdstp:// URL. python reads the mapping
form only, so python_form() rewrites such URLs into it first, by a
parser of its own (urllib's unquote), before python parses the document.

Output is TAP, one test point per file and check. Run by `make check`
(environment from Makefile.am: XDSD_SCHEMA, XDSD_SRCDIR, XDSD_BUILDDIR).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

# `make check` installs both first (scripts/install-deps): one missing
# is a failure to report, never a reason to skip the comparison.
MISSING = None
try:
    import yaml
    from google.protobuf import (descriptor_pb2, descriptor_pool,
                                 json_format, message_factory)
except ImportError as ex:
    MISSING = ("python3-yaml" if (ex.name or "").startswith("yaml")
               else "python3-protobuf", ex)

SRCDIR = os.environ.get("XDSD_SRCDIR", ".")
BUILDDIR = os.environ.get("XDSD_BUILDDIR", ".")
TOOL = os.path.join(BUILDDIR, "tests/schema/transcode-tool")
SCHEMAS = {
    "envoy": os.environ.get("XDSD_SCHEMA",
                            os.path.join(BUILDDIR, "proto/xds-api.pb")),
    "test": os.path.join(BUILDDIR, "tests/schema/xdtest.pb"),
}

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class Pool:
    def __init__(self, path):
        fds = descriptor_pb2.FileDescriptorSet()
        with open(path, "rb") as f:
            fds.ParseFromString(f.read())
        self.path = path
        self.pool = descriptor_pool.DescriptorPool()
        for fd in fds.file:
            self.pool.Add(fd)
        self.factory = message_factory.MessageFactory(self.pool)

    def message(self, name):
        desc = self.pool.FindMessageTypeByName(name)
        return self.factory.GetPrototype(desc)()

    def parse(self, name, doc):
        m = self.message(name)
        doc = python_form(self, m.DESCRIPTOR, doc)
        json_format.ParseDict(doc, m, descriptor_pool=self.pool)
        return m

    def canonical(self, msg):
        """msg's deterministic bytes, with the contents of every Any made
        deterministic too: python's Any.Pack serializes without it, so
        maps inside Anys come out in hash order."""
        self._canon(msg)
        return msg.SerializeToString(deterministic=True)

    def _canon(self, msg):
        for field, value in msg.ListFields():
            sub = field.message_type
            if sub is None:
                continue
            if sub.GetOptions().map_entry:
                if sub.fields_by_name["value"].message_type is not None:
                    for k in value:
                        self._canon(value[k])
            elif field.label == field.LABEL_REPEATED:
                for v in value:
                    self._canon(v)
            else:
                self._canon(value)
        if msg.DESCRIPTOR.full_name == "google.protobuf.Any" and \
                msg.type_url:
            inner = self.message(msg.type_url.split("/")[-1])
            inner.ParseFromString(msg.value)
            msg.value = self.canonical(inner)


LOCATOR = "xds.core.v3.ResourceLocator"


def locator_dict(url):
    """A ResourceLocator's mapping form from its xdstp:// URL."""
    from urllib.parse import unquote
    assert url.lower().startswith("xdstp://"), url
    rest = url[len("xdstp://"):]
    path, _, query = rest.partition("?")
    authority, _, path = path.partition("/")
    rtype, _, rid = path.partition("/")
    d = {"resource_type": unquote(rtype), "id": unquote(rid)}
    if authority:
        d["authority"] = unquote(authority)
    params = {}
    for piece in query.split("&") if query else []:
        k, _, v = piece.partition("=")
        params[unquote(k)] = unquote(v)
    if params:
        d["exact_context"] = {"params": params}
    return d


def python_form(pool, desc, value):
    """`value` (a document of message `desc`) with every ResourceLocator
    written as a URL rewritten into its mapping form, through Anys."""
    if not isinstance(value, dict):
        return value
    if desc.full_name == "google.protobuf.Any" and "@type" in value:
        inner = pool.pool.FindMessageTypeByName(value["@type"].split("/")[-1])
        if inner.full_name.startswith("google.protobuf."):
            return value  # JSON forms of their own; no locator inside
        return python_form(pool, inner, value)
    out = {}
    for key, v in value.items():
        f = desc.fields_by_name.get(key) or next(
            (x for x in desc.fields if x.json_name == key), None)
        sub = f.message_type if f is not None else None
        if sub is None or sub.GetOptions().map_entry:
            out[key] = v
        elif sub.full_name == LOCATOR and isinstance(v, str):
            out[key] = locator_dict(v)
        elif isinstance(v, list):
            out[key] = [python_form(pool, sub, x) for x in v]
        else:
            out[key] = python_form(pool, sub, v)
    return out


def header(text):
    """The "# key: value" comments at the top of a corpus file."""
    h = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(":")
        if sep:
            h[key.strip()] = value.strip()
    return h


def jsonable(v):
    """YAML's data as JSON jansson reads: integers beyond int64 become
    strings (the proto3 JSON form of a uint64)."""
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, int) and not isinstance(v, bool) and \
            not INT64_MIN <= v <= INT64_MAX:
        return str(v)
    return v


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, name))
        if not cond and diag:
            for line in str(diag).splitlines()[:20]:
                print("# " + line)
        sys.stdout.flush()
        return cond


def run(args, data=None):
    r = subprocess.run([TOOL] + args, input=data, capture_output=True,
                       timeout=60)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def tmpfile(data, suffix):
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def check_file(tap, pools, path):
    base = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    h = header(text)
    typ = h.get("type")
    pool = pools[h.get("schema", "envoy")]
    common = ["--schema", pool.path, "--type", typ]
    doc = yaml.safe_load(text)

    try:
        expected = pool.canonical(pool.parse(typ, doc))
    except Exception as ex:  # the corpus itself is wrong
        tap.ok(False, "%s: python parses it" % base, ex)
        return
    rc, out, err = run(common + ["--from", "yaml", path])
    if not tap.ok(rc == 0, "%s: encodes" % base, err):
        return
    got = out
    try:
        again = pool.message(typ)
        again.ParseFromString(got)
        same = pool.canonical(again) == expected
        why = "python reads back a different message"
    except Exception as ex:
        same, why = False, ex
    tap.ok(same, "%s: decodes to python's message" % base, why)
    tap.ok(got == expected, "%s: identical to python's deterministic bytes"
           % base,
           "C      %s\npython %s" % (got.hex(), expected.hex()))

    rc, out, err = run(common + ["--from", "yamldoc", path])
    tap.ok(rc == 0 and out == got, "%s: same bytes from a libyaml document"
           % base, err)

    jpath = tmpfile(json.dumps(jsonable(doc)).encode(), ".json")
    try:
        rc, out, err = run(common + ["--from", "json", jpath])
    finally:
        os.unlink(jpath)
    tap.ok(rc == 0 and out == got, "%s: same bytes from JSON" % base, err)

    bpath = tmpfile(got, ".bin")
    try:
        for camel in (False, True):
            style = "camelCase" if camel else "snake_case"
            rc, js, err = run(common + ["--to-json", bpath] +
                              (["--camel"] if camel else []))
            if not tap.ok(rc == 0, "%s: prints %s JSON" % (base, style),
                          err):
                continue
            rc, back, err = run(common + ["--from", "json", "-"], js)
            tap.ok(rc == 0 and back == got,
                   "%s: bytes -> %s JSON -> same bytes" % (base, style),
                   err or "C      %s\nback   %s" % (got.hex(), back.hex()))
            if not camel:
                try:
                    m = pool.parse(typ, json.loads(js))
                    same = pool.canonical(m) == expected
                    why = "different message"
                except Exception as ex:
                    same, why = False, ex
                tap.ok(same, "%s: python reads the printed JSON" % base,
                       why)
    finally:
        os.unlink(bpath)


SECTIONS = {
    "envoy.config.cluster.v3.Cluster": "clusters",
    "envoy.config.endpoint.v3.ClusterLoadAssignment": "endpoints",
    "envoy.config.listener.v3.Listener": "listeners",
    "envoy.config.route.v3.RouteConfiguration": "routes",
    "envoy.config.route.v3.ScopedRouteConfiguration": "scoped_routes",
    "envoy.config.route.v3.VirtualHost": "virtual_hosts",
    "envoy.extensions.transport_sockets.tls.v3.Secret": "secrets",
    "envoy.service.runtime.v3.Runtime": "runtimes",
    "envoy.config.listener.v3.ListenerCollection": "listener_collections",
    "envoy.config.cluster.v3.ClusterCollection": "cluster_collections",
}

# Annotations given to the k-th resource of a snapshot, and what the tool
# must print for them (transcode-tool --snapshot --bytes).
DPC = "envoy.service.discovery.v3.DynamicParameterConstraints"


def annotations(k, pool):
    ann, shown = {}, []
    if k % 3 != 2:
        ms = 1000 + 250 * k
        ann["@ttl"] = "%d.%03ds" % (ms // 1000, ms % 1000)
        shown.append("@ttl=%d" % ms)
    if k % 2 == 0:
        globs = ["spiffe://example.org/ns/%d/*" % k, "node-?"]
        ann["@allow"] = globs
        shown.append("@allow=" + ",".join(globs))
    if k % 4 == 1:
        # rule P1: encoded as the schema's message, byte for byte
        dpc = {"and_constraints": {"constraints": [
            {"constraint": {"key": "env", "value": "v%d" % k}},
            {"notConstraints": {"constraint": {"key": "canary",
                                               "exists": {}}}}]}}
        ann["@dynamic_parameter_constraints"] = dpc
        shown.append("@dpc=" + pool.canonical(pool.parse(DPC, dpc)).hex())
    return ann, shown


def check_snapshot(tap, pool, files):
    """The corpus as one snapshot file, with annotations: same bytes."""
    sections, expected = {}, []
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        typ = header(text).get("type")
        if typ not in SECTIONS or "schema" in header(text):
            continue
        doc = yaml.safe_load(text)
        ann, shown = annotations(len(expected), pool)
        if SECTIONS[typ].endswith("_collections"):
            # a list collection has no name field: "@name" names it
            name = ("xdstp://cp.example/%s/c%d?b=2&a=1"
                    % (typ, len(expected)))
            ann["@name"] = name
            shown.append("@name=" + name)
        # annotations first, then the fields: keys in any order
        sections.setdefault(SECTIONS[typ], []).append(dict(ann, **doc))
        expected.append((SECTIONS[typ], len(sections[SECTIONS[typ]]) - 1,
                         pool.canonical(pool.parse(typ, doc)), shown))
    tap.ok(len(expected) >= 30, "snapshot of the corpus: %d resources"
           % len(expected))
    forms = [("yaml", yaml.safe_dump(sections, sort_keys=False).encode(),
              [], ".yaml"),
             ("yaml on 4 threads", yaml.safe_dump(
                 sections, sort_keys=False).encode(), ["--threads", "4"],
              ".yaml"),
             ("json", json.dumps(jsonable(sections)).encode(), [], ".json")]
    for label, data, extra, suffix in forms:
        path = tmpfile(data, suffix)
        try:
            rc, out, err = run(["--schema", pool.path, "--snapshot",
                                "--bytes"] + extra + [path])
        finally:
            os.unlink(path)
        if not tap.ok(rc == 0, "snapshot (%s) with annotations encodes"
                      % label, err):
            continue
        got = {}
        for line in out.decode().splitlines():
            words = line.split()
            got[words[0]] = (bytes.fromhex(words[3]), words[4:])
        bad = []
        for sec, i, want, shown in expected:
            key = "%s[%d]" % (sec, i)
            if key not in got:
                bad.append("%s: not encoded" % key)
            elif got[key][0] != want:
                bad.append("%s: C %s, python %s" % (key, got[key][0].hex(),
                                                     want.hex()))
            elif got[key][1] != shown:
                bad.append("%s: annotations %s, written %s"
                           % (key, got[key][1], shown))
        tap.ok(not bad, "snapshot (%s): every resource is python's bytes "
               "without its annotations, which are read as written"
               % label, "\n".join(bad[:5]))


def main():
    tap = Tap()
    if MISSING:
        package, ex = MISSING
        tap.ok(False, "missing %s for %s: install it (scripts/install-deps, "
               "or apt-get install %s)" % (package, sys.executable, package),
               ex)
        print("1..%d" % tap.n)
        return 1
    pools = {}
    for key, path in SCHEMAS.items():
        if tap.ok(os.path.exists(path), "%s is built" % path,
                  "make check builds it: run this test through make check"):
            pools[key] = Pool(path)
    if len(pools) < len(SCHEMAS):
        print("1..%d" % tap.n)
        return 1
    files = sorted(glob.glob(os.path.join(SRCDIR, "tests/schema/corpus",
                                          "*.yaml")))
    envoy = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            if "schema" not in header(f.read()):
                envoy.append(path)
    tap.ok(len(envoy) >= 30, "corpus has at least 30 Envoy resources (%d)"
           % len(envoy))
    for path in files:
        check_file(tap, pools, path)
    check_snapshot(tap, pools["envoy"], files)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
