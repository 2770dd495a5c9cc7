#!/bin/sh
# The man pages render without warnings and describe what exists: every
# directive of the configuration table and every command-line option.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

man8=$XDSD_SRCDIR/man/xdsd.8
man5=$XDSD_SRCDIR/man/xdsd.yaml.5

for page in "$man8" "$man5" "$XDSD_SRCDIR/man/xdsd-snapshot.5" \
            "$XDSD_SRCDIR/man/xdsctl.1"; do
  warnings=$(groff -man -t -Tutf8 -ww -z "$page" 2>&1)
  if [ -z "$warnings" ]; then ok "$(basename "$page") renders without warnings"
  else fail "$(basename "$page") renders without warnings"; echo "$warnings" | sed 's/^/# /'; fi
done

echo "listen: 127.0.0.1:0" > "$tap_tmp/c.yaml"
mkdir -p "$tap_tmp/snapshots"
echo "{}" > "$tap_tmp/snapshots/default.yaml"
"$XDSD" --check -c "$tap_tmp/c.yaml" --schema "$XDSD_SCHEMA" \
  --snapshots "$tap_tmp/snapshots" > "$tap_tmp/check.out" 2>&1 || fail "xdsd --check"
# Top-level directives ("name: value"), sections ("tls:" alone on its
# line) and their settings (indented, "#" when unset), as section.name.
directives=$(awk '
  /^[a-z_]+:( |$)/ { sub(/:.*/, ""); section = $0; print; next }
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

done_testing
