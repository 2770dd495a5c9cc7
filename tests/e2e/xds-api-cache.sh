#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# proto/stage-xds-api keeps the pinned npm tarball in a cache: a staging
# after the build's uses it without fetching anything, and a tarball
# whose bytes do not match the integrity hash in proto/xds-api.lock, in
# the cache or freshly fetched, is refused. npm and curl are stubs on
# PATH that record their calls, so nothing here touches the network:
# the tarball is a copy of the one the build cached, and every staging
# uses a scratch cache.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

stage_sh=$XDSD_SRCDIR/proto/stage-xds-api
lock=$XDSD_SRCDIR/proto/xds-api.lock
api=$XDSD_BUILDDIR/proto/api

# npm pack copies $STUB_TGZ (when set) into the working directory, as a
# real download would; curl always fails.
bin=$tap_tmp/bin
mkdir -p "$bin"
cat > "$bin/npm" <<'EOF'
#!/bin/sh
echo "npm $*" >> "$STUB_LOG"
[ -n "${STUB_TGZ:-}" ] && cp "$STUB_TGZ" ./fetched.tgz
EOF
cat > "$bin/curl" <<'EOF'
#!/bin/sh
echo "curl $*" >> "$STUB_LOG"
exit 22
EOF
chmod +x "$bin/npm" "$bin/curl"
PATH=$bin:$PATH
STUB_LOG=$tap_tmp/fetches
export PATH STUB_LOG

# stage NAME [VAR=VALUE]...: stages into $tap_tmp/NAME with that
# environment; its status in $rc, its stderr in $tap_tmp/NAME.err. The
# cache variables of the caller are dropped and HOME is a scratch
# directory, so that no staging here can touch the user's own cache.
stage() {
  name=$1; shift
  : > "$STUB_LOG"
  env -u XDSD_CACHE_DIR -u XDG_CACHE_HOME HOME="$tap_tmp/nohome" "$@" \
    sh "$stage_sh" "$lock" "$tap_tmp/$name" 2> "$tap_tmp/$name.err"
  rc=$?
}
# used NAME TGZ: staged from TGZ in the cache, fetching nothing.
used() {
  if [ "$rc" -eq 0 ] && grep -qxF "stage-xds-api: using cached $2" "$tap_tmp/$1.err" &&
     [ ! -s "$STUB_LOG" ] && [ -d "$tap_tmp/$1/envoy-api/envoy" ]; then
    return 0
  fi
  echo "status $rc; fetches:"; cat "$STUB_LOG" "$tap_tmp/$1.err"; return 1
}
# fetched NAME TGZ: staged after one fetch, which is now TGZ in the cache.
fetched() {
  if [ "$rc" -eq 0 ] && grep -q "^npm pack" "$STUB_LOG" && cmp "$tgz" "$2"; then
    return 0
  fi
  echo "status $rc"; cat "$tap_tmp/$1.err"; return 1
}
# refused NAME: failed on the integrity hash, staged nothing.
refused() {
  if [ "$rc" -ne 0 ] && [ ! -e "$tap_tmp/$1" ] &&
     grep -q "integrity mismatch (want sha512 [0-9a-f]*, got [0-9a-f]*)" "$tap_tmp/$1.err"; then
    return 0
  fi
  echo "status $rc"; cat "$tap_tmp/$1.err"; return 1
}
# corrupt FILE: one byte in the middle changed.
corrupt() {
  off=$(($(wc -c < "$1") / 2))
  b=$(od -An -tu1 -j"$off" -N1 "$1" | tr -d ' ')
  printf '%b' "\\0$(printf %o $(((b + 1) % 256)))" |
    dd of="$1" bs=1 seek="$off" conv=notrunc 2>/dev/null
}

if grep -q '^XDS_API_LOCAL = .' "$XDSD_BUILDDIR/GNUmakefile"; then
  # configure --with-xds-api=DIR: no tarball was ever fetched or cached,
  # and this test downloads nothing.
  echo "ok 1 # SKIP the build staged the API from --with-xds-api: no cached tarball"
  echo "1..1"
  exit 0
