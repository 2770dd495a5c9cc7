#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make install` puts every file where the man pages and unit say, and
# the systemd unit passes systemd's own checks.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

# The directories configure chose (default prefix /usr/local).
eval "$(make -s --no-print-directory -C "$XDSD_BUILDDIR" print-dirs)"

dest=$tap_tmp/root
make -s -C "$XDSD_BUILDDIR" install DESTDIR="$dest" \
  >"$tap_tmp/install.log" 2>&1 || { fail "make install"; sed 's/^/# /' "$tap_tmp/install.log"; }

for f in "$sbindir/xdsd" "$bindir/xdsctl" "$pkgdatadir/xds-api.pb" "$sysconfdir/xdsd/xdsd.yaml" \
         "$sysconfdir/xdsd/snapshots/default.yaml" "$systemdunitdir/xdsd.service" \
         "$mandir/man8/xdsd.8" "$mandir/man5/xdsd.yaml.5" \
         "$mandir/man5/xdsd-snapshot.5" "$mandir/man1/xdsctl.1" \
         "$bindir/xdsd-build-schema" "$mandir/man1/xdsd-build-schema.1"; do
  check "installs $f" test -s "$dest$f"
done
check "installed binary runs" "$dest$sbindir/xdsd" --version
check "installed xdsctl runs" "$dest$bindir/xdsctl" --version
check "installed xdsd-build-schema runs" "$dest$bindir/xdsd-build-schema" --help
# xdsctl is a user command (section 1): in bindir, never in sbindir.
check "xdsctl is not in $sbindir" test ! -e "$dest$sbindir/xdsctl"

# An operator's edited configuration survives a second install.
echo "# edited" >> "$dest$sysconfdir/xdsd/xdsd.yaml"
make -s -C "$XDSD_BUILDDIR" install DESTDIR="$dest" >/dev/null 2>&1
check "reinstall keeps an edited xdsd.yaml" grep -q "^# edited" "$dest$sysconfdir/xdsd/xdsd.yaml"

unit=$dest$systemdunitdir/xdsd.service
check "unit starts $sbindir/xdsd with $sysconfdir/xdsd/xdsd.yaml" \
  grep -qx "ExecStart=$sbindir/xdsd --config $sysconfdir/xdsd/xdsd.yaml" "$unit"
check "unit is Type=notify" grep -qx "Type=notify" "$unit"
check "unit reloads with SIGHUP" grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$unit"
# state_dir's default under systemd (xdsd.yaml(5)): /var/lib/xdsd
check "unit keeps the last good state in StateDirectory=xdsd" grep -qx "StateDirectory=xdsd" "$unit"

# systemd-analyze checks the unit offline; point ExecStart at the
# staged binary, which is what exists on this machine.
sed "s|$sbindir/xdsd|$dest$sbindir/xdsd|" "$unit" > "$tap_tmp/xdsd.service"
check "systemd-analyze verify" systemd-analyze verify --man=no "$tap_tmp/xdsd.service"
# The TLS key as a credential (README.md, "TLS and mutual TLS"): shown
# commented, and a valid unit once uncommented.
check "unit shows LoadCredential= for the TLS key" \
  grep -qx "#LoadCredential=tls.key:$sysconfdir/xdsd/tls/server.key" "$unit"
mkdir -p "$tap_tmp/cred"
sed 's|^#LoadCredential=|LoadCredential=|' "$tap_tmp/xdsd.service" > "$tap_tmp/cred/xdsd.service"
check "unit with LoadCredential= uncommented: systemd-analyze verify" \
  sh -c "grep -q '^LoadCredential=tls.key:' '$tap_tmp/cred/xdsd.service' &&
         systemd-analyze verify --man=no '$tap_tmp/cred/xdsd.service'"
score=$(systemd-analyze security --offline=true "$tap_tmp/xdsd.service" 2>/dev/null |
  sed -n 's/.*Overall exposure level for xdsd.service: \([0-9.]*\).*/\1/p')
echo "# systemd exposure level: $score"
# README.md, "Running it as a service", records 1.1: what is left is
# what xdsd needs (sockets, the network) or the site's to decide.
check "systemd exposure level at most 1.1 (is '$score')" \
  awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 1.1) }'


done_testing
