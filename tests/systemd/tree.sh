# SPDX-License-Identifier: Apache-2.0
# The Debian tree the systemd tests boot (sourced by check-systemd.sh
# and check-apparmor.sh): debootstrap --variant=minbase of the host's
# Debian release, from the mirror apt uses here (read from
# /etc/apt/sources.list*, never a host written in the repository),
# with systemd and the tests' tools; made once, in
# ${XDSD_CACHE_DIR:-~/.cache/xdsd}/systemd/, and kept. Each test adds
# the packages it needs, and those the package under test depends on,
# when they are missing (with the host's network, the tree not booted),
# so that apt installs the package offline in it.
#
#   tree_prepare DEB [PACKAGE...]
#
# sets $tree, and holds a shared lock on it (fd 9) until the caller
# exits: another run may add packages only when none boots it. Returns
# 1 with $tree_error saying what failed. Needs $tap_tmp.

# systemd and its tools; python3-grpcio for gRPC clients (the
# autopkgtest's too); etcd for the etcd source; openssl for handshakes;
# autopkgtest runs debian/tests; procps for ps.
tree_pkgs="systemd,systemd-sysv,dbus,procps,python3,python3-grpcio,etcd-server,etcd-client,openssl,autopkgtest,passwd"

tree_prepare() {
  tree_deb=$1; shift
  tree_error=
  cache=${XDSD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/xdsd}/systemd
  . /etc/os-release
  suite=$VERSION_CODENAME
  # the first URI of a source of that suite (deb822 .sources, or a
  # one-line .list)
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v s="$suite" '
    /^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) print u }
    /^$/ { u = "" }' | head -n 1)
  [ -n "$mirror" ] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk -v s="$suite" '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) break
      if ($(i + 1) == s) { print $i; exit } }')
  if [ -z "$mirror" ]; then
    tree_error="a Debian mirror for $suite in /etc/apt/sources.list*"
    return 1
  fi
  echo "# tree: Debian $suite from $mirror"
  key=$(printf '%s %s %s' "$suite" "$mirror" "$tree_pkgs" | sha256sum | cut -c1-12)
  tree=$cache/$suite-$key
  mkdir -p "$cache"
  exec 9> "$cache/.lock"
  flock 9
  if [ ! -x "$tree/lib/systemd/systemd" ]; then
    echo "# making $tree (once)"
    rm -rf "$tree.new"
    if ! debootstrap --variant=minbase --include="$tree_pkgs" "$suite" "$tree.new" "$mirror" \
         > "$tap_tmp/debootstrap.log" 2>&1; then
      tail -n 20 "$tap_tmp/debootstrap.log" | sed 's/^/# /'
      tree_error="debootstrap makes the tree"
      return 1
    fi
    # apt in the tree has the same mirror; no recommends, as on servers
    printf 'APT::Install-Recommends "false";\n' > "$tree.new/etc/apt/apt.conf.d/90xdsd-test"
    mv "$tree.new" "$tree"
  fi
  # debootstrap writes no /etc/hosts: without it "localhost" is asked
  # of DNS, which a private network cannot reach (etcd's default
  # configuration listens on localhost)
  grep -qs '^127\.0\.0\.1[[:space:]].*localhost' "$tree/etc/hosts" ||
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$tree/etc/hosts"
  want="$(dpkg-deb -f "$tree_deb" Depends | tr ',' '\n' | sed 's/[(|].*//; s/ //g' | grep -v '^$') $*"
  missing=
  for p in $want; do
    chroot "$tree" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' ||
      missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "# adding to the tree:$missing"
    if ! systemd-nspawn -q --register=no --keep-unit -D "$tree" --pipe sh -c \
         "apt-get update -q && apt-get install -y -q $missing" > "$tap_tmp/apt.log" 2>&1; then
      tail -n 20 "$tap_tmp/apt.log" | sed 's/^/# /'
      tree_error="the packages install in the tree:$missing"
      return 1
    fi
  fi
  # booted from now on: others may boot it too, not change it
  flock -s 9
}