fi

# The tarball the build cached (README: ~/.cache/xdsd, or
# $XDSD_CACHE_DIR; $XDG_CACHE_HOME/xdsd when set), only ever copied.
pkg=$(sed -n 's/^package=//p' "$lock") ver=$(sed -n 's/^version=//p' "$lock")
base=$(echo "$pkg" | sed 's|^@||; s|/|-|')-$ver.tgz
tgz=${XDSD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/xdsd}/$base
if [ ! -f "$tgz" ]; then
  fail "the build cached $tgz (run make check with the build's XDSD_CACHE_DIR, XDG_CACHE_HOME and HOME)"
  done_testing
  exit 1
fi

# Where the cache is: $XDSD_CACHE_DIR, else $XDG_CACHE_HOME/xdsd, else
# $HOME/.cache/xdsd.
mkdir -p "$tap_tmp/dir" "$tap_tmp/xdg/xdsd" "$tap_tmp/home/.cache/xdsd"
cp "$tgz" "$tap_tmp/dir/$base"
cp "$tgz" "$tap_tmp/xdg/xdsd/$base"
cp "$tgz" "$tap_tmp/home/.cache/xdsd/$base"
stage by-dir XDSD_CACHE_DIR="$tap_tmp/dir"
check "the cache in \$XDSD_CACHE_DIR is used, nothing fetched" \
  used by-dir "$tap_tmp/dir/$base"
check "the same tree as the build staged" diff -r "$tap_tmp/by-dir" "$api"
stage by-xdg XDG_CACHE_HOME="$tap_tmp/xdg"
check "the cache in \$XDG_CACHE_HOME/xdsd" used by-xdg "$tap_tmp/xdg/xdsd/$base"
stage by-home HOME="$tap_tmp/home"
check "the cache in ~/.cache/xdsd" used by-home "$tap_tmp/home/.cache/xdsd/$base"

# An empty cache is filled by one fetch; the second staging uses it.
mkdir -p "$tap_tmp/empty"
stage fill XDSD_CACHE_DIR="$tap_tmp/empty" STUB_TGZ="$tgz"
check "an empty cache is filled by a fetch" fetched fill "$tap_tmp/empty/$base"
stage refill XDSD_CACHE_DIR="$tap_tmp/empty"
check "a second staging fetches nothing" used refill "$tap_tmp/empty/$base"

# The lock names what to fetch, never where from: npm knows its registry
# (and the user's proxy and mirror), so the fetch goes through npm only.
keys() { sed -n 's/^\([a-z]*\)=.*/\1/p' "$lock" | tr '\n' ' '; }
check "the lock holds package, version and integrity only" \
  test "$(keys)" = "package version integrity "
check "the lock names no host" sh -c "! grep -q '://' '$lock'"

# A damaged tarball in the cache is refused and removed; offline, the
# fetch that would replace it fails, and nothing is staged.
mkdir -p "$tap_tmp/bad"
cp "$tgz" "$tap_tmp/bad/$base"
corrupt "$tap_tmp/bad/$base"
check "the damaged copy differs" sh -c "! cmp -s '$tgz' '$tap_tmp/bad/$base'"
cp "$tap_tmp/bad/$base" "$tap_tmp/damaged.tgz"
stage from-bad XDSD_CACHE_DIR="$tap_tmp/bad"
check "a cached tarball that fails the integrity hash is refused" refused from-bad
check "and removed from the cache" test ! -e "$tap_tmp/bad/$base"
check "the failed fetch asked npm only, never curl" \
  sh -c "grep -q '^npm pack' '$STUB_LOG' && ! grep -q '^curl' '$STUB_LOG'"

# So is a fetched one, which is not cached either.
mkdir -p "$tap_tmp/fetch-bad"
stage from-fetch XDSD_CACHE_DIR="$tap_tmp/fetch-bad" STUB_TGZ="$tap_tmp/damaged.tgz"
check "a fetched tarball that fails the integrity hash is refused" refused from-fetch
check "and not cached" test ! -e "$tap_tmp/fetch-bad/$base"
done_testing
