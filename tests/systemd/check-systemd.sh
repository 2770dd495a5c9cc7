#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian package under a real systemd: systemd as PID 1 in a
# container of this test's own (systemd-nspawn over a Debian tree made
# with debootstrap and kept in the cache), the package installed there
# with apt, then what an operator relies on, each a TAP line:
#
# - install: the user, the state directory, the conffiles, what `make
#   install` installs; the unit enabled and started;
# - `systemctl start` returns once xdsd serves (Type=notify);
# - `systemctl reload` returns when the reload is over, and fails when
#   it is refused (ExecReload= through xdsctl), xdsd serving on;
# - conf.d settings, and the journal with each line's priority;
# - a main loop that hangs (its thread stopped with ptrace, gRPC's
#   threads running on) is killed by the watchdog and started again;
# - `systemctl stop` is clean;
# - the TLS key: a root-only key through LoadCredential= (and refused
#   without it), renewed by the certbot deploy hook: with the same key a
#   reload, with a new key a restart (systemd copies credentials at
#   start; a reload alone is refused and says so); a key the group xdsd
#   reads, renewed by the hook with a reload, streams kept; the group
#   ssl-cert's, a new key taken by a reload;
# - etcd out of reach at start: with nothing saved, the start waits
#   past TimeoutStartSec (EXTEND_TIMEOUT_USEC=) and ends when etcd
#   answers; with a last good state, that is served after dial_timeout;
# - `systemd-analyze security xdsd` at most 1.5;
# - the package's autopkgtest (debian/tests), run by autopkgtest itself;
# - purge removes the state and the configuration.
#
# Run by `make check-systemd` (which builds the package first, make
# deb) as root. $XDSD_DEB names the .deb; else the build's deb/ has it.
# Nothing is skipped: what cannot run fails.
#
# Why a container and not a VM: systemd-nspawn boots systemd 252 as PID
# 1 here (it needs root, no machined: --register=no --keep-unit), and
# the unit's whole sandbox runs inside it (user namespace, mount
# namespaces, seccomp); a VM under emulation would take minutes to boot
# for nothing the container lacks but one: its kernel is the host's,
# so the AppArmor profile is enforced only where the host enforces
# AppArmor. It is compiled here; check-apparmor.sh boots the same tree
# as a VM with Debian's kernel to run it enforced.
#
# The tree (tests/systemd/tree.sh) is made once, kept in the cache, and
# booted with --volatile=overlay: each run starts from it unchanged.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

srcdir=$XDSD_SRCDIR
work=$tap_tmp/share
mkdir -p "$work"
machine=xdsd-test-$$
nspawn_pid=
leader=

# ct CMD...: CMD inside the container, in all of PID 1's namespaces.
ct() { nsenter -t "$leader" -a -- "$@"; }
# wait_until SECONDS CMD...: until CMD succeeds (in the container), or
# give up after SECONDS.
wait_until() {
  s=$1; shift
  end=$(($(date +%s) + s))
  while :; do
    "$@" > /dev/null 2>&1 && return 0
    [ "$(date +%s)" -lt "$end" ] || break
    sleep 0.2
  done
  echo "not within $s s: $*"
  return 1
}
prop() { ct systemctl show -p "$1" --value xdsd; }
# journal_has TEXT: the journal of xdsd's last run (and of its
# ExecReload=) holds TEXT, or does within 20 s (journald reads the
# streams of a unit on its own time)
journal_has() {
  wait_until 20 sh -c "nsenter -t $leader -a journalctl --no-pager -o cat \
    _SYSTEMD_INVOCATION_ID=\$(nsenter -t $leader -a systemctl show -p InvocationID --value xdsd) |
    grep -q -- '$1'"
}
# unit_journal_has TEXT: the same in all of the unit's journal, systemd's
# own lines about it included
unit_journal_has() {
  wait_until 20 sh -c "nsenter -t $leader -a journalctl -u xdsd --no-pager -o cat | grep -q -- '$1'"
}
# is PROPERTY VALUE: the unit's property is VALUE
is() { [ "$(prop "$1")" = "$2" ]; }
bail() {
  fail "$*"
  done_testing
  exit 1
}

