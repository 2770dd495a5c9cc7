#!/bin/sh
# The README walkthrough, step by step, with its own files, ports and
# commands: a snapshot, two backends, xdsd, gRPC's xDS client; then a
# change and a reload, then a broken change.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

ex=$XDSD_SRCDIR/examples/walkthrough
demo=$tap_tmp/demo
mkdir -p "$demo/snapshots"
cp "$ex/default.yaml" "$demo/snapshots/"
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap 'cleanup; rm -rf "$tap_tmp"' EXIT

# 1. the snapshot checks
out=$("$XDSD" --check --schema "$XDSD_SCHEMA" --snapshots "$demo/snapshots" | tail -1)
check "step 1: --check sees the snapshot ($out)" \
  test "$out" = "# snapshot 'default': clusters 1, endpoints 1, listeners 1, routes 1"

# 2. backends and xdsd (the README's ports: 50051, 50052, 18000)
"$ex/backend.py" 50051 A > "$tap_tmp/a.log" 2>&1 & pids="$pids $!"
"$ex/backend.py" 50052 B > "$tap_tmp/b.log" 2>&1 & pids="$pids $!"
"$XDSD" --schema "$XDSD_SCHEMA" --snapshots "$demo/snapshots" > "$tap_tmp/xdsd.log" 2>&1 &
xdsd=$!; pids="$pids $xdsd"
for i in $(seq 100); do
  grep -q "listening on 127.0.0.1:18000" "$tap_tmp/xdsd.log" &&
    grep -q "on 127.0.0.1:50052" "$tap_tmp/b.log" && break
  sleep 0.1
done
check "step 2: xdsd listens on 127.0.0.1:18000" grep -q "listening on 127.0.0.1:18000" "$tap_tmp/xdsd.log"

# 3. the client, through xds:///demo
cd "$XDSD_SRCDIR"
GRPC_XDS_BOOTSTRAP=examples/walkthrough/bootstrap.json \
  examples/walkthrough/client.py xds:///demo > "$tap_tmp/client.log" 2>&1 &
pids="$pids $!"
wait_for() { # wait_for FILE TEXT SECONDS
  for i in $(seq $(($3 * 10))); do grep -q "$2" "$1" && return 0; sleep 0.1; done
  return 1
}
check "step 3: the client is answered by A" wait_for "$tap_tmp/client.log" "answered by A" 20

# 4. change and reload: the client moves to B
sed -i 's/port_value: 50051/port_value: 50052/' "$demo/snapshots/default.yaml"
kill -HUP $xdsd
check "step 4: the client is answered by B" wait_for "$tap_tmp/client.log" "answered by B" 20
check "step 4: xdsd logs the reload" \
  grep -q "reloaded 1 snapshot from 1 file in .* s: 1 changed" "$tap_tmp/xdsd.log"
check "step 4: no call failed" sh -c "! grep -q failed '$tap_tmp/client.log'"

# 5. a broken change is refused; the client keeps being served
sed -i 's/lb_policy: ROUND_ROBIN/lb_policy: ROUND_ROBBIN/' "$demo/snapshots/default.yaml"
kill -HUP $xdsd
check "step 5: the error is logged in its place" wait_for "$tap_tmp/xdsd.log" \
  "default.yaml:31:14: clusters\[0\].lb_policy: unknown value 'ROUND_ROBBIN' for enum envoy.config.cluster.v3.Cluster.LbPolicy" 10
check "step 5: the previous snapshot keeps serving" \
  grep -q "reload failed: 1 error in .*; still serving the previous snapshots" "$tap_tmp/xdsd.log"
lines=$(wc -l < "$tap_tmp/client.log")
sleep 2
check "step 5: the client is still answered by B" \
  sh -c "tail -n +$((lines + 1)) '$tap_tmp/client.log' | grep -q 'answered by B'"
check "step 5: no call failed" sh -c "! grep -q failed '$tap_tmp/client.log'"

kill $xdsd; wait $xdsd; rc=$?
check "xdsd exits 0 on SIGTERM (status $rc)" test $rc -eq 0
[ $tap_failed -eq 0 ] || { echo "# client:"; sed 's/^/#   /' "$tap_tmp/client.log" | tail -5;
  echo "# xdsd:"; sed 's/^/#   /' "$tap_tmp/xdsd.log" | tail -15; }
done_testing
