#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Run inside the VM of check-apparmor.sh, by a unit of its own once the
# boot is over: the package installed on a kernel that enforces
# AppArmor, and xdsd doing its job in its profile: serving, reloading
# (xdsctl in the profile too), keeping its last good state, reading TLS
# keys where the package says they may be (the group xdsd's, ssl-cert's,
# systemd's credentials), with no denial logged; and a snapshot
# directory the profile does not allow refused, to show it is enforced.
# Each check is a TAP line on the serial console, prefixed by
# "XDSD-VM ", then "XDSD-VM done", then the VM powers off.
set -u
con=/dev/ttyS0
n=0
say() { echo "XDSD-VM $*" > "$con"; }
ok() { n=$((n + 1)); say "ok $n - $*"; }
fail() { n=$((n + 1)); say "not ok $n - $*"; }
check() {
  desc=$1; shift
  if "$@" > /tmp/out 2>&1; then ok "$desc"; else
    fail "$desc"; sed 's/^/# /' /tmp/out | while IFS= read -r l; do say "$l"; done; fi
}
finish() { say "done"; systemctl poweroff; exit 0; }
prop() { systemctl show -p "$1" --value xdsd; }
denials() { journalctl -k --no-pager -o cat | grep 'apparmor="DENIED"' | grep 'profile="xdsd"'; }
no_denials() { ! denials; }
denied_srv() { denials | grep -q '/srv/xds'; }
handshake() { # the certificate xdsd presents, checked against the test CA
  openssl s_client -connect 127.0.0.1:18000 -alpn h2 -servername localhost \
    -CAfile "$certs/ca.pem" -verify_return_error < /dev/null > /tmp/hs 2>&1 &&
    grep -q 'Verify return code: 0 (ok)' /tmp/hs
}
share=/root/xdsd-test
certs=$share/certs

check "AppArmor is enabled" aa-enabled --quiet
check "apt installs the package" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q "$share"/xdsd_*.deb
check "its profile is loaded, enforced" sh -c "grep -qx 'xdsd (enforce)' /sys/kernel/security/apparmor/profiles"
check "systemctl restart xdsd" systemctl restart xdsd
check "xdsd runs in the profile" sh -c "[ \"\$(cat /proc/$(prop MainPID)/attr/current)\" = 'xdsd (enforce)' ]"
check "it serves: xdsctl status exits 0" xdsctl -c /etc/xdsd/xdsd.yaml status
check "systemctl reload xdsd (xdsctl in the profile)" systemctl reload xdsd
printf 'clusters:\n- {name: broken, type: NONSENSE}\n' > /etc/xdsd/snapshots/broken.yaml
check "a refused reload fails systemctl reload" sh -c "! systemctl reload xdsd"
rm -f /etc/xdsd/snapshots/broken.yaml
check "the last good state is saved in /var/lib/xdsd" test -s /var/lib/xdsd/snapshots.state
check "/metrics answers (from xdsd's own /proc)" python3 -c '
import urllib.request
text = urllib.request.urlopen("http://127.0.0.1:18080/metrics", timeout=30).read().decode()
assert "process_open_fds" in text, text[:200]' 

install -d -m 0755 /etc/xdsd/tls
install -m 0644 "$certs/server.pem" /etc/xdsd/tls/server.pem
install -m 0640 -o root -g xdsd "$certs/server.key" /etc/xdsd/tls/server.key
printf 'tls:\n  cert: /etc/xdsd/tls/server.pem\n  key: /etc/xdsd/tls/server.key\n' > /etc/xdsd/conf.d/60-tls.yaml
check "TLS, the group xdsd's key: systemctl restart xdsd" systemctl restart xdsd
check "... a handshake succeeds" handshake
groupadd -f -r ssl-cert
install -d -m 0710 -o root -g ssl-cert /etc/ssl/private
install -m 0640 -o root -g ssl-cert "$certs/server.key" /etc/ssl/private/xdsd.key
usermod -a -G ssl-cert xdsd
printf 'tls:\n  cert: /etc/xdsd/tls/server.pem\n  key: /etc/ssl/private/xdsd.key\n' > /etc/xdsd/conf.d/60-tls.yaml
check "TLS, ssl-cert's key in /etc/ssl/private: systemctl restart xdsd" systemctl restart xdsd
check "... a handshake succeeds" handshake
chmod 0600 /etc/xdsd/tls/server.key
chgrp root /etc/xdsd/tls/server.key
mkdir -p /run/systemd/system/xdsd.service.d
printf '[Service]\nLoadCredential=tls.key:/etc/xdsd/tls/server.key\n' > /run/systemd/system/xdsd.service.d/credential.conf
printf 'tls:\n  cert: /etc/xdsd/tls/server.pem\n  key: ${CREDENTIALS_DIRECTORY}/tls.key\n' > /etc/xdsd/conf.d/60-tls.yaml
systemctl daemon-reload
check "TLS, a credential: systemctl restart xdsd" systemctl restart xdsd
check "... a handshake succeeds" handshake
rm -f /etc/xdsd/conf.d/60-tls.yaml /run/systemd/system/xdsd.service.d/credential.conf
systemctl daemon-reload
check "back without TLS: systemctl restart xdsd" systemctl restart xdsd
check "no denial of xdsd logged while it did all that" no_denials

# The profile is enforced: snapshots where it does not allow them are
# refused, and the kernel says why (without a state directory: with one,
# xdsd would serve its last good state in their place).
mkdir -p /srv/xds
cp /etc/xdsd/snapshots/default.yaml /srv/xds/
printf 'snapshots: /srv/xds\nstate_dir: off\n' > /etc/xdsd/conf.d/70-srv.yaml
check "snapshots in /srv, not allowed: the start fails" sh -c "! systemctl restart xdsd"
check "... the kernel logs the denial" denied_srv
# allowed in the local include, as the profile says
printf '  /srv/xds/ r,\n  /srv/xds/** r,\n' > /etc/apparmor.d/local/xdsd
apparmor_parser -r /etc/apparmor.d/xdsd
check "allowed in /etc/apparmor.d/local/xdsd: the start succeeds" systemctl restart xdsd
rm -f /etc/xdsd/conf.d/70-srv.yaml

say "1..$n"
finish