stop_container() {
  [ -n "$nspawn_pid" ] || return 0
  if [ -n "$leader" ]; then
    ct systemctl poweroff > /dev/null 2>&1 || true
  fi
  i=0
  while kill -0 "$nspawn_pid" 2>/dev/null && [ $i -lt 300 ]; do
    sleep 0.2; i=$((i + 1))
  done
  # not down in a minute: systemd-nspawn ends it on SIGTERM
  kill -0 "$nspawn_pid" 2>/dev/null && kill "$nspawn_pid"
  wait "$nspawn_pid" 2>/dev/null
  nspawn_pid=
}
trap 'stop_container; rm -rf "$tap_tmp"' EXIT
trap 'exit 1' INT TERM HUP

# ---------------------------------------------------------------------
# What the test needs on the host.
# ---------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || bail "runs as root (systemd-nspawn, debootstrap)"
for tool in systemd-nspawn debootstrap nsenter dpkg-deb apparmor_parser openssl; do
  command -v "$tool" > /dev/null 2>&1 ||
    bail "$tool is installed (scripts/install-deps installs it)"
done
deb=${XDSD_DEB:-}
[ -n "$deb" ] || deb=$(ls "$XDSD_BUILDDIR"/deb/xdsd_*_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] && [ -f "$deb" ] || bail "the package is built (make deb): no xdsd_*.deb in $XDSD_BUILDDIR/deb"
echo "# package: $deb"
cp "$deb" "$work/"
debname=$(basename "$deb")

# ---------------------------------------------------------------------
# The tree (tree.sh), with what autopkgtest needs: dpkg-dev unpacks the
# source and builds the package of the tests' dependencies.
# ---------------------------------------------------------------------
. "$srcdir/tests/systemd/tree.sh"
tree_prepare "$deb" dpkg-dev || bail "$tree_error"

# ---------------------------------------------------------------------
# What goes in: the package, the source tree's debian/ (autopkgtest),
# certificates, the helper clients.
# ---------------------------------------------------------------------
mkdir -p "$work/src"
cp -r "$srcdir/debian" "$work/src/"
cp "$srcdir/tests/systemd/tls-ads.py" "$srcdir/tests/systemd/hang-loop.py" "$work/"
sh "$srcdir/tests/lib/make-certs.sh" "$work/certs" > "$tap_tmp/certs.log" 2>&1 ||
  bail "tests/lib/make-certs.sh makes the certificates"
# a renewal of server.pem for the same key (certbot --reuse-key)
(cd "$work/certs" &&
  openssl req -new -key server.key -subj "/CN=xdsd server renewed" -out renewed.csr &&
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > renewed.ext &&
  openssl x509 -req -in renewed.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -days 365 -extfile renewed.ext -out server-renewed.pem) > "$tap_tmp/renewed.log" 2>&1 ||
  { sed 's/^/# /' "$tap_tmp/renewed.log"; bail "openssl renews server.pem for its own key"; }
chmod -R a+rX "$work"

# ---------------------------------------------------------------------
# Boot.
# ---------------------------------------------------------------------
systemd-nspawn --register=no --keep-unit --boot -D "$tree" --volatile=overlay \
  --private-network -M "$machine" --console=passive \
  --bind-ro="$work:/run/xdsd-test" > "$tap_tmp/nspawn.log" 2>&1 &
nspawn_pid=$!
# PID 1 of the container: systemd-nspawn's child that runs systemd
i=0
while [ -z "$leader" ] && [ $i -lt 150 ] && kill -0 "$nspawn_pid" 2>/dev/null; do
  for c in $(pgrep -P "$nspawn_pid"); do
    [ "$(cat /proc/"$c"/comm 2>/dev/null)" = systemd ] && leader=$c
  done
  sleep 0.2; i=$((i + 1))
done
[ -n "$leader" ] || { sed 's/^/# /' "$tap_tmp/nspawn.log"; bail "systemd-nspawn boots systemd as PID 1"; }
# systemd listens on its private socket once it runs; then until the
# boot is over
wait_until 60 ct test -S /run/systemd/private > /dev/null
state=$(ct systemctl is-system-running --wait 2>&1)
check "systemd boots in the container (is-system-running: $state)" \
  sh -c "[ '$state' = running ] || [ '$state' = degraded ]"
[ "$state" = degraded ] && ct systemctl --failed --no-pager | sed 's/^/# /'
check "systemd in the container is PID 1" sh -c "[ \"\$(nsenter -t $leader -a ps -o comm= -p 1)\" = systemd ]"

