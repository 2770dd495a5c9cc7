#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# proto/api-set keeps the Go modules of proto/xds-api.lock in a cache: a
# run after the build's uses them without the go command, and a module
# zip whose content does not hash to the lock's h1: sum, in the cache or
# freshly downloaded, is refused. The go command is a stub that records
# its calls, so nothing here touches the network: its "downloads" are
# copies of the zips the build cached, and every run uses a scratch
# cache.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

tool=$XDSD_BUILDDIR/proto/api-set/api-set
lock=$XDSD_SRCDIR/proto/xds-api.lock
wkt=$XDSD_BUILDDIR/proto/wkt.pb
built=$XDSD_BUILDDIR/proto/xds-api.pb

if grep -q '^XDS_API_LOCAL = .' "$XDSD_BUILDDIR/GNUmakefile"; then
  # configure --with-xds-api=DIR: no module was ever fetched or cached,
  # and this test downloads nothing.
  echo "ok 1 # SKIP the build made the schema from --with-xds-api: no cached modules"
  echo "1..1"
  exit 0
fi

# The modules the build cached (README: ~/.cache/xdsd/gomod, or under
# $XDSD_CACHE_DIR; $XDG_CACHE_HOME/xdsd when set), only ever copied.
cache=${XDSD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/xdsd}/gomod/cache/download
zips=$(grep -c '^[^#].* h1:' "$lock")
found=$(cd "$cache" 2>/dev/null && find . -name '*.zip' | wc -l)
if [ "${found:-0}" -lt "$zips" ]; then
  fail "the build cached the $zips modules under $cache (run make check with the build's XDSD_CACHE_DIR, XDG_CACHE_HOME and HOME)"
  done_testing
  exit 1
fi
# copy_cache DEST: the zips the lock names, laid out as in the cache.
copy_cache() {
  grep '^[^#].* h1:' "$lock" | while read -r path ver sum; do
    rel=$path/@v/$ver.zip
    mkdir -p "$1/gomod/cache/download/$path/@v"
    cp "$cache/$rel" "$1/gomod/cache/download/$rel"
  done
}
envoy_rel=$(grep -m1 '^[^#].* h1:' "$lock" | awk '{ print $1 "/@v/" $2 ".zip" }')

