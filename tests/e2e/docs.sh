#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The man pages render without warnings and describe what exists: every
# directive of the configuration table and every command-line option.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

man8=$XDSD_SRCDIR/man/xdsd.8
man5=$XDSD_SRCDIR/man/xdsd.yaml.5

# quiet NAME COMMAND...: one test point, passed when COMMAND succeeds
# and prints nothing (warnings fail it, and are shown).
quiet() {
  desc=$1; shift
  out=$("$@" 2>&1) && [ -z "$out" ] && { ok "$desc"; return; }
  fail "$desc"; printf '%s\n' "$out" | sed 's/^/# /'
}
# no_controls FILE: lists the lines of FILE holding a control character
# other than tab and newline; fails when there are any.
no_controls() {
  bad=$(grep -nP '[\x00-\x08\x0b-\x1f\x7f]' "$1" | cat -A)
  [ -z "$bad" ] || { printf '%s\n' "$bad"; return 1; }
}

# Every page, by two formatters: groff for the terminal and for
# PostScript (only the latter warns of characters no font has, such as
# a form feed that "\f" became in an editor), and mandoc's linter (bad
# characters, macros misused, style). A raw control character is an
# error in itself: it renders as garbage or vanishes.
command -v mandoc >/dev/null 2>&1 ||
  fail "mandoc is installed (scripts/install-deps installs it)"
for page in "$XDSD_SRCDIR"/man/*.[1-8]; do
  name=$(basename "$page")
  quiet "$name: groff -Tutf8 without warnings" groff -man -t -Tutf8 -ww -z "$page"
  quiet "$name: groff -Tps without warnings" groff -man -t -Tps -ww -z "$page"
  command -v mandoc >/dev/null 2>&1 &&
    quiet "$name: mandoc -T lint without messages" mandoc -T lint -W style "$page"
  quiet "$name: no control characters" no_controls "$page"
done
# The REST path as a reader sees it (a font escape once ate its colon).
groff -man -t -Tutf8 -P-cbou "$man8" > "$tap_tmp/xdsd.8.txt" 2>&1
check "xdsd(8) shows 'POST /v3/discovery:type'" \
  grep -q "^ *POST /v3/discovery:type$" "$tap_tmp/xdsd.8.txt"

echo "listen: 127.0.0.1:0" > "$tap_tmp/c.yaml"
mkdir -p "$tap_tmp/snapshots"
echo "{}" > "$tap_tmp/snapshots/default.yaml"
"$XDSD" --check -c "$tap_tmp/c.yaml" --schema "$XDSD_SCHEMA" \
  --snapshots "$tap_tmp/snapshots" > "$tap_tmp/check.out" 2>&1 || fail "xdsd --check"
# Top-level directives ("name: value", "#name:" when unset), sections
# ("tls:" alone on its line) and their settings (indented, "#" when
# unset), as section.name.
directives=$(awk '
  /^#?[a-z_]+:( |$)/ { sub(/^#/, ""); sub(/:.*/, ""); section = $0; print; next }
  /^  #?[a-z_]+:/ { sub(/^  #?/, ""); sub(/:.*/, ""); print section "." $0 }
' "$tap_tmp/check.out")
[ -n "$directives" ] || fail "--check printed directives"
for d in $directives; do
  check "xdsd.yaml(5) documents '$d'" grep -q "^\.BI $d: " "$man5"
  case $d in
    *.*) name=${d#*.}
         check "etc/xdsd.yaml mentions '$d'" grep -Eq "^#? +$name:" "$XDSD_SRCDIR/etc/xdsd.yaml" ;;
    *) check "etc/xdsd.yaml mentions '$d'" grep -Eq "^#?$d:" "$XDSD_SRCDIR/etc/xdsd.yaml" ;;
  esac
done

options=$("$XDSD" --help | grep -o -- '--[a-z-]*' | sort -u)
for o in $options; do
  esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
  check "xdsd(8) documents $o" grep -q -- "$esc" "$man8"
done

# xdsctl(1): every option and command of its --help, and every exit
# status it names.
man1=$XDSD_SRCDIR/man/xdsctl.1
"$XDSCTL" --help > "$tap_tmp/xdsctl.help" || fail "xdsctl --help"
for o in $(grep -o -- '--[a-z-]*' "$tap_tmp/xdsctl.help" | sort -u); do
  esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
  check "xdsctl(1) documents $o" grep -q -- "$esc" "$man1"
done
for c in $(sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' "$tap_tmp/xdsctl.help"); do
  check "xdsctl(1) documents the command $c" grep -q "^\.B[IR]* $c" "$man1"
done
for s in 0 1 2 3; do
  check "xdsctl(1) documents exit status $s" grep -qx "\.B $s" "$man1"
done

# README.md's blocks that stand for a file of the tree (a line that is
# just `path`: before a fenced block) are that file, byte for byte: the
# Envoy bootstrap and snapshot that tests/interop/envoy-*.sh run, and
# the xdsd settings of envoy-mtls.sh.
readme=$XDSD_SRCDIR/README.md
mkdir -p "$tap_tmp/blocks"
awk -v dir="$tap_tmp/blocks" '
  inside && /^```$/ { inside = 0; close(f); next }
  inside { print > f; next }
  /^`[^` ]+`:$/ { path = substr($0, 2, length($0) - 3); part = 0; next }
  /^`[^` ]+` \(an excerpt\):$/ { path = substr($0, 2, index($0, "` (") - 2); part = 1; next }
  path != "" && /^```/ { inside = 1; n++; f = dir "/" n
                         print path > (dir "/" n (part ? ".part" : ".path"))
                         close(dir "/" n (part ? ".part" : ".path"))
                         printf "" > f; path = ""; next }
  /^$/ { next }
  { path = "" }
' "$readme"
for want in examples/envoy/bootstrap.yaml examples/envoy/snapshots/default.yaml \
    examples/envoy/mtls/xdsd.yaml; do
  grep -qx "$want" "$tap_tmp"/blocks/*.path 2>/dev/null ||
    fail "README.md shows $want (a line \`$want\`: before its block)"
done
for p in "$tap_tmp"/blocks/*.path; do
  [ -f "$p" ] || continue
  file=$(cat "$p")
  check "README.md's block for $file is that file" \
    cmp "${p%.path}" "$XDSD_SRCDIR/$file"
done
# A block shown as `path` (an excerpt): is lines of that file, in a row.
for p in "$tap_tmp"/blocks/*.part; do
  [ -f "$p" ] || continue
  file=$(cat "$p")
  tr '\n' '\001' < "${p%.part}" > "${p%.part}.flat"
  tr '\n' '\001' < "$XDSD_SRCDIR/$file" > "${p%.part}.file"
  check "README.md's excerpt of $file is lines of that file" \
    grep -qF -f "${p%.part}.flat" "${p%.part}.file"
done

done_testing
