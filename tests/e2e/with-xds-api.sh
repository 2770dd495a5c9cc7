#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ./configure --with-xds-api=DIR builds the schema from a local tree,
# without downloading, and gives the same descriptor set.
. "$XDSD_SRCDIR/tests/lib/tap.sh"
. "$XDSD_SRCDIR/tests/lib/copy-sources.sh"

api=$XDSD_BUILDDIR/proto/api
b=$tap_tmp/build
src=$tap_tmp/src
mkdir -p "$b"
check "the build staged the API tree" test -d "$api/envoy-api/envoy"
copy_sources "$src"
(cd "$b" && "$src/configure" -q --with-xds-api="$api") > "$tap_tmp/conf.log" 2>&1
check "configure --with-xds-api=DIR" grep -q "XDS_API_LOCAL='$api'" "$b/config.log"
# an unusable cache dir: any download attempt would fail the build
XDSD_CACHE_DIR=/nonexistent/xdsd-cache make -C "$b" proto/xds-api.pb \
  > "$tap_tmp/make.log" 2>&1
test -s "$b/proto/xds-api.pb" && ok "the schema builds from the local tree" || { fail "the schema builds from the local tree"; tail -5 "$tap_tmp/make.log" | sed "s/^/# /"; }
check "nothing was downloaded" sh -c "! grep -q downloading '$tap_tmp/make.log'"
check "same descriptor set as the pinned package" \
  cmp "$b/proto/xds-api.pb" "$XDSD_BUILDDIR/proto/xds-api.pb"
(cd "$b" && "$src/configure" -q --with-xds-api="$tap_tmp/none") \
  > "$tap_tmp/bad.log" 2>&1
check "a missing DIR is a configure error" \
  grep -q "with-xds-api: no directory" "$tap_tmp/bad.log"
done_testing