# ---------------------------------------------------------------------
# Install.
# ---------------------------------------------------------------------
check "apt installs the package (offline: its dependencies are in the tree)" \
  ct env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/run/xdsd-test/$debname"
check "xdsd is enabled" ct systemctl is-enabled --quiet xdsd
check "xdsd started at install and is active" ct systemctl is-active --quiet xdsd
check "the system user xdsd exists, without a shell" \
  sh -c "nsenter -t $leader -a getent passwd xdsd | grep -q ':/var/lib/xdsd:/usr/sbin/nologin\$'"
check "/var/lib/xdsd is 0700, the user xdsd's" \
  sh -c "[ \"\$(nsenter -t $leader -a stat -c '%a %U' /var/lib/xdsd)\" = '700 xdsd' ]"
check "it runs as the user xdsd" \
  sh -c "[ \"\$(nsenter -t $leader -a ps -o user= -p \$(nsenter -t $leader -a systemctl show -p MainPID --value xdsd))\" = xdsd ]"
conffiles=$(ct dpkg-query -W -f='${Conffiles}\n' xdsd)
for f in /etc/xdsd/xdsd.yaml /etc/xdsd/snapshots/default.yaml /etc/default/xdsd /etc/apparmor.d/xdsd; do
  check "$f is a conffile" sh -c "printf '%s\n' '$conffiles' | grep -q '^ $f '"
done
check "/etc/xdsd/conf.d/ is there, empty" sh -c "[ -z \"\$(nsenter -t $leader -a ls -A /etc/xdsd/conf.d)\" ]"
check "/etc/xdsd/xdsd.yaml sets nothing (the defaults, commented out)" \
  sh -c "! nsenter -t $leader -a grep -q '^[a-z_]' /etc/xdsd/xdsd.yaml"
check "the dbgsym package is built beside it" \
  sh -c "ls '$(dirname "$deb")'/xdsd-dbgsym_*deb"

# Everything `make install` installs, the package holds: make install
# run again in the tree the package was built in (configured by
# debhelper: prefix /usr, sysconfdir /etc). bookworm's debhelper wants
# the unit in /lib/systemd/system, the same directory under merged /usr.
stage=$tap_tmp/stage
debtree=$(dirname "$deb")/xdsd-$(dpkg-deb -f "$deb" Version)
make -s -C "$debtree" install DESTDIR="$stage" > "$tap_tmp/install.log" 2>&1 ||
  { sed 's/^/# /' "$tap_tmp/install.log"; fail "make install in $debtree"; }
(cd "$stage" && find . ! -type d | sed 's|^\.||; s|^/usr/lib/systemd/system/|/lib/systemd/system/|' |
  sort) > "$tap_tmp/make-install.list"
# (dh_compress gzips the man pages)
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\.||; s|^\(/usr/share/man/.*\)\.gz$|\1|' |
  grep -v '/$' | sort > "$tap_tmp/deb.list"
notin=$(comm -23 "$tap_tmp/make-install.list" "$tap_tmp/deb.list" | tr '\n' ' ')
check "the package installs what make install installs (missing: ${notin:-none})" test -z "$notin"
# the profile as installed: parsed and compiled by apparmor_parser
mkdir -p "$tap_tmp/x" && dpkg-deb -x "$deb" "$tap_tmp/x"
check "the AppArmor profile compiles (apparmor_parser)" \
  apparmor_parser -Q -K -T -I "$tap_tmp/x/etc/apparmor.d" "$tap_tmp/x/etc/apparmor.d/xdsd"
check "the unit puts xdsd in that profile where AppArmor is on" \
  sh -c "nsenter -t $leader -a systemctl cat xdsd | grep -qx 'AppArmorProfile=-xdsd'"

# ---------------------------------------------------------------------
# Start, reload, conf.d, the journal, stop.
# ---------------------------------------------------------------------
ctl() { ct xdsctl -c /etc/xdsd/xdsd.yaml "$@"; }
check "systemctl restart xdsd" ct systemctl restart xdsd
# no waiting here: `systemctl start` returned, so xdsd serves
check "once started, xdsd is ready (xdsctl status exits 0)" ctl status
check "systemctl status shows xdsd's status line" \
  sh -c "nsenter -t $leader -a systemctl show -p StatusText --value xdsd | grep -q '^serving 1 snapshot to 0 streams'"
pid=$(prop MainPID)

