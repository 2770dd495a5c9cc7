# SPDX-License-Identifier: Apache-2.0
# TAP helpers for shell tests: source it, call check/ok/fail, then done_testing.
tap_n=0
tap_failed=0

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
fail() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }

# check "description" command...: one test point from a command's status.
check() {
  desc=$1; shift
  if "$@" >"$tap_tmp/out" 2>&1; then ok "$desc"; else
    fail "$desc"; sed 's/^/# /' "$tap_tmp/out"; fi
}

done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }

tap_tmp=$(mktemp -d /tmp/xdsd-tap.XXXXXX)
trap 'rm -rf "$tap_tmp"' EXIT
