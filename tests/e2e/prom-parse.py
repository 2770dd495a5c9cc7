#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads a /metrics page on stdin with Prometheus's own Python parser
(Debian's python3-prometheus-client) and prints every sample, one a
line, as `name{k="v",...} value` with the labels sorted, so a test can
look for exact lines. Exits 1, naming the problem, when the page does
not parse."""
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    sys.exit("prom-parse: python3-prometheus-client is not installed")

text = sys.stdin.read()
try:
    families = list(text_string_to_metric_families(text))
except Exception as e:  # the parser raises ValueError and others
    sys.exit("prom-parse: the page does not parse: %s" % e)
if not families:
    sys.exit("prom-parse: no metrics on the page")
for fam in families:
    for s in fam.samples:
        labels = ",".join('%s="%s"' % (k, s.labels[k]) for k in sorted(s.labels))
        v = s.value
        shown = "%d" % v if v == int(v) and abs(v) < 1e15 else repr(v)
        print("%s%s %s" % (s.name, "{%s}" % labels if labels else "", shown))
print("# families %d" % len(families))
