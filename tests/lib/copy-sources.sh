# SPDX-License-Identifier: Apache-2.0
# copy_sources DEST: a copy of the source tree in DEST, as a fresh
# checkout with autoreconf run is, for tests that configure a build of
# their own. A tree configured in place (as packagers may) refuses a
# second, out-of-tree configure: the copy leaves out the in-place
# configure output, the build trees beside the sources and what the
# build generates in the tree.
copy_sources() {
  _excl="--exclude=./.git --exclude=./autom4te.cache --exclude=node_modules"
  for _d in "$XDSD_SRCDIR"/*/; do
    [ -f "$_d/config.status" ] && _excl="$_excl --exclude=./$(basename "$_d")"
  done
  mkdir -p "$1"
  # shellcheck disable=SC2086
  tar -C "$XDSD_SRCDIR" $_excl -cf - . | tar -C "$1" -xf -
  rm -f "$1/GNUmakefile" "$1/config.status" "$1/config.log"
  rm -f "$1"/proto/*.stamp "$1"/proto/xds-api.pb "$1"/proto/wkt.pb \
    "$1"/proto/api-set/api-set "$1"/src/config/paths_gen.h
  rm -rf "$1"/proto/gocache "$1"/proto/gen
}
