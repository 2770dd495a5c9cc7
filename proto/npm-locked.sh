# SPDX-License-Identifier: Apache-2.0
# Shared by the proto/stage-* scripts (sourced, not run): fetch the npm
# tarball a lock file names and check it against the lock's integrity
# hash. A lock holds three lines, package=, version= and
# integrity=sha512-<base64> (what `npm view PKG@VER dist.integrity`
# prints); where to fetch it from is npm's to know (its registry, proxy
# and .npmrc), never the lock's.
#
# The caller sets $prog (the name its messages carry) and $tmp (a scratch
# directory it removes), then calls `locked_tarball LOCK`, which sets
# $locked_tgz to a cached tarball whose bytes match the lock.
#
# Cache: $XDSD_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/xdsd.

die() { echo "$prog: $*" >&2; exit 1; }

locked_val() { sed -n "s/^$2=//p" "$1"; }

# npm writes integrity as "sha512-<base64>"; compare in hex.
locked_hex() { sha512sum "$1" | cut -d' ' -f1; }

locked_tarball() {
  lk=$1
  pkg=$(locked_val "$lk" package) ver=$(locked_val "$lk" version)
  integrity=$(locked_val "$lk" integrity)
  [ -n "$pkg" ] && [ -n "$ver" ] && [ -n "$integrity" ] || die "$lk: incomplete"
  case "$integrity" in sha512-*) ;; *) die "$lk: integrity must be sha512-..." ;; esac
  cache=${XDSD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/xdsd}
  locked_tgz="$cache/$(echo "$pkg" | sed 's|^@||; s|/|-|')-$ver.tgz"
  want=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
  have=
  [ -f "$locked_tgz" ] && have=$(locked_hex "$locked_tgz")
  if [ "$have" = "$want" ]; then
    echo "$prog: using cached $locked_tgz" >&2
    return 0
  fi
  # A damaged or substituted download in the cache is never used.
  [ -z "$have" ] ||
    echo "$prog: $locked_tgz: integrity mismatch (want sha512 $want, got $have): not using it" >&2
  mkdir -p "$cache"
  rm -f "$locked_tgz"
  echo "$prog: downloading $pkg@$ver" >&2
  command -v npm >/dev/null 2>&1 ||
    die "downloading $pkg@$ver needs npm: install the Debian package npm (scripts/install-deps)${locked_hint:-}"
  mkdir -p "$tmp/fetch"
  (cd "$tmp/fetch" && npm pack --silent "$pkg@$ver" >/dev/null 2>"$tmp/npm.err") &&
    mv "$tmp"/fetch/*.tgz "$locked_tgz" ||
    { cat "$tmp/npm.err" >&2; die "cannot download $pkg@$ver: npm pack failed"; }
  rmdir "$tmp/fetch"
  got=$(locked_hex "$locked_tgz")
  if [ "$got" != "$want" ]; then
    rm -f "$locked_tgz"
    die "$pkg@$ver: integrity mismatch (want sha512 $want, got $got)"
  fi
}
