#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Smoke test of the benchmark bench/envoy-fleet (bench/README.md, "A
# fleet of real Envoys"): with two real Envoys, SotW, it starts xdsd and
# the go-control-plane server of bench/gcp in turn, every Envoy takes the
# fleet snapshot and each of the three changes from each server, and a
# line of figures comes out per server. No figure is judged: only that
# the tool runs to its end and every Envoy converged without a NACK.
. "$(dirname "$0")/venv-python.sh"
work=${XDSD_BUILDDIR:-$srcdir/build}/tests/interop/envoy-fleet.work
rm -rf "$work"
mkdir -p "$work"
"$srcdir/bench/envoy-fleet" --envoys 2 --modes sotw --hold 0 --settle 0.2 --timeout 120 \
  --work "$work/run" > "$work/out" 2> "$work/err"
status=$?
n=0 failed=0
ok() {
  n=$((n + 1))
  if [ "$2" = yes ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=1; fi
}
# has SERVER KEY=VALUE: the server's line carries that pair
has() {
  grep "^envoy-fleet server=$1 " "$work/out" | tr ' ' '\n' | grep -qx "$2" && echo yes || echo no
}
ok "bench/envoy-fleet exits 0 (it was $status)" "$([ $status = 0 ] && echo yes || echo no)"
for s in xdsd gcp; do
  ok "$s: one line of figures" "$([ "$(grep -c "^envoy-fleet server=$s mode=sotw envoys=2 " "$work/out")" = 1 ] && echo yes || echo no)"
  for kv in configured=2 u1_converged=2 u2_converged=2 u3_converged=2 u1_envoy_clock=2 \
      rejected=0 disconnected=0 result=ok; do
    ok "$s: $kv" "$(has $s $kv)"
  done
  ok "$s: the endpoint change's time" "$(grep "^envoy-fleet server=$s " "$work/out" |
    grep -q ' u1_conv_max_ms=[0-9][0-9.]* ' && echo yes || echo no)"
done
if [ $failed = 1 ]; then
  sed 's/^/# out: /' "$work/out"
  tail -n 30 "$work/err" | sed 's/^/# err: /'
fi
echo "1..$n"
exit $failed
