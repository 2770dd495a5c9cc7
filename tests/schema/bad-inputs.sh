#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Golden tests for the transcoder's errors: each malformed document in
# tests/schema/bad/ must be refused with exactly the messages in the .err
# file beside it. A document's first comment lines name its message type
# ("# type: envoy.config.cluster.v3.Cluster", or "snapshot" for a whole
# snapshot file) and, for the test messages, "# schema: test". JSON
# files are snapshot files. Output is TAP.
#
# Run by `make check`; XDSD_SRCDIR, XDSD_BUILDDIR and XDSD_SCHEMA come
# from its environment.
srcdir=${XDSD_SRCDIR:-.}
builddir=${XDSD_BUILDDIR:-.}
tool=$builddir/tests/schema/transcode-tool
envoy=${XDSD_SCHEMA:-$builddir/proto/xds-api.pb}
test_schema=$builddir/tests/schema/xdtest.pb
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

cd "$srcdir/tests/schema/bad" || exit 1
n=0
failed=0
for f in *.yaml *.json; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	type=$(sed -n 's/^# type: *//p' "$f" | head -n 1)
	schema=$envoy
	grep -q '^# schema: test' "$f" && schema=$test_schema
	case "$f:$type" in
	*.json:* | *:snapshot) set -- --snapshot ;;
	*) set -- --type "$type" ;;
	esac
	"$tool" --schema "$schema" "$@" "$f" >/dev/null 2>"$out"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(cat "$out")" = "$(cat "${f%.*}.err")" ]; then
		echo "ok $n - $f"
	else
		failed=$((failed + 1))
		echo "not ok $n - $f (exit status $rc)"
		diff "${f%.*}.err" "$out" | sed 's/^/# /'
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