snap=/etc/xdsd/snapshots/default.yaml
ct cp "$snap" /root/default.yaml.orig
ct sed -i 's/port_value: 8080/port_value: 8181/' "$snap"
check "systemctl reload xdsd takes a good change" ct systemctl reload xdsd
# no waiting here either: the reload is over when systemctl returns
check "once reloaded, the change is served" \
  sh -c "nsenter -t $leader -a xdsctl -c /etc/xdsd/xdsd.yaml dump default endpoints service_a | grep -q 8181"

ct sh -c "printf 'clusters:\n- {name: broken, type: NONSENSE}\n' > /etc/xdsd/snapshots/broken.yaml"
if ct systemctl reload xdsd > "$tap_tmp/reload.out" 2>&1; then
  fail "systemctl reload xdsd fails when the reload is refused"
else
  ok "systemctl reload xdsd fails when the reload is refused"
fi
check "the refusal, as xdsctl says it, is in the journal" unit_journal_has 'reload refused (admin, '
check "the refused file's error, with its line, is in the journal" \
  unit_journal_has '/etc/xdsd/snapshots/broken.yaml:2:'
check "xdsd is still active, the same process" sh -c "[ \"\$(nsenter -t $leader -a systemctl show -p MainPID --value xdsd)\" = $pid ]"
check "the previous snapshots are still served" \
  sh -c "nsenter -t $leader -a xdsctl -c /etc/xdsd/xdsd.yaml dump default endpoints service_a | grep -q 8181"
check "the status line says the reload FAILED" \
  sh -c "nsenter -t $leader -a systemctl show -p StatusText --value xdsd | grep -q 'last reload FAILED'"
ct rm -f /etc/xdsd/snapshots/broken.yaml
check "systemctl reload xdsd succeeds again once fixed" ct systemctl reload xdsd

# A site's settings in conf.d: the admin endpoint moves, and
# ExecReload= follows it; the log level goes to debug.
ct sh -c "printf 'admin_listen: 127.0.0.1:18090\nlog_level: debug\n' > /etc/xdsd/conf.d/50-site.yaml"
check "conf.d: systemctl restart xdsd" ct systemctl restart xdsd
check "conf.d: the journal names the file read" \
  journal_has 'configuration: then /etc/xdsd/conf.d/50-site.yaml'
check "conf.d: the admin endpoint is where conf.d puts it" ct xdsctl --admin 127.0.0.1:18090 status
check "conf.d: systemctl reload asks it there" ct systemctl reload xdsd
ct rm -f /etc/xdsd/conf.d/50-site.yaml
ct systemctl restart xdsd

# Each line with its priority: info, warning, error.
ct sh -c "printf 'clusters:\n- {name: broken, type: NONSENSE}\n' > /etc/xdsd/snapshots/broken.yaml"
ct systemctl reload xdsd > /dev/null 2>&1
ct rm -f /etc/xdsd/snapshots/broken.yaml
unit_journal_has 'broken.yaml:2:' > /dev/null
ct journalctl -u xdsd -o json --no-pager > "$tap_tmp/journal.json"
priority_of() { # TEXT: the PRIORITY of xdsd's first journal line holding TEXT
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("SYSLOG_IDENTIFIER") == "xdsd" and sys.argv[2] in str(e.get("MESSAGE", "")):
        print(e.get("PRIORITY")); break' "$tap_tmp/journal.json" "$1"
}
p=$(priority_of "listening on 127.0.0.1:18000")
check "journal: 'listening on' is at priority 6, info (is '$p')" test "$p" = 6
p=$(priority_of "broken.yaml:2:")
check "journal: the refused file's error is at priority 3, err (is '$p')" test "$p" = 3
check "journal: -p warning leaves the info lines out" \
  sh -c "! nsenter -t $leader -a journalctl -u xdsd -p warning --no-pager -o cat | grep -q 'listening on'"

check "systemctl stop xdsd" ct systemctl stop xdsd
check "stopped cleanly: Result=success ($(prop Result)), exit status 0 ($(prop ExecMainStatus))" \
  sh -c "[ '$(prop Result)' = success ] && [ '$(prop ExecMainStatus)' = 0 ]"
check "the journal says it stopped" \
  journal_has '^stopped$'
check "systemctl start xdsd" ct systemctl start xdsd

