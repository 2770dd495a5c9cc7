#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Failover: two xdsd replicas on one etcd prefix behind haproxy, in
# network namespaces of the test's own; real xDS clients outlive the
# replica they are on without a failed RPC. See tests/interop/README.md.
# Needs root (ip netns add): elsewhere it fails, and says why. Options
# go to failover.py (--clients KIND,...: failover-pypi-go-java.sh).
. "$(dirname "$0")/debian-python.sh"
netns=xdsd-fo-$$
# The driver removes its namespaces itself; should it be killed, they
# (and whatever still runs in them) go here.
cleanup() {
  for ns in "$netns-lb" "$netns-a" "$netns-b"; do
    [ -e "/run/netns/$ns" ] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
"$python" "$srcdir/tests/interop/failover.py" --netns "$netns" "$@"
