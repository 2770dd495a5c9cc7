#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The layers of src/ (docs/design.md §12) hold: every `#include "..."`
# of a file under src/ names a header of its own module or of a module
# on a lower layer, no headers include each other in a circle, the
# layer list names exactly the modules of the tree, and the two
# libraries hold the layers the list gives them (src/libxdcore.a those
# below its line, src/libxdsd.a those above).
#
# The list is read from docs/design.md, the one place it is written:
# the fenced block whose info string is "layers", highest layer first,
# one layer a line, modules of one layer side by side on it. A module is
# a directory of src/, or "dir/stem" for files that stand apart from
# their directory's (protocol/session). A line starting with "-" is the
# core library's top.
#
# Includes that go up and are already known are listed in KNOWN below,
# each with what removes it; they are reported as TODO (not failures)
# while they last, and a new one fails.
#
# Usage: XDSD_SRCDIR=... sh tests/layers.sh     TAP, for make check
#        sh tests/layers.sh --scan ROOT          one line per finding
: "${XDSD_SRCDIR:=$(dirname "$0")/..}"

# "file include": the includes that go up today, until their owner
# moves them. None now.
KNOWN=''

# scan ROOT: prints one finding a line, "kind: text", about the tree at
# ROOT (its src/, docs/design.md, Makefile.am and src/*/local.mk).
# Kinds: list (the layer list), layer (an include that goes up or
# aside), known (one of KNOWN), cycle, library.
scan() {
	root=$1
	(cd "$root" && find src -name '*.[ch]' | LC_ALL=C sort) > "$tap_tmp/files"
	(cd "$root" && find src -mindepth 1 -maxdepth 1 -type d |
		sed 's|^src/||' | LC_ALL=C sort) > "$tap_tmp/dirs"
	# "file include" for every quoted include
	while read -r f; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
			"$root/$f" | sed "s|^|$f |"
	done < "$tap_tmp/files" > "$tap_tmp/includes"
	# "library file" for the sources of the two libraries, from the
	# automake lists (VAR = ... / VAR += ..., continued with "\")
	cat "$root/Makefile.am" "$root"/src/*/local.mk 2>/dev/null | awk '
		/^[A-Za-z_]+[ \t]*\+?=/ {
			v = $1; sub(/[ \t+=].*/, "", v)
			lib = ""
			if (v == "src_libxdcore_a_SOURCES") lib = "core"
			if (v == "src_libxdsd_a_SOURCES") lib = "xdsd"
			sub(/^[^=]*=/, "")
		}
		lib != "" {
			line = $0; cont = line ~ /\\$/; sub(/\\$/, "", line)
			n = split(line, w, /[ \t]+/)
			for (i = 1; i <= n; i++)
				if (w[i] ~ /^src\/.*\.c$/) print lib, w[i]
			if (!cont) lib = ""
		}' > "$tap_tmp/libs"
	sed -n '/^```layers$/,/^```$/p' "$root/docs/design.md" |
		sed '1d;$d' > "$tap_tmp/layers"
	printf '%s\n' "$KNOWN" > "$tap_tmp/known"

	awk -v tmp="$tap_tmp" '
	function module(path,    stem, dir) {
		stem = path; sub(/\.[ch]$/, "", stem)
		if (stem in level) return stem
		dir = path; sub(/\/.*/, "", dir)
		return dir
	}
	# depth-first search for a circle of headers through `f`
	function visit(f, trail,    i, n, t, s, parts) {
		state[f] = 1
		n = split(out[f], parts, " ")
		for (i = 1; i <= n; i++) {
			t = parts[i]
			if (t == "") continue
			if (state[t] == 1) {
				# the circle: from where t is in the trail
				s = " -> " trail " -> "
				s = substr(s, index(s, " -> " t " -> ") + 4)
				print "cycle: " s t
			} else if (state[t] == 0) {
				visit(t, trail " -> " t)
			}
		}
		state[f] = 2
	}
	BEGIN {
		while ((getline line < (tmp "/layers")) > 0) {
			if (line ~ /^-/) { core_top = nlines; continue }
			if (line ~ /^[ \t]*$/) continue
			lines[++nlines] = line
		}
		if (nlines == 0) { print "list: docs/design.md has no layers block"; exit }
		# the first line is the highest layer
		for (i = 1; i <= nlines; i++) {
			n = split(lines[i], w, /[ \t]+/)
			for (j = 1; j <= n; j++) {
				if (w[j] == "") continue
				if (w[j] in level) print "list: " w[j] " is listed twice"
				level[w[j]] = nlines - i + 1
			}
		}
		core_level = core_top == "" ? 0 : nlines - core_top
		while ((getline f < (tmp "/files")) > 0) {
			sub(/^src\//, "", f); exists[f] = 1; order[++nfiles] = f
			if (module(f) in level) used[module(f)] = 1
			else print "list: " module(f) " (src/" f ") has no layer"
		}
		while ((getline d < (tmp "/dirs")) > 0) isdir[d] = 1
		for (m in level)
			if (!(m in used))
				print "list: " m " is listed but src/ has no such module"
		while ((getline line < (tmp "/known")) > 0)
			if (line != "") known[line] = 1
		while ((getline line < (tmp "/includes")) > 0) {
			split(line, w, " "); f = w[1]; inc = w[2]
			sub(/^src\//, "", f)
			top = inc; sub(/\/.*/, "", top)
			if (!(top in isdir)) continue   # generated, or a library
			if (inc in exists && inc != f) out[f] = out[f] " " inc
			from = module(f); to = module(inc)
			if (from == to || !(from in level) || !(to in level))
				continue
			if (level[to] < level[from]) continue
			how = level[to] > level[from] ? "above" : "beside"
			text = from " includes " to ", " how " it: src/" f \
			       " includes \"" inc "\""
			if (("src/" f " " inc) in known) {
				print "known: " text
				seen_known["src/" f " " inc] = 1
			} else {
				print "layer: " text
			}
		}
		for (k in known)
			if (!(k in seen_known))
				print "gone: " k " is no longer included; remove it from KNOWN"
		for (i = 1; i <= nfiles; i++)
			if (state[order[i]] == 0) visit(order[i], order[i])
		while ((getline line < (tmp "/libs")) > 0) {
			split(line, w, " "); f = w[2]; sub(/^src\//, "", f)
			m = module(f)
			if (!(m in level)) continue
			if (w[1] == "core" && level[m] > core_level)
				print "library: src/" f " is in src/libxdcore.a, but " m " is above the core"
			if (w[1] == "xdsd" && level[m] <= core_level)
				print "library: src/" f " is in src/libxdsd.a, but " m " is in the core"
		}
		if (core_top == "")
			print "list: the layers block has no core line"
	}' < /dev/null
}

if [ "${1:-}" = --scan ]; then
	tap_tmp=$(mktemp -d /tmp/xdsd-layers.XXXXXX)
	trap 'rm -rf "$tap_tmp"' EXIT
	scan "$2"
	exit 0
fi

. "$XDSD_SRCDIR/tests/lib/tap.sh"

# report KIND TEXT: one test point, the findings of KIND as diagnostics.
report() {
	if grep -q "^$1: " "$tap_tmp/findings"; then
		fail "$2"
		grep "^$1: " "$tap_tmp/findings" | sed 's/^/# /'
	else
		ok "$2"
	fi
}

scan "$XDSD_SRCDIR" > "$tap_tmp/findings"
report list "docs/design.md's layers name every module of src/, once"
report layer "no file includes a module above or beside its own"
report cycle "no headers include each other in a circle"
report library "src/libxdcore.a holds the layers below the core line, src/libxdsd.a those above"
# Known includes that go up: each a TODO point while it lasts.
while read -r kind text; do
	[ "$kind" = known: ] || continue
	tap_n=$((tap_n + 1))
	echo "not ok $tap_n - $text # TODO known, to be removed"
done < "$tap_tmp/findings"
grep '^gone: ' "$tap_tmp/findings" | sed 's/^/# /'

# The checks can fail: a tree with an include that goes up, one that
# goes aside, a circle of headers, a module the list lacks and a core
# file above the core line.
bad=$tap_tmp/bad
mkdir -p "$bad/docs" "$bad/src/low" "$bad/src/high" "$bad/src/side" \
	"$bad/src/stray"
cat > "$bad/docs/design.md" <<'EOF'
```layers
high
-
low side
```
EOF
printf 'src_libxdcore_a_SOURCES = src/low/a.c \\\n\tsrc/high/b.c\n' > "$bad/Makefile.am"
printf '#include "high/b.h"\n#include "side/s.h"\n' > "$bad/src/low/a.h"
printf '#include "low/a.h"\n' > "$bad/src/low/a.c"
printf '#include "high/c.h"\n' > "$bad/src/high/b.h"
printf '#include "high/b.h"\n' > "$bad/src/high/c.h"
printf '#include "high/b.h"\n' > "$bad/src/high/b.c"
: > "$bad/src/side/s.h"
: > "$bad/src/stray/x.c"
scan "$bad" > "$tap_tmp/bad-findings"
for want in 'layer: low includes high, above it' \
	'layer: low includes side, beside it' \
	'cycle: high/b.h -> high/c.h -> high/b.h' \
	'list: stray (src/stray/x.c) has no layer' \
	'library: src/high/b.c is in src/libxdcore.a'; do
	if grep -qF "$want" "$tap_tmp/bad-findings"; then
		ok "a broken tree is caught: $want"
	else
		fail "a broken tree is caught: $want"
		sed 's/^/# /' "$tap_tmp/bad-findings"
	fi
done
done_testing