# ---------------------------------------------------------------------
# The watchdog: the loop's thread stopped, the others running.
# ---------------------------------------------------------------------
ct mkdir -p /run/systemd/system/xdsd.service.d
ct sh -c "printf '[Service]\nWatchdogSec=3s\n' > /run/systemd/system/xdsd.service.d/watchdog.conf"
ct systemctl daemon-reload
check "watchdog: systemctl restart with WatchdogSec=3s" ct systemctl restart xdsd
check "watchdog: xdsd keeps it alive (its log names it)" \
  journal_has 'systemd watchdog: 3000 ms, keepalive every 1500 ms'
pid=$(prop MainPID) restarts=$(prop NRestarts)
# the loop's thread stopped, gRPC's threads running (hang-loop.py)
ct python3 /run/xdsd-test/hang-loop.py "$pid" > "$tap_tmp/ptrace.log" 2>&1 &
tracer=$!
wait_until 10 grep -q stopped "$tap_tmp/ptrace.log" > /dev/null
check "watchdog: the loop's thread is stopped, the process alive ($(cat "$tap_tmp/ptrace.log"))" \
  sh -c "grep -q stopped '$tap_tmp/ptrace.log' && nsenter -t $leader -a kill -0 $pid"
check "watchdog: systemd kills it and starts it again" \
  wait_until 120 sh -c "[ \"\$(nsenter -t $leader -a systemctl show -p NRestarts --value xdsd)\" -gt $restarts ] &&
    [ \"\$(nsenter -t $leader -a systemctl show -p MainPID --value xdsd)\" != $pid ] &&
    nsenter -t $leader -a systemctl is-active --quiet xdsd"
wait_until 30 sh -c "! kill -0 $tracer" > /dev/null || kill "$tracer" 2>/dev/null
wait "$tracer" 2>/dev/null
[ "$tap_failed" -eq 0 ] || ct journalctl -u xdsd --no-pager -n 25 | sed 's/^/# /'
check "watchdog: the journal says the watchdog did it" \
  unit_journal_has 'Watchdog timeout'
check "watchdog: the new xdsd is ready" ctl status
ct rm -f /run/systemd/system/xdsd.service.d/watchdog.conf
ct systemctl daemon-reload

# ---------------------------------------------------------------------
# TLS keys.
# ---------------------------------------------------------------------
certs=/run/xdsd-test/certs
tls_ads() { ct python3 /run/xdsd-test/tls-ads.py 127.0.0.1:18000 "$certs/ca.pem" localhost; }
fingerprint() { # the certificate xdsd presents, as openssl sees it
  ct sh -c "openssl s_client -connect 127.0.0.1:18000 -alpn h2 -servername localhost </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256"
}
ct install -d -m 0755 /etc/xdsd/tls
ct install -m 0644 "$certs/server.pem" /etc/xdsd/tls/server.pem
ct install -m 0600 -o root -g root "$certs/server.key" /etc/xdsd/tls/server.key
ct sh -c "printf 'tls:\n  cert: /etc/xdsd/tls/server.pem\n  key: /etc/xdsd/tls/server.key\n' > /etc/xdsd/conf.d/60-tls.yaml"
if ct systemctl restart xdsd > /dev/null 2>&1; then
  fail "a key only root may read: the start fails"
else
  ok "a key only root may read: the start fails"
fi
check "... and the journal says how to pass it" \
  journal_has 'LoadCredential=tls.key:/etc/xdsd/tls/server.key'
ct sh -c "printf '[Service]\nLoadCredential=tls.key:/etc/xdsd/tls/server.key\n' > /run/systemd/system/xdsd.service.d/credential.conf"
ct sh -c "printf 'tls:\n  cert: /etc/xdsd/tls/server.pem\n  key: \${CREDENTIALS_DIRECTORY}/tls.key\n' > /etc/xdsd/conf.d/60-tls.yaml"
ct systemctl daemon-reload
check "LoadCredential=: systemctl restart xdsd" ct systemctl restart xdsd
check "LoadCredential=: a client is served over TLS" sh -c "nsenter -t $leader -a python3 /run/xdsd-test/tls-ads.py 127.0.0.1:18000 $certs/ca.pem localhost | grep -qx service_a"
check "LoadCredential=: systemd's copy is where the configuration names it" \
  ct test -s /run/credentials/xdsd.service/tls.key

# Renewals of a credential's key, which systemd copied at start. The
# same key renewed (certbot --reuse-key): the deploy hook reloads.
lineage() { # DIR CERT KEY: what certbot leaves in a lineage, of the test's pair
  ct mkdir -p "$1"
  ct cp "$certs/$2" "$1/fullchain.pem"
  ct cp "$certs/$3" "$1/privkey.pem"
}
deploy_hook() { ct env RENEWED_LINEAGE="$1" /usr/share/doc/xdsd/examples/certbot-deploy-hook; }
key_is() { [ "$(ct stat -c '%a %U:%G' /etc/xdsd/tls/server.key)" = "$1" ]; }
pid=$(prop MainPID)
old=$(fingerprint)
lineage /root/live-same server-renewed.pem server.key
check "credential, the same key renewed: the deploy hook succeeds" deploy_hook /root/live-same
new=$(fingerprint) now=$(prop MainPID)
check "... the renewed certificate is served ($new)" sh -c "[ -n '$new' ] && [ '$new' != '$old' ]"
check "... by a reload: the same process" test "$now" = "$pid"
check "... the key is still root's alone (root:root 0600)" key_is '600 root:root'
# A new key put in place by hand: the reload is refused, xdsd says what
# it takes, and the pair in use serves on.
old=$new
ct install -m 0600 "$certs/server2.key" /etc/xdsd/tls/server.key
ct install -m 0644 "$certs/server2.pem" /etc/xdsd/tls/server.pem
if ct systemctl reload xdsd > /dev/null 2>&1; then
  fail "credential, a new key: systemctl reload xdsd fails"
else
  ok "credential, a new key: systemctl reload xdsd fails"
fi
check "... the journal says it takes a restart" \
  unit_journal_has 'a certificate for a new key takes a restart (systemctl restart xdsd)'
new=$(fingerprint) now=$(prop MainPID)
check "... the pair in use serves on, the same process" \
  sh -c "[ '$new' = '$old' ] && [ '$now' = '$pid' ]"
# The deploy hook with a new key: it restarts xdsd, which takes it.
lineage /root/live-new server2.pem server2.key
deploy_hook /root/live-new > "$tap_tmp/hook.out" 2>&1
rc=$?
check "credential, a new key: the deploy hook restarts xdsd (exit $rc)" \
  sh -c "[ $rc -eq 0 ] && grep -q 'restarting xdsd' '$tap_tmp/hook.out'"
want=$(ct openssl x509 -in "$certs/server2.pem" -noout -fingerprint -sha256)
new=$(fingerprint) now=$(prop MainPID)
check "... the new certificate is served ($new)" test "$new" = "$want"
check "... by a new process" sh -c "[ -n '$now' ] && [ '$now' != 0 ] && [ '$now' != '$pid' ]"
check "... a client is served with the new pair" sh -c "nsenter -t $leader -a python3 /run/xdsd-test/tls-ads.py 127.0.0.1:18000 $certs/ca.pem localhost | grep -qx service_a"
check "... the key is still root's alone (root:root 0600)" key_is '600 root:root'
ct rm -f /run/systemd/system/xdsd.service.d/credential.conf
ct systemctl daemon-reload

# The group's key, renewed by certbot's deploy hook: a reload, the
# same process, the new certificate.
ct install -m 0644 "$certs/server.pem" /etc/xdsd/tls/server.pem
ct install -m 0640 -o root -g xdsd "$certs/server.key" /etc/xdsd/tls/server.key
ct sh -c "printf 'tls:\n  cert: /etc/xdsd/tls/server.pem\n  key: /etc/xdsd/tls/server.key\n' > /etc/xdsd/conf.d/60-tls.yaml"
check "a key the group xdsd reads: systemctl restart xdsd" ct systemctl restart xdsd
pid=$(prop MainPID)
old=$(fingerprint)
lineage /root/live server2.pem server2.key
check "the certbot deploy hook installs the renewed pair and reloads" \
  deploy_hook /root/live
new=$(fingerprint)
check "the new certificate is served ($new)" sh -c "[ -n '$new' ] && [ '$new' != '$old' ]"
check "by the same process: a reload, not a restart" sh -c "[ \"\$(nsenter -t $leader -a systemctl show -p MainPID --value xdsd)\" = $pid ]"
check "a client is served with the new pair" sh -c "nsenter -t $leader -a python3 /run/xdsd-test/tls-ads.py 127.0.0.1:18000 $certs/ca.pem localhost | grep -qx service_a"
check "the hook left the key root:xdsd 0640" \
  sh -c "[ \"\$(nsenter -t $leader -a stat -c '%a %U:%G' /etc/xdsd/tls/server.key)\" = '640 root:xdsd' ]"

# A key of /etc/ssl/private, the group ssl-cert's.
ct groupadd -f -r ssl-cert
ct install -d -m 0710 -o root -g ssl-cert /etc/ssl/private
ct install -m 0640 -o root -g ssl-cert "$certs/server.key" /etc/ssl/private/xdsd.key
ct cp "$certs/server.pem" /etc/xdsd/tls/server.pem
ct sh -c "printf 'tls:\n  cert: /etc/xdsd/tls/server.pem\n  key: /etc/ssl/private/xdsd.key\n' > /etc/xdsd/conf.d/60-tls.yaml"
ct usermod -a -G ssl-cert xdsd
check "a key of the group ssl-cert, xdsd its member: systemctl restart xdsd" ct systemctl restart xdsd
check "... a client is served over TLS" sh -c "nsenter -t $leader -a python3 /run/xdsd-test/tls-ads.py 127.0.0.1:18000 $certs/ca.pem localhost | grep -qx service_a"
# renewed with a new key: xdsd reads it itself, so a reload takes it
pid=$(prop MainPID)
old=$(fingerprint)
ct install -m 0640 -o root -g ssl-cert "$certs/server2.key" /etc/ssl/private/xdsd.key
ct install -m 0644 "$certs/server2.pem" /etc/xdsd/tls/server.pem
check "ssl-cert's key renewed with a new key: systemctl reload xdsd" ct systemctl reload xdsd
new=$(fingerprint) now=$(prop MainPID)
check "... the new certificate is served ($new)" sh -c "[ -n '$new' ] && [ '$new' != '$old' ]"
check "... by the same process" test "$now" = "$pid"
ct rm -f /etc/xdsd/conf.d/60-tls.yaml
ct systemctl restart xdsd

# ---------------------------------------------------------------------
# etcd out of reach at start. The tree's etcd-server runs Debian's
# etcd.service on localhost:2379: stopped, then started when wanted.
# ---------------------------------------------------------------------
ct systemctl stop etcd
ct sh -c "printf 'source: etcd\nstate_dir: off\netcd:\n  endpoints: [127.0.0.1:2379]\n  dial_timeout: 1s\n' > /etc/xdsd/conf.d/70-etcd.yaml"
# a short start timeout, to see the start outlast it
timeout=10
ct sh -c "printf '[Service]\nTimeoutStartSec=${timeout}s\n' > /run/systemd/system/xdsd.service.d/timeout.conf"
ct systemctl daemon-reload
ct systemctl stop xdsd
# `systemctl start` waits, in the background of this test
ct systemctl start xdsd > "$tap_tmp/start.out" 2>&1 &
starter=$!
check "etcd down: xdsd starts, listens and waits, activating" \
  wait_until 60 sh -c "[ \"\$(nsenter -t $leader -a systemctl show -p ActiveState --value xdsd)\" = activating ] &&
    nsenter -t $leader -a journalctl --no-pager -o cat \
      _SYSTEMD_INVOCATION_ID=\$(nsenter -t $leader -a systemctl show -p InvocationID --value xdsd) | grep -q 'listening on'"
pid=$(prop MainPID) restarts=$(prop NRestarts)
# three times the start timeout, by the clock: the start must outlast it
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -le $((3 * timeout)) ]; do sleep 1; done
check "etcd down: past TimeoutStartSec=${timeout}s three times over, still activating ($(prop ActiveState)), the same process, not restarted" \
  sh -c "[ '$(prop ActiveState)' = activating ] && [ '$(prop MainPID)' = '$pid' ] && [ '$(prop NRestarts)' = '$restarts' ]"
