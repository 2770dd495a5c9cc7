#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# An operator's own schema: xdsd-build-schema builds a descriptor set
# from a copy of the Envoy API's .proto files (here the older tree of
# tests/schema/old-api.lock), and xdsd, pointed at it by the `schema:`
# setting, checks and serves snapshots by that API and no other: a
# filter only the older API has is accepted, one only the current API
# has is refused, and the reverse with the build's schema.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

build_schema=$XDSD_SRCDIR/scripts/xdsd-build-schema
api=$tap_tmp/api
own=$tap_tmp/own.pb
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tap_tmp"' EXIT

if ! sh "$XDSD_SRCDIR/tests/schema/stage-old-api" \
    "$XDSD_SRCDIR/tests/schema/old-api.lock" "$api" 2> "$tap_tmp/stage.err"; then
  fail "the older API tree is staged"
  sed 's/^/# /' "$tap_tmp/stage.err"
  done_testing
  exit 1
fi

# 1. The set, as the man page's example builds one.
sh "$build_schema" -I "$api/xds" -I "$api/googleapis" -I "$api/protoc-gen-validate" \
  -o "$own" "$api/envoy-api" 2> "$tap_tmp/build.err"
rc=$?
check "xdsd-build-schema builds the set (exit status $rc)" test "$rc" -eq 0 -a -s "$own"
sed 's/^/# /' "$tap_tmp/build.err"
# The tree has no opencensus, opentelemetry or prometheus protos: the
# five files that import them are left out, each with what it lacks.
check "the files whose imports are in no folder are left out, named" \
  test "$(grep -c '^xdsd-build-schema: left out envoy/.*\.proto: .* is in none of the folders$' "$tap_tmp/build.err")" -eq 5
check "one of them: trace.proto, for opencensus" grep -qx \
  "xdsd-build-schema: left out envoy/config/trace/v3/trace.proto: opencensus/proto/trace/v1/trace_config.proto is in none of the folders" \
  "$tap_tmp/build.err"
# Every other envoy/**/v3 file of the tree is in the set, which
# python3-protobuf's descriptor pool takes as it is.
roots=$(cd "$api/envoy-api" && find envoy -path '*/v3/*.proto' -type f | wc -l)
check "python3-protobuf loads the set: the tree's envoy/**/v3 files but 5" "$PYTHON3" -c '
import sys
from google.protobuf import descriptor_pb2, descriptor_pool
fds = descriptor_pb2.FileDescriptorSet()
fds.ParseFromString(open(sys.argv[1], "rb").read())
pool = descriptor_pool.DescriptorPool()
for f in fds.file:
    pool.Add(f)
n = sum(1 for f in fds.file if f.name.startswith("envoy/") and "/v3/" in f.name)
assert n == int(sys.argv[2]) - 5, (n, sys.argv[2])
' "$own" "$roots"

# 2. xdsd with it, through the configuration file's schema: setting.
snap=$XDSD_SRCDIR/tests/schema/own
conf=$tap_tmp/xdsd.yaml
printf 'listen: 127.0.0.1:0\nschema: %s\nsnapshots: %s\n' "$own" "$snap" > "$conf"
"$XDSD" --check -c "$conf" > "$tap_tmp/check.out" 2> "$tap_tmp/check.err"
rc=$?
check "--check with the own schema accepts the older API's filter (exit status $rc)" \
  test "$rc" -eq 0
sed 's/^/# /' "$tap_tmp/check.err"
"$XDSD" --check -c "$conf" --schema "$XDSD_SCHEMA" > /dev/null 2> "$tap_tmp/builtin.err"
check "the build's schema refuses it: Envoy 1.40 has no proto_message_logging" grep -q \
  "unknown \"@type\" 'type.googleapis.com/envoy.extensions.filters.http.proto_message_logging.v3.ProtoMessageLoggingConfig'" \
  "$tap_tmp/builtin.err"
"$XDSD" --check -c "$conf" --snapshots "$XDSD_SRCDIR/tests/snapshot/current-api" \
  > /dev/null 2> "$tap_tmp/current.err"
check "the own schema refuses what only the current API has (ApiKeyAuth)" grep -q \
  "unknown \"@type\" 'type.googleapis.com/envoy.extensions.filters.http.api_key_auth.v3.ApiKeyAuth'" \
  "$tap_tmp/current.err"

# The daemon serves it, and prints it back by the own schema.
"$XDSD" -c "$conf" --admin-listen 127.0.0.1:0 > "$tap_tmp/xdsd.log" 2>&1 &
pid=$!
admin=
for i in $(seq 100); do
  admin=$(sed -n 's/.*admin endpoint listening on 127\.0\.0\.1:0 (admin port \([0-9]*\)).*/\1/p' "$tap_tmp/xdsd.log")
  [ -n "$admin" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
check "the daemon starts with the own schema (admin port '$admin')" test -n "$admin"
"$XDSCTL" --admin "127.0.0.1:$admin" dump default listeners listener_0 \
  > "$tap_tmp/dump.json" 2> "$tap_tmp/dump.err"
check "the older API's filter reads back from the served listener" grep -q \
  '"mode": *"FIRST_AND_LAST"' "$tap_tmp/dump.json"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=

# 3. Refusals: nothing is written unless the set is complete.
mkdir -p "$tap_tmp/broken/envoy/x/v3"
printf 'syntax = "proto3";\npackage envoy.x.v3;\nmessage X { int32 a = 1 }\n' \
  > "$tap_tmp/broken/envoy/x/v3/x.proto"
echo keep > "$tap_tmp/kept.pb"
sh "$build_schema" -o "$tap_tmp/kept.pb" "$tap_tmp/broken" > /dev/null 2> "$tap_tmp/broken.err"
rc=$?
check "a file protoc refuses fails the build (exit status $rc)" \
  sh -c "[ $rc -eq 1 ] && grep -q 'protoc failed (above); nothing written' '$tap_tmp/broken.err'"
check "and leaves the file in place as it was" test "$(cat "$tap_tmp/kept.pb")" = keep
sh "$build_schema" -o "$tap_tmp/x.pb" "$tap_tmp" > /dev/null 2> "$tap_tmp/noapi.err"
rc=$?
check "a folder without envoy/ is refused (exit status $rc)" \
  sh -c "[ $rc -eq 1 ] && grep -q 'no envoy/ folder' '$tap_tmp/noapi.err' && [ ! -e '$tap_tmp/x.pb' ]"
sh "$build_schema" "$api/envoy-api" > /dev/null 2>&1
rc=$?
check "no -o is a usage error (exit status $rc)" test "$rc" -eq 2
done_testing
