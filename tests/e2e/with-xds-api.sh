#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ./configure --with-xds-api=DIR builds the schema from a local tree
# with protoc, without downloading: the set xdsd-build-schema makes of
# DIR/envoy-api with DIR's other folders searched, and the transport
# code generated from it. DIR here is the older tree of
# tests/schema/old-api.lock.
. "$XDSD_SRCDIR/tests/lib/tap.sh"
. "$XDSD_SRCDIR/tests/lib/copy-sources.sh"

api=$tap_tmp/api
b=$tap_tmp/build
src=$tap_tmp/src
mkdir -p "$b"
if ! sh "$XDSD_SRCDIR/tests/schema/stage-old-api" \
    "$XDSD_SRCDIR/tests/schema/old-api.lock" "$api" 2> "$tap_tmp/stage.err"; then
  fail "the older API tree is staged"
  sed 's/^/# /' "$tap_tmp/stage.err"
  done_testing
  exit 1
fi
sh "$XDSD_SRCDIR/scripts/xdsd-build-schema" -I "$api/googleapis" \
  -I "$api/protoc-gen-validate" -I "$api/xds" -o "$tap_tmp/direct.pb" \
  "$api/envoy-api" 2> "$tap_tmp/direct.err"
check "xdsd-build-schema builds the tree" test -s "$tap_tmp/direct.pb"

copy_sources "$src"
(cd "$b" && "$src/configure" -q --with-xds-api="$api") > "$tap_tmp/conf.log" 2>&1
check "configure --with-xds-api=DIR" grep -q "XDS_API_LOCAL='$api'" "$b/config.log"
# An unusable cache and no go command: any download would fail the build.
mkdir -p "$tap_tmp/bin"
printf '#!/bin/sh\necho "go $*" >> "%s/go.calls"\nexit 1\n' "$tap_tmp" > "$tap_tmp/bin/go"
chmod +x "$tap_tmp/bin/go"
PATH=$tap_tmp/bin:$PATH XDSD_CACHE_DIR=/nonexistent/xdsd-cache \
  make -C "$b" proto/xds-api.pb proto/gen.stamp > "$tap_tmp/make.log" 2>&1
test -s "$b/proto/xds-api.pb" && ok "the schema builds from the local tree" ||
  { fail "the schema builds from the local tree"; tail -5 "$tap_tmp/make.log" | sed "s/^/# /"; }
check "nothing was downloaded, go never ran" \
  sh -c "! grep -q downloading '$tap_tmp/make.log' && [ ! -e '$tap_tmp/go.calls' ]"
check "the same descriptor set as xdsd-build-schema makes of DIR" \
  cmp "$b/proto/xds-api.pb" "$tap_tmp/direct.pb"
check "the transport code is generated from it" \
  test -s "$b/proto/gen/envoy/service/discovery/v3/discovery.pb-c.c"
(cd "$b" && "$src/configure" -q --with-xds-api="$tap_tmp/none") \
  > "$tap_tmp/bad.log" 2>&1
check "a missing DIR is a configure error" \
  grep -q "with-xds-api: no directory" "$tap_tmp/bad.log"
(cd "$b" && "$src/configure" -q --with-xds-api="$api/googleapis") \
  > "$tap_tmp/bad2.log" 2>&1
check "a DIR without envoy-api/envoy/ is a configure error" \
  grep -q "no envoy-api/envoy/ folder" "$tap_tmp/bad2.log"
done_testing