check "etcd down: systemctl start has not returned" kill -0 "$starter"
check "etcd down: the status line says what is served (nothing)" \
  sh -c "nsenter -t $leader -a systemctl show -p StatusText --value xdsd | grep -q '^serving 0 snapshots'"
ct systemctl start etcd
check "etcd: up" wait_until 60 ct env ETCDCTL_API=3 etcdctl --endpoints=127.0.0.1:2379 endpoint health
check "etcd: the snapshot put" sh -c "nsenter -t $leader -a cat /root/default.yaml.orig |
  nsenter -t $leader -a env ETCDCTL_API=3 etcdctl --endpoints=127.0.0.1:2379 put /xdsd/snapshots/default.yaml > /dev/null"
wait_until 120 sh -c "! kill -0 $starter" > /dev/null
if kill -0 "$starter" 2>/dev/null; then
  fail "etcd answers: systemctl start returns"
  kill "$starter"
else
  wait "$starter"
  rc=$?
  check "etcd answers: systemctl start returns, exit status 0 (is $rc)" test "$rc" -eq 0
fi
check "etcd answers: xdsd is active ($(prop ActiveState)), the same process" \
  sh -c "[ '$(prop ActiveState)' = active ] && [ '$(prop MainPID)' = '$pid' ]"
check "etcd answers: it serves etcd's snapshot" \
  sh -c "nsenter -t $leader -a xdsctl -c /etc/xdsd/xdsd.yaml dump default clusters service_a | grep -q service_a"

