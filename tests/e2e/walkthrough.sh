#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The README walkthrough, step by step, with its own files and commands:
# a snapshot, two backends, xdsd, gRPC's xDS client; then a change and a
# reload, then a broken change.
#
# The README's fixed ports (xdsd 18000, its admin endpoint 18080,
# backends 50051 and 50052) would clash with anything else on the
# machine, another run of this test included: each program here takes a
# free port (port 0) and says which, and the README's ports are
# replaced by those in the files and commands of each step.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

ex=$XDSD_SRCDIR/examples/walkthrough
readme=$XDSD_SRCDIR/README.md
demo=$tap_tmp/demo
mkdir -p "$demo/snapshots"
cp "$ex/default.yaml" "$demo/snapshots/"
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap 'cleanup; rm -rf "$tap_tmp"' EXIT

wait_for() { # wait_for FILE TEXT SECONDS
  for i in $(seq $(($3 * 10))); do grep -q "$2" "$1" && return 0; sleep 0.1; done
  return 1
}
# port_of FILE PATTERN: the port after PATTERN in FILE, once it is there.
port_of() {
  wait_for "$1" "$2" 10 && sed -n "s/.*$2\([0-9]*\).*/\1/p" "$1" | head -1
}

# The README's ports are held while the test runs (those that are free):
# a run that used them, as a second run at the same time would, fails.
"$PYTHON3" -c '
import socket, sys, time
held = []
for port in (18000, 18080, 50051, 50052):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); s.listen(1); held.append(s)
    except OSError:
        s.close()
print("held", len(held), flush=True)
time.sleep(600)
' > "$tap_tmp/hold.log" 2>&1 & pids="$pids $!"
wait_for "$tap_tmp/hold.log" "held" 10
echo "# the README's ports this test holds: $(sed -n 's/^held //p' "$tap_tmp/hold.log") of 4"

# What the steps below stand for, as the README writes it: xdsd's pid
# kept when it starts, and each reload sent to that one process, as
# here ($xdsd), never to every xdsd by name.
for line in "examples/walkthrough/backend.py 50051 A &" \
            "examples/walkthrough/backend.py 50052 B &" \
            "build/src/xdsd --snapshots /tmp/demo/snapshots &" \
            'xdsd_pid=$!' \
            "sed -i 's/port_value: 50051/port_value: 50052/' /tmp/demo/snapshots/default.yaml"; do
  check "README: '$line'" grep -qF -- "$line" "$readme"
done
check "README: both reloads signal xdsd's pid" \
  test "$(grep -cF 'kill -HUP $xdsd_pid' "$readme")" -eq 2
check "README: no signal to every xdsd by name" \
  sh -c "! grep -E '^ *(pkill|killall)( |$)' '$readme'"
check "the example snapshot points at 50051" \
  grep -q "port_value: 50051}" "$demo/snapshots/default.yaml"
check "the example bootstrap names 127.0.0.1:18000" \
  grep -q '"server_uri": "127.0.0.1:18000"' "$ex/bootstrap.json"

# 1. the snapshot checks
out=$("$XDSD" --check --schema "$XDSD_SCHEMA" --snapshots "$demo/snapshots" | tail -1)
check "step 1: --check sees the snapshot ($out)" \
  test "$out" = "# snapshot 'default': clusters 1, endpoints 1, listeners 1, routes 1"

# 2. backends and xdsd, on free ports in place of 50051, 50052, 18000
# (and 18080, the admin endpoint of etc/xdsd.yaml)
"$ex/backend.py" 0 A > "$tap_tmp/a.log" 2>&1 & pids="$pids $!"
"$ex/backend.py" 0 B > "$tap_tmp/b.log" 2>&1 & pids="$pids $!"
port_a=$(port_of "$tap_tmp/a.log" "on 127.0.0.1:")
port_b=$(port_of "$tap_tmp/b.log" "on 127.0.0.1:")
check "step 2: backend A listens (port '$port_a')" test -n "$port_a"
check "step 2: backend B listens (port '$port_b')" test -n "$port_b"
sed -i "s/port_value: 50051}/port_value: $port_a}/" "$demo/snapshots/default.yaml"
"$XDSD" --schema "$XDSD_SCHEMA" --snapshots "$demo/snapshots" \
  --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 > "$tap_tmp/xdsd.log" 2>&1 &
xdsd=$!; pids="$pids $xdsd"
port_x=$(port_of "$tap_tmp/xdsd.log" "listening on 127.0.0.1:0 (port ")
check "step 2: xdsd listens (port '$port_x')" test -n "$port_x"

# 3. the client, through xds:///demo, with the bootstrap naming xdsd's port
sed "s/127.0.0.1:18000/127.0.0.1:$port_x/" "$ex/bootstrap.json" > "$demo/bootstrap.json"
cd "$XDSD_SRCDIR"
GRPC_XDS_BOOTSTRAP=$demo/bootstrap.json \
  examples/walkthrough/client.py xds:///demo > "$tap_tmp/client.log" 2>&1 &
pids="$pids $!"
check "step 3: the client is answered by A" wait_for "$tap_tmp/client.log" "answered by A" 20

# 4. change and reload: the client moves to B
sed -i "s/port_value: $port_a/port_value: $port_b/" "$demo/snapshots/default.yaml"
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
# two more answers after the refusal, however long those take
answered_after() { # answered_after LINES SECONDS
  for i in $(seq $(($2 * 10))); do
    [ "$(tail -n +$(($1 + 1)) "$tap_tmp/client.log" | grep -c 'answered by B')" -ge 2 ] && return 0
    sleep 0.1
  done
  return 1
}
check "step 5: the client is still answered by B" answered_after "$lines" 20
check "step 5: no call failed" sh -c "! grep -q failed '$tap_tmp/client.log'"

kill $xdsd; wait $xdsd; rc=$?
check "xdsd exits 0 on SIGTERM (status $rc)" test $rc -eq 0
[ $tap_failed -eq 0 ] || { echo "# client:"; sed 's/^/#   /' "$tap_tmp/client.log" | tail -5;
  echo "# xdsd:"; sed 's/^/#   /' "$tap_tmp/xdsd.log" | tail -15; }
done_testing
