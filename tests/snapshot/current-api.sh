#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The schema is the Envoy API of the release proto/xds-api.lock names:
# a snapshot with filters of current Envoy (current-api/: api_key_auth,
# body_size_limit, new in Envoy 1.40, the composite cluster) passes
# --check, and the real daemon serves it and prints it back through the
# admin endpoint; --version says which Envoy API the build's schema is.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

snap=$XDSD_SRCDIR/tests/snapshot/current-api
lock=$XDSD_SRCDIR/proto/xds-api.lock
conf=$tap_tmp/xdsd.yaml
echo "listen: 127.0.0.1:0" > "$conf"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tap_tmp"' EXIT

"$XDSD" --check -c "$conf" --schema "$XDSD_SCHEMA" --snapshots "$snap" \
  > "$tap_tmp/check.out" 2> "$tap_tmp/check.err"
rc=$?
check "--check accepts the current filters (exit status $rc)" test "$rc" -eq 0
sed 's/^/# /' "$tap_tmp/check.err"
check "--check counts every resource" grep -qx \
  "# snapshot 'default': clusters 2, endpoints 1, listeners 1, routes 1" "$tap_tmp/check.out"

# --version names the release of the lock, which the build's schema is
# (unless configured --with-xds-api, when it names that tree).
release=$(sed -n 's/^envoy=//p' "$lock")
"$XDSD" --version > "$tap_tmp/version"
if grep -q '^XDS_API_LOCAL = .' "$XDSD_BUILDDIR/GNUmakefile"; then
  check "--version names the --with-xds-api tree" \
    grep -q "^the build's schema file holds the Envoy API tree .* (configure --with-xds-api)$" "$tap_tmp/version"
else
  check "--version names the Envoy $release API" \
    grep -qx "the build's schema file holds the Envoy $release API (Go module github.com/envoyproxy/go-control-plane/envoy v$release)" "$tap_tmp/version"
fi

# The daemon serves it; its admin endpoint prints the filters' fields
# back from the encoded bytes.
"$XDSD" -c "$conf" --schema "$XDSD_SCHEMA" --snapshots "$snap" \
  --admin-listen 127.0.0.1:0 > "$tap_tmp/xdsd.log" 2>&1 &
pid=$!
admin=
for i in $(seq 100); do
  admin=$(sed -n 's/.*admin endpoint listening on 127\.0\.0\.1:0 (admin port \([0-9]*\)).*/\1/p' "$tap_tmp/xdsd.log")
  [ -n "$admin" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
check "the daemon starts with the snapshot (admin port '$admin')" test -n "$admin"
"$XDSCTL" --admin "127.0.0.1:$admin" dump default listeners listener_0 \
  > "$tap_tmp/dump.json" 2> "$tap_tmp/dump.err"
check "the listener's ApiKeyAuth reads back" "$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
def find(v, t):
    if isinstance(v, dict):
        if v.get("@type") == t:
            return v
        v = list(v.values())
    if isinstance(v, list):
        for x in v:
            r = find(x, t)
            if r is not None:
                return r
    return None
base = "type.googleapis.com/envoy.extensions.filters.http."
a = find(d, base + "api_key_auth.v3.ApiKeyAuth")
b = find(d, base + "body_size_limit.v3.BodySizeLimit")
assert a == {"@type": base + "api_key_auth.v3.ApiKeyAuth",
             "credentials": [{"key": "key-of-client-a", "client": "client_a"}],
             "key_sources": [{"header": "x-api-key"}, {"query": "api_key"}]}, a
assert b == {"@type": base + "body_size_limit.v3.BodySizeLimit",
             "max_request_bytes": "1048576"}, b
' "$tap_tmp/dump.json"
done_testing