# With a last good state: saved from etcd's snapshot, served when etcd
# is away at the next start.
ct sh -c "printf 'source: etcd\netcd:\n  endpoints: [127.0.0.1:2379]\n  dial_timeout: 1s\n' > /etc/xdsd/conf.d/70-etcd.yaml"
check "last good state: systemctl restart with etcd up" ct systemctl restart xdsd
check "last good state: saved" wait_until 30 ct test -s /var/lib/xdsd/snapshots.state
ct systemctl stop etcd
check "last good state: etcd down, systemctl restart returns, 0" ct systemctl restart xdsd
check "last good state: it is served" \
  sh -c "nsenter -t $leader -a systemctl show -p StatusText --value xdsd | grep -q '^SERVING THE LAST GOOD STATE'"
check "last good state: xdsctl status says so (exit 1)" \
  sh -c "nsenter -t $leader -a xdsctl -c /etc/xdsd/xdsd.yaml status > /dev/null; [ \$? -eq 1 ]"
check "last good state: its clusters are served" \
  sh -c "nsenter -t $leader -a xdsctl -c /etc/xdsd/xdsd.yaml dump default clusters service_a | grep -q service_a"
ct rm -f /etc/xdsd/conf.d/70-etcd.yaml /run/systemd/system/xdsd.service.d/timeout.conf
ct systemctl daemon-reload
ct cp /root/default.yaml.orig "$snap"
check "back to the files: systemctl restart xdsd" ct systemctl restart xdsd

