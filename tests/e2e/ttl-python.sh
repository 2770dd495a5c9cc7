#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TTLs and heartbeats (rule L1 of docs/protocol.md) seen by gRPC's Python
# bindings (tests/e2e/xds-client.py): xdsd serves a cluster with a 2 s TTL
# and one without; clients announcing the TTL feature (delta, and SotW
# with wrapped resources) get the TTL and heartbeats with the version
# they hold and no body; clients without it get neither.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

py=${PYTHON3:-/usr/bin/python3}
client="$XDSD_SRCDIR/tests/e2e/xds-client.py"
TTL=xds.config.supports-resource-ttl
SOTW=xds.config.supports-resource-in-sotw

mkdir -p "$tap_tmp/snap"
cat > "$tap_tmp/snap/default.yaml" <<EOS
clusters:
- {name: fault-injection, connect_timeout: 1s, "@ttl": 2s}
- {name: steady, connect_timeout: 1s}
EOS
printf 'listen: 127.0.0.1:0\nadmin_listen: off\nsnapshots: %s\nschema: %s\n' \
  "$tap_tmp/snap" "$XDSD_SCHEMA" > "$tap_tmp/xdsd.yaml"
"$XDSD" -c "$tap_tmp/xdsd.yaml" 2> "$tap_tmp/xdsd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tap_tmp"' EXIT
i=0
until grep -q "(port " "$tap_tmp/xdsd.log"; do
  i=$((i + 1))
  if [ $i -gt 200 ] || ! kill -0 $pid 2>/dev/null; then
    fail "xdsd started"; sed 's/^/# /' "$tap_tmp/xdsd.log"; done_testing; exit 1
  fi
  sleep 0.05
done
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tap_tmp/xdsd.log")

# four clients at once: those that take TTLs until the response and two
# heartbeats came (60 s at most: a deadline, not a measure), the others
# for 3.3 s, over which they must get nothing more (heartbeats of the
# 2 s TTL would come every second). When each heartbeat is due is the
# engine's arithmetic, checked without a clock in tests/unit/check_engine.c.
run() {
  name=$1; shift
  "$py" "$client" "127.0.0.1:$port" --schema "$XDSD_SCHEMA" --node "$name" \
    --sub cds=fault-injection,steady "$@" \
    > "$tap_tmp/$name.out" 2> "$tap_tmp/$name.err"
  echo $? > "$tap_tmp/$name.rc"
}
run delta-ttl --delta --feature $TTL --responses 3 --seconds 60 & c1=$!
run sotw-ttl --feature $SOTW --feature $TTL --responses 3 --seconds 60 & c2=$!
run delta-plain --delta --seconds 3.3 & c3=$!
run sotw-wrapped-only --feature $SOTW --seconds 3.3 & c4=$!
wait $c1 $c2 $c3 $c4

# judge NAME EXPECT: EXPECT is "ttl" or "none"
judge() {
  "$py" - "$tap_tmp/$1.out" "$2" <<'PY'
import json, sys
path, expect = sys.argv[1], sys.argv[2]
lines = [json.loads(l) for l in open(path)]
def die(msg):
    print(msg)
    for l in lines:
        print(json.dumps(l))
    sys.exit(1)
if not lines:
    die("no response")
first = lines[0]
by = {r["name"]: r for r in first["resources"]}
if set(by) != {"fault-injection", "steady"}:
    die("first response names %s" % sorted(by))
if by["steady"]["ttl"] is not None:
    die("a TTL on the resource without one")
if expect == "none":
    if by["fault-injection"]["ttl"] is not None:
        die("a TTL for a client that does not take TTLs")
    if len(lines) != 1:
        die("%d responses for a client without the feature (no heartbeats)" % len(lines))
    sys.exit(0)
if by["fault-injection"]["ttl"] != "2s":
    die("TTL %r, expected '2s'" % by["fault-injection"]["ttl"])
beats = lines[1:]
if len(beats) < 2:
    die("%d heartbeats of a 2 s TTL within 60 s, expected 2" % len(beats))
for b in beats:
    if b["version"] != first["version"]:
        die("heartbeat at version %s, the client holds %s" % (b["version"], first["version"]))
    if [r["name"] for r in b["resources"]] != ["fault-injection"]:
        die("a heartbeat carrying %s" % [r["name"] for r in b["resources"]])
    r = b["resources"][0]
    if r["body"] or r["ttl"] != "2s" or r["version"] != by["fault-injection"]["version"]:
        die("heartbeat resource %s" % r)
PY
}

for c in delta-ttl:ttl sotw-ttl:ttl delta-plain:none sotw-wrapped-only:none; do
  name=${c%%:*} expect=${c#*:}
  if [ "$(cat "$tap_tmp/$name.rc")" != 0 ]; then
    fail "$name: the client's stream lasted"; sed 's/^/# /' "$tap_tmp/$name.err"
  elif judge "$name" "$expect" > "$tap_tmp/judge" 2>&1; then
    ok "rule L1 with gRPC's Python client: $name"
  else
    fail "rule L1 with gRPC's Python client: $name"; sed 's/^/# /' "$tap_tmp/judge"
  fi
done
kill $pid; wait $pid
done_testing
