#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Broken snapshots, as an operator meets them: `xdsd --check` on each
# folder of bad/ must fail with exactly the messages in bad/NAME.err.
# Run from bad/ so the messages carry short, stable paths.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

cd "$XDSD_SRCDIR/tests/snapshot/bad" || exit 1
conf=$tap_tmp/xdsd.yaml
echo "listen: 127.0.0.1:0" > "$conf"

n=0
for dir in */; do
  name=${dir%/}
  n=$((n + 1))
  "$XDSD" --check -c "$conf" --schema "$XDSD_SCHEMA" --snapshots "$name" \
    >/dev/null 2>"$tap_tmp/err"
  rc=$?
  if [ $rc -eq 1 ] && cmp -s "$tap_tmp/err" "$name.err"; then
    ok "$name"
  else
    fail "$name (exit status $rc)"
    diff "$name.err" "$tap_tmp/err" | sed 's/^/# /'
  fi
done
[ $n -ge 30 ] || fail "only $n cases in bad/"

# Generated here rather than committed: a file over the size bound
# (sparse, so it costs no disk) ...
mkdir -p "$tap_tmp/huge"
truncate -s 300M "$tap_tmp/huge/default.yaml"
"$XDSD" --check -c "$conf" --schema "$XDSD_SCHEMA" --snapshots "$tap_tmp/huge" \
  >/dev/null 2>"$tap_tmp/err"
rc=$?
check "a 300 MB file is refused unread (exit $rc)" \
  grep -q "default.yaml: the snapshot file is 314572800 bytes, larger than the limit of 256 MiB" "$tap_tmp/err"

# ... and a snapshot directory that is not there.
"$XDSD" --check -c "$conf" --schema "$XDSD_SCHEMA" --snapshots "$tap_tmp/nowhere" \
  >/dev/null 2>"$tap_tmp/err"
check "a missing snapshot directory is an error" \
  grep -q "nowhere: cannot read the snapshot directory: No such file or directory" "$tap_tmp/err"

# A good snapshot still passes (the cases above fail for their reason).
check "the example snapshot passes --check" \
  "$XDSD" --check -c "$conf" --schema "$XDSD_SCHEMA" --snapshots "$XDSD_SRCDIR/snapshots"

done_testing