# ---------------------------------------------------------------------
# The sandbox, as systemd rates it.
# ---------------------------------------------------------------------
score=$(ct systemd-analyze security xdsd --no-pager 2>/dev/null |
  sed -n 's/.*Overall exposure level for xdsd.service: \([0-9.]*\).*/\1/p')
check "systemd-analyze security xdsd: exposure at most 1.5 (is '$score')" \
  awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 1.5) }'

# ---------------------------------------------------------------------
# The autopkgtest, by autopkgtest, in this container.
# ---------------------------------------------------------------------
# The container is this test's own, booted for it: autopkgtest's null
# runner in it is isolated, as isolation-container asks.
ct autopkgtest --ignore-restrictions=isolation-container \
  -B "/run/xdsd-test/$debname" /run/xdsd-test/src/ -- null \
  > "$tap_tmp/autopkgtest.log" 2>&1
rc=$?
# each check of debian/tests/serve-a-client, as its own TAP line
while IFS= read -r line; do
  case $line in
    "ok "*) ok "autopkgtest serve-a-client: ${line#ok * - }" ;;
    "not ok "*) fail "autopkgtest serve-a-client: ${line#not ok * - }" ;;
  esac
done < "$tap_tmp/autopkgtest.log"
check "autopkgtest: serve-a-client PASS (exit $rc)" \
  sh -c "[ $rc -eq 0 ] && grep -q '^serve-a-client *PASS' '$tap_tmp/autopkgtest.log'"
[ $rc -eq 0 ] || tail -n 30 "$tap_tmp/autopkgtest.log" | sed 's/^/# /'

# ---------------------------------------------------------------------
# Purge.
# ---------------------------------------------------------------------
# what the operator added (the TLS files) is theirs: dpkg leaves it
ct rm -rf /etc/xdsd/tls
check "apt purges the package" ct env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q xdsd
check "purge: the state and the configuration are gone" \
  sh -c "! nsenter -t $leader -a test -e /var/lib/xdsd && ! nsenter -t $leader -a test -e /etc/xdsd"
check "purge: no xdsd runs" sh -c "! nsenter -t $leader -a pgrep -x xdsd"

done_testing
