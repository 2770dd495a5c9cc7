#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The paths compiled into xdsd follow the prefix configure is given:
# configuring a build again with another prefix rebuilds what embeds the
# paths (and nothing else), and the rebuilt binary reports and uses the
# new ones. A scratch out-of-tree build of the xdsd binary only, at -O0,
# with the older API tree of the schema tests (--with-xds-api: no go
# command, no module downloaded; the tree comes from the cache the
# schema tests fill).
. "$XDSD_SRCDIR/tests/lib/tap.sh"
. "$XDSD_SRCDIR/tests/lib/copy-sources.sh"

api=$tap_tmp/api
src=$tap_tmp/src
b=$tap_tmp/build
p=$tap_tmp/p
mkdir -p "$b"
sh "$XDSD_SRCDIR/tests/schema/stage-old-api" "$XDSD_SRCDIR/tests/schema/old-api.lock" \
  "$api" 2> "$tap_tmp/stage.err" || { fail "the older API tree is staged"; cat "$tap_tmp/stage.err"; }
copy_sources "$src"

# conf FLAGS...: configure $b as the top-level Makefile does for
# CONFIGURE_FLAGS, then build src/xdsd; the make output in $tap_tmp/make.log.
conf() {
  (cd "$b" && "$src/configure" -q --with-xds-api="$api" CFLAGS=-O0 "$@") \
    > "$tap_tmp/conf.log" 2>&1 || { cat "$tap_tmp/conf.log"; return 1; }
  XDSD_CACHE_DIR=/nonexistent/xdsd-cache make -C "$b" src/xdsd \
    > "$tap_tmp/make.log" 2>&1 || { tail -20 "$tap_tmp/make.log"; return 1; }
}
# compiled OBJECTS: the last make compiled exactly OBJECTS (a sorted,
# space-separated list; empty for none).
compiled() {
  got=$(sed -n 's/^ *CC  *//p' "$tap_tmp/make.log" | sort | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$1" ] || { echo "compiled: '$got', not '$1'"; cat "$tap_tmp/make.log"; return 1; }
}
# defaults WHAT: the installed default WHAT that --version names.
defaults() {
  "$b/src/xdsd" --version | sed -n "/^installed defaults:/,/^[^ ]/s/^  $1  *//p"
}
# is WHAT VALUE: --version names VALUE as the installed default WHAT.
is() {
  got=$(defaults "$1")
  [ "$got" = "$2" ] || { echo "--version: $1 '$got', not '$2'"; "$b/src/xdsd" --version; return 1; }
}

check "configure --prefix=/usr --sysconfdir=/etc; make src/xdsd" \
  conf --prefix=/usr --sysconfdir=/etc
check "configuration file /etc/xdsd/xdsd.yaml" is "configuration file" /etc/xdsd/xdsd.yaml
check "snapshot directory /etc/xdsd/snapshots" is "snapshot directory" /etc/xdsd/snapshots
check "schema file /usr/share/xdsd/xds-api.pb" is "schema file" /usr/share/xdsd/xds-api.pb

check "configure again --prefix=$p; make src/xdsd" conf --prefix="$p"
check "only src/config/paths.o is compiled again" compiled src/config/paths.o
check "configuration file follows: $p/etc/xdsd/xdsd.yaml" \
  is "configuration file" "$p/etc/xdsd/xdsd.yaml"
check "snapshot directory follows: $p/etc/xdsd/snapshots" \
  is "snapshot directory" "$p/etc/xdsd/snapshots"
check "schema file follows: $p/share/xdsd/xds-api.pb" \
  is "schema file" "$p/share/xdsd/xds-api.pb"

# Outside its build tree the binary uses them: --check looks for the
# configuration file under the new prefix.
mkdir -p "$p/sbin"
cp "$b/src/xdsd" "$p/sbin/xdsd"
"$p/sbin/xdsd" --check > "$tap_tmp/check.out" 2>&1
check "an installed --check looks for $p/etc/xdsd/xdsd.yaml" \
  grep -qF "$p/etc/xdsd/xdsd.yaml" "$tap_tmp/check.out"
check "and names no path outside $p" \
  sh -c "! grep -o '/[^ :]*' '$tap_tmp/check.out' | grep -v '^$p/'"

# The same prefix again: the header is not rewritten, nothing compiles.
check "configure again with the same prefix; make src/xdsd" conf --prefix="$p"
check "nothing is compiled again" compiled ""
done_testing
