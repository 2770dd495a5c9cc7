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
         "$bindir/xdsd-build-schema" "$mandir/man1/xdsd-build-schema.1" \
         "$sysconfdir/default/xdsd" "$sysusersdir/xdsd.conf" "$tmpfilesdir/xdsd.conf"; do
  check "installs $f" test -s "$dest$f"
done
check "installed binary runs" "$dest$sbindir/xdsd" --version
check "installed xdsctl runs" "$dest$bindir/xdsctl" --version
check "installed xdsd-build-schema runs" "$dest$bindir/xdsd-build-schema" --help
# xdsctl is a user command (section 1): in bindir, never in sbindir.
check "xdsctl is not in $sbindir" test ! -e "$dest$sbindir/xdsctl"
# conf.d/ is the site's: there, and empty
check "makes an empty $sysconfdir/xdsd/conf.d" \
  sh -c "test -d '$dest$sysconfdir/xdsd/conf.d' && [ -z \"\$(ls -A '$dest$sysconfdir/xdsd/conf.d')\" ]"
# The shipped xdsd.yaml sets nothing: a site's block appended to it, or
# a conf.d file, is never a key set twice.
check "installed xdsd.yaml sets no directive" sh -c "! grep -q '^[a-z_]' '$dest$sysconfdir/xdsd/xdsd.yaml'"
printf 'rest_listen: 127.0.0.1:0\nlog_level: debug\n' > "$tap_tmp/site.yaml"
cat "$dest$sysconfdir/xdsd/xdsd.yaml" "$tap_tmp/site.yaml" > "$tap_tmp/appended.yaml"
check "xdsd.yaml with a site block appended is valid" \
  "$dest$sbindir/xdsd" --check -c "$tap_tmp/appended.yaml" \
    --schema "$dest$pkgdatadir/xds-api.pb" --snapshots "$dest$sysconfdir/xdsd/snapshots"

# The unit's user and state directory, made as a package's scripts make
# them, in the staged root.
check "systemd-sysusers makes the user xdsd" \
  sh -c "mkdir -p '$dest/etc' && systemd-sysusers --root='$dest' '$dest$sysusersdir/xdsd.conf' &&
         grep -q '^xdsd:x:[0-9]*:[0-9]*:.*:/var/lib/xdsd:/usr/sbin/nologin\$' '$dest/etc/passwd'"
check "systemd-tmpfiles makes /var/lib/xdsd, 0700, the user xdsd's" \
  sh -c "systemd-tmpfiles --root='$dest' --create '$dest$tmpfilesdir/xdsd.conf' &&
         uid=\$(sed -n 's/^xdsd:x:\([0-9]*\):.*/\1/p' '$dest/etc/passwd') &&
         [ \"\$(stat -c '%a %u' '$dest/var/lib/xdsd')\" = \"700 \$uid\" ]"

# An operator's edited configuration survives a second install.
echo "# edited" >> "$dest$sysconfdir/xdsd/xdsd.yaml"
make -s -C "$XDSD_BUILDDIR" install DESTDIR="$dest" >/dev/null 2>&1
check "reinstall keeps an edited xdsd.yaml" grep -q "^# edited" "$dest$sysconfdir/xdsd/xdsd.yaml"

unit=$dest$systemdunitdir/xdsd.service
check "unit starts $sbindir/xdsd with $sysconfdir/xdsd/xdsd.yaml" \
  grep -qx "ExecStart=$sbindir/xdsd --config $sysconfdir/xdsd/xdsd.yaml \$XDSD_OPTS" "$unit"
check "unit is Type=notify" grep -qx "Type=notify" "$unit"
# a refused reload fails `systemctl reload`: xdsctl asks where the
# configuration has xdsd listen, and exits 1 when refused
check "unit reloads with xdsctl, asking the configuration's endpoint" \
  grep -qx "ExecReload=$bindir/xdsctl --config $sysconfdir/xdsd/xdsd.yaml --timeout 280 reload" "$unit"
check "unit runs as the user xdsd" grep -qx "User=xdsd" "$unit"
check "unit reads $sysconfdir/default/xdsd" grep -qx "EnvironmentFile=-$sysconfdir/default/xdsd" "$unit"
# state_dir's default under systemd (xdsd.yaml(5)): /var/lib/xdsd
check "unit keeps the last good state in StateDirectory=xdsd" grep -qx "StateDirectory=xdsd" "$unit"

# systemd-analyze checks the unit offline; point ExecStart at the
# staged binary, which is what exists on this machine.
sed -e "s|$sbindir/xdsd|$dest$sbindir/xdsd|" -e "s|$bindir/xdsctl|$dest$bindir/xdsctl|" \
  "$unit" > "$tap_tmp/xdsd.service"
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