# The go command: `go mod download -json PATH@VERSION` copies the zip
# from $STUB_FROM (when set) into $GOMODCACHE, as a real download would,
# and says where; else it fails, as offline.
bin=$tap_tmp/bin
mkdir -p "$bin"
cat > "$bin/go" <<'STUB'
#!/bin/sh
echo "go $*" >> "$STUB_LOG"
mv=$4 path=${mv%@*} ver=${mv##*@}
rel=$path/@v/$ver.zip
if [ -z "${STUB_FROM:-}" ]; then
  printf '{"Path": "%s", "Error": "offline"}\n' "$path"; exit 1
fi
mkdir -p "$GOMODCACHE/cache/download/$path/@v"
cp "$STUB_FROM/$rel" "$GOMODCACHE/cache/download/$rel"
printf '{"Path": "%s", "Version": "%s", "Zip": "%s"}\n' "$path" "$ver" \
  "$GOMODCACHE/cache/download/$rel"
STUB
chmod +x "$bin/go"
STUB_LOG=$tap_tmp/calls
export STUB_LOG

# run NAME [VAR=VALUE]...: writes $tap_tmp/NAME.pb with that environment;
# its status in $rc, its stderr in $tap_tmp/NAME.err. The cache
# variables of the caller are dropped and HOME is a scratch directory,
# so that no run here can touch the user's own cache.
run() {
  name=$1; shift
  : > "$STUB_LOG"
  env -u XDSD_CACHE_DIR -u XDG_CACHE_HOME -u STUB_FROM HOME="$tap_tmp/nohome" "$@" \
    "$tool" -go "$bin/go" -lock "$lock" -wkt "$wkt" -o "$tap_tmp/$name.pb" \
    2> "$tap_tmp/$name.err"
  rc=$?
}
# used NAME DIR: the set built from the cache in DIR, no go command run.
used() {
  if [ "$rc" -eq 0 ] && [ "$(grep -c "^api-set: using cached $2/gomod/cache/download/" "$tap_tmp/$1.err")" -eq "$zips" ] &&
     [ ! -s "$STUB_LOG" ] && cmp -s "$tap_tmp/$1.pb" "$built"; then
    return 0
  fi
  echo "status $rc; go calls:"; cat "$STUB_LOG" "$tap_tmp/$1.err"; return 1
}
# refused NAME: failed on the h1: sum, wrote nothing.
refused() {
  if [ "$rc" -ne 0 ] && [ ! -e "$tap_tmp/$1.pb" ] &&
     grep -q "integrity mismatch (want h1:[A-Za-z0-9+/=]*, got h1:[A-Za-z0-9+/=]*)" "$tap_tmp/$1.err"; then
    return 0
  fi
  echo "status $rc"; cat "$tap_tmp/$1.err"; return 1
}
# corrupt FILE: one byte in the middle changed.
corrupt() {
  off=$(($(wc -c < "$1") / 2))
  b=$(od -An -tu1 -j"$off" -N 1 "$1" | tr -d ' ')
  printf '%b' "\\0$(printf %o $(((b + 1) % 256)))" |
    dd of="$1" bs=1 seek="$off" conv=notrunc 2>/dev/null
}

# Where the cache is: $XDSD_CACHE_DIR, else $XDG_CACHE_HOME/xdsd, else
# $HOME/.cache/xdsd.
copy_cache "$tap_tmp/dir"
copy_cache "$tap_tmp/xdg/xdsd"
copy_cache "$tap_tmp/home/.cache/xdsd"
run by-dir XDSD_CACHE_DIR="$tap_tmp/dir"
check "the cache in \$XDSD_CACHE_DIR is used, nothing fetched, the build's set" \
  used by-dir "$tap_tmp/dir"
run by-xdg XDG_CACHE_HOME="$tap_tmp/xdg"
check "the cache in \$XDG_CACHE_HOME/xdsd" used by-xdg "$tap_tmp/xdg/xdsd"
run by-home HOME="$tap_tmp/home"
check "the cache in ~/.cache/xdsd" used by-home "$tap_tmp/home/.cache/xdsd"

# An empty cache is filled by one download a module; the second run
# uses it.
copy_cache "$tap_tmp/origin"
run fill XDSD_CACHE_DIR="$tap_tmp/empty" STUB_FROM="$tap_tmp/origin/gomod/cache/download"
check "an empty cache is filled, one download a module" sh -c \
  "[ $rc -eq 0 ] && [ \$(grep -c '^go mod download -json ' '$STUB_LOG') -eq $zips ] && cmp '$tap_tmp/fill.pb' '$built'"
run refill XDSD_CACHE_DIR="$tap_tmp/empty"
check "a second run fetches nothing" used refill "$tap_tmp/empty"

# The lock names what to fetch, never where from: the go command knows
# its proxy (GOPROXY), so the lock holds module paths, versions, sums.
check "the lock holds envoy= and go.sum lines only" sh -c \
  "! grep -v -e '^#' -e '^envoy=[0-9.]*\$' -e '^[a-z0-9./_-]* v[^ ]* h1:[A-Za-z0-9+/=]*\$' '$lock'"
check "the lock names no host to fetch from" sh -c \
  "! grep -q -e '://' -e 'proxy\\.' -e 'sum\\.golang' '$lock'"

# A damaged zip in the cache is refused and removed; offline, the
# download that would replace it fails, and nothing is written.
copy_cache "$tap_tmp/bad"
corrupt "$tap_tmp/bad/gomod/cache/download/$envoy_rel"
check "the damaged copy differs" sh -c "! cmp -s '$cache/$envoy_rel' '$tap_tmp/bad/gomod/cache/download/$envoy_rel'"
run from-bad XDSD_CACHE_DIR="$tap_tmp/bad"
check "a cached zip that fails the h1: sum is not used" \
  grep -q "^api-set: $tap_tmp/bad/gomod/cache/download/$envoy_rel: integrity mismatch .*: not using it$" "$tap_tmp/from-bad.err"
check "and removed from the cache" test ! -e "$tap_tmp/bad/gomod/cache/download/$envoy_rel"
check "the download in its place failed, nothing written" sh -c \
  "[ $rc -ne 0 ] && [ ! -e '$tap_tmp/from-bad.pb' ] && grep -q 'cannot download github.com/envoyproxy/go-control-plane/envoy@' '$tap_tmp/from-bad.err'"

# So is a downloaded one, a whole zip of other content (another
# module's in the envoy module's place), which is not cached either.
copy_cache "$tap_tmp/damaged"
cp "$cache/$(sed -n '/^[^#].* h1:/{n;p;q}' "$lock" | awk '{ print $1 "/@v/" $2 ".zip" }')" \
  "$tap_tmp/damaged/gomod/cache/download/$envoy_rel"
run from-fetch XDSD_CACHE_DIR="$tap_tmp/fetch-bad" STUB_FROM="$tap_tmp/damaged/gomod/cache/download"
check "a downloaded zip that fails the h1: sum is refused" refused from-fetch
check "and not cached" test ! -e "$tap_tmp/fetch-bad/gomod/cache/download/$envoy_rel"
done_testing
