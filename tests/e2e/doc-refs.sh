#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every citation in the tree resolves inside the tree: a fresh clone has
# every document that a comment, a test or a doc points to.
#
# What counts as a citation (docs/protocol.md §1 explains it for
# writers):
#   - a rule: the word "rule" or "rules" and then one or more IDs, with
#     ", ", " and ", " or ", "/" between them and "-" for a range, e.g.
#     "rule S4", "rules S7-S10, D3-D8 and D10". A list may go on at the
#     start of the next line when its line ends with a separator;
#   - a test registered under a rule: the name given to pu_add_test(s)
#     or tcase_create when it has the shape of an ID;
#   - a section: "docs/<name>.md §<n>" (or §<n>.<m>). In docs/, "§<n>" alone is a
#     section of the same file, or of the docs file named last before it
#     on the line.
# Rule IDs are the "### ID. Title" headings of docs/protocol.md; sections
# are the numbered headings ("## 3. Title", "### 3.2 Title") of docs/*.md.
#
# And what is refused:
#   - an ID written bare, outside a rule citation: it is either a
#     citation in the wrong form or a name (a listener called "L2")
#     that must be quoted: "...", '...' or `...`;
#   - names of planning documents that are not in the repository;
#   - a §-section without a docs file;
#   - a "docs/<name>.md" that does not exist;
#   - a test that docs/protocol.md lists under a rule but that is not in
#     the file it names, and a test registered under a rule that
#     docs/protocol.md does not list under it.
#
# This file is not scanned: its test tree is broken on purpose.
#
# Usage: XDSD_SRCDIR=... sh tests/e2e/doc-refs.sh       TAP, for make check
#        sh tests/e2e/doc-refs.sh --scan ROOT            one line per finding
: "${XDSD_SRCDIR:=$(dirname "$0")/../..}"
. "$XDSD_SRCDIR/tests/lib/tap.sh"

awk_prog=$tap_tmp/doc-refs.awk
cat > "$awk_prog" <<'EOF'
function isword(c) { return c ~ /[A-Za-z0-9_]/ }

function report(area, loc, msg) {
	printf "%s\t%s: %s\n", area, loc, msg
	nbad++
}

function here(msg) { report(area, path ":" fnr, msg) }

function area_of(path) {
	if (path ~ /^src\//) return "src"
	if (path ~ /^tests\//) return "tests"
	if (path ~ /^bench\//) return "bench"
	if (path ~ /^docs\//) return "docs"
	return path
}

function blank(s, from, len,    pad) {
	pad = sprintf("%" len "s", "")
	return substr(s, 1, from - 1) pad substr(s, from + len)
}

# The ID at the start of s, with a word boundary after it, or "".
function id_at(s) {
	if (!match(s, /^[A-Z][0-9]+/))
		return ""
	if (isword(substr(s, RLENGTH + 1, 1)))
		return ""
	return substr(s, 1, RLENGTH)
}

function check_id(id) {
	if (!(id in rules))
		here("rule " id " is not defined in docs/protocol.md")
}

function check_range(a, b,    la, lb, na, nb, i) {
	la = substr(a, 1, 1); lb = substr(b, 1, 1)
	na = substr(a, 2) + 0; nb = substr(b, 2) + 0
	if (la != lb || na >= nb) {
		here("bad rule range " a "-" b)
		return
	}
	for (i = na + 1; i <= nb; i++)
		check_id(la i)
}

# Parses an ID list at position p of line (checking each ID) and blanks
# it in `work`. Sets `pending` when the list ends the line on a
# separator. Returns the position after the list.
function parse_list(p,    rest, id, prev, sep, n) {
	prev = ""
	for (;;) {
		rest = substr(line, p)
		id = id_at(rest)
		if (id == "")
			return p
		if (sep == "-")
			check_range(prev, id)
		else
			check_id(id)
		work = blank(work, p, length(id))
		p += length(id)
		prev = id
		rest = substr(line, p)
		sep = ""
		if (rest ~ /^(,| and| or|\/|-)[ \t]*$/) {
			pending = 1	# the list goes on at the next line
			return p
		}
		if (match(rest, /^(, and |, or |, | and | or |\/|-)/)) {
			sep = substr(rest, 1, RLENGTH)
			if (sep != "-" && sep != "/")
				sep = ","
			n = RLENGTH
			if (id_at(substr(rest, n + 1)) == "")
				return p
			p += n
		} else {
			return p
		}
	}
}

function scan_rules(    s, off, p, kw) {
	if (pending) {
		pending = 0
		if (match(line, /^[ \t]*(\/\*|\*|\/\/|#|--)?[ \t]*/))
			parse_list(RLENGTH + 1)
	}
	s = line; off = 0
	while (match(s, /[Rr]ules?([ \t]+|$)/)) {
		p = off + RSTART
		kw = RLENGTH
		if (p > 1 && isword(substr(line, p - 1, 1))) {
			s = substr(s, RSTART + kw); off = p + kw - 1
			continue
		}
		if (substr(line, p + kw) ~ /^[ \t]*$/) {
			pending = 1	# the list starts on the next line
			break
		}
		p = parse_list(p + kw)
		s = substr(line, p); off = p - 1
	}
}

function scan_registrations(    s, name) {
	s = line
	if (match(s, /(pu_add_tests?\([^,]*,|tcase_create\()[ \t]*"[^"]*"/)) {
		s = substr(s, RSTART, RLENGTH)
		sub(/^[^"]*"/, "", s); sub(/"$/, "", s)
		name = s
		if (name ~ /^[A-Z][0-9]+$/) {
			check_id(name)
			if (line ~ /pu_add_tests?\(/) {
				s = line
				sub(/^.*pu_add_tests?\([^,]*,[ \t]*"[^"]*"[ \t]*,[ \t]*/, "", s)
				if (match(s, /^[A-Za-z_][A-Za-z0-9_]*/))
					registered[name SUBSEP substr(s, 1, RLENGTH)] = path ":" fnr
			}
		}
	}
}

function scan_sections(    s, tok, cur, sec, base) {
	cur = indocs ? self : ""
	s = line
	while (match(s, /([A-Za-z0-9_.\/-]*[A-Za-z0-9_-]\.md|§[0-9][0-9.]*)/)) {
		tok = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		if (tok !~ /^§/) {
			base = tok
			sub(/^.*\//, "", base)
			sub(/\.md$/, "", base)
			if (tok ~ /^docs\//) {
				if (!(base in docfiles))
					here(tok " does not exist")
				cur = base
			} else if (tok ~ /\// || !indocs || !(base in docfiles)) {
				cur = "-" tok
			} else {
				cur = base
			}
			continue
		}
		sec = tok
		sub(/^§/, "", sec)
		sub(/\.+$/, "", sec)
		if (cur == "")
			here("§" sec " names no file: write docs/<name>.md §" sec)
		else if (cur ~ /^-/)
			here("§" sec " of " substr(cur, 2) ": sections are cited in docs/*.md only")
		else if (!((cur SUBSEP sec) in secs))
			here("docs/" cur ".md has no section §" sec)
	}
}

function scan_outside() {
	if (line ~ /XDS-SERVER-RULE[S]/)
		here("cites the server rules outside the repository: cite docs/protocol.md")
	if (line ~ /GRPC-CORE-NOTE[S]/)
		here("cites gRPC notes outside the repository: cite docs/grpc-core.md")
	if (line ~ /DESIG[N](\.md|[ \t]*§)/)
		here("cites a design document outside the repository: cite docs/design.md")
	if (line ~ /STYL[E](\.md|[ \t]+[0-9])/)
		here("cites a style guide outside the repository: cite docs/design.md")
}

function scan_bare(    s, off, id, c) {
	s = work
	gsub(/"([^"\\]|\\.)*"/, "\"\"", s)
	gsub(/`[^`]*`/, "``", s)
	gsub(/'[A-Za-z0-9_.\/*-]*'/, "''", s)
	off = 0
	while (match(s, /[A-Z][0-9]+/)) {
		id = substr(s, RSTART, RLENGTH)
		c = substr(s, RSTART + RLENGTH, 1)
		# rule IDs have one or two digits: X509 and the like are not
		if ((RSTART == 1 || !isword(substr(s, RSTART - 1, 1))) && !isword(c) &&
		    RLENGTH <= 3 && (substr(id, 1, 1) in letters))
			here("bare " id ": cite it as \"rule " id "\", or quote it if it is a name")
		s = substr(s, RSTART + RLENGTH)
	}
}

# docs/protocol.md's lists of tests: "- `FILE`: `fn`, `fn`" under a rule.
function read_test_list(    s, file, fn) {
	s = line
	if (!match(s, /^- `[^`]*`:/))
		return
	file = substr(s, 4, RLENGTH - 5)
	s = substr(s, RLENGTH + 1)
	while (match(s, /`[^`]*`/)) {
		fn = substr(s, RSTART + 1, RLENGTH - 2)
		s = substr(s, RSTART + RLENGTH)
		listed[cur_rule SUBSEP fn] = 1
		need[cur_rule SUBSEP file SUBSEP fn] = fnr
	}
}

function has_word(file, w,    l, s, i, found) {
	found = 0
	while ((getline l < (root "/" file)) > 0) {
		s = l
		while (!found && (i = index(s, w)) > 0) {
			if ((i == 1 || !isword(substr(s, i - 1, 1))) &&
			    !isword(substr(s, i + length(w), 1)))
				found = 1
			s = substr(s, i + length(w))
		}
		if (found)
			break
	}
	close(root "/" file)
	return found
}

BEGIN {
	nbad = 0
	n = 0
	while ((getline f < list) > 0)
		files[++n] = f
	close(list)
	# pass 1: what docs/ defines
	for (k = 1; k <= n; k++) {
		f = files[k]
		if (f !~ /^docs\/[^\/]*\.md$/)
			continue
		base = f; sub(/^docs\//, "", base); sub(/\.md$/, "", base)
		docfiles[base] = 1
		while ((getline line < (root "/" f)) > 0) {
			if (match(line, /^#+ [0-9]+(\.[0-9]+)*/)) {
				s = substr(line, 1, RLENGTH); sub(/^#+ /, "", s)
				secs[base SUBSEP s] = 1
			}
			if (base == "protocol" && match(line, /^#+ [A-Z][0-9]+\. /)) {
				s = substr(line, 1, RLENGTH); sub(/^#+ /, "", s); sub(/\. $/, "", s)
				rules[s] = 1
				letters[substr(s, 1, 1)] = 1
			}
		}
		close(root "/" f)
	}
	# pass 2: every file's citations
	for (k = 1; k <= n; k++) {
		path = files[k]
		area = area_of(path)
		indocs = path ~ /^docs\/[^\/]*\.md$/
		self = path; sub(/^docs\//, "", self); sub(/\.md$/, "", self)
		pending = 0
		cur_rule = ""
		fnr = 0
		while ((getline line < (root "/" path)) > 0) {
			fnr++
			work = line
			if (path == "docs/protocol.md") {
				if (match(line, /^#+ [A-Z][0-9]+\. /)) {
					s = substr(line, 1, RLENGTH); sub(/^#+ /, "", s); sub(/\. $/, "", s)
					cur_rule = s
					work = blank(work, 1, RLENGTH)
				} else if (line ~ /^#+ /) {
					cur_rule = ""
				}
				if (cur_rule != "")
					read_test_list()
			}
			scan_outside()
			scan_registrations()
			scan_sections()
			scan_rules()
			scan_bare()
		}
		close(root "/" path)
	}
	# the tests docs/protocol.md lists exist, and every registered one is listed
	for (key in need) {
		split(key, a, SUBSEP)
		if (!has_word(a[2], a[3]))
			report("tests-listed", "docs/protocol.md:" need[key],
			       "rule " a[1] " lists " a[3] " in " a[2] ", which has no such test")
	}
	for (key in registered) {
		split(key, a, SUBSEP)
		if (!((a[1] SUBSEP a[2]) in listed))
			report("tests-listed", registered[key],
			       a[2] " is registered under rule " a[1] " but docs/protocol.md does not list it there")
	}
	exit nbad > 0
}
EOF

# scan ROOT: one "AREA<TAB>file:line: finding" line per problem.
scan() {
  ( cd "$1" && {
      find src tests bench docs -type f \( -name '*.[ch]' -o -name '*.sh' \
        -o -name '*.py' -o -name '*.js' -o -name '*.mk' -o -name '*.md' \
        -o -name '*.am' -o -name '*.proto' \) ! -path '*/node_modules/*' 2>/dev/null
      find bench tests -type f ! -name '*.*' ! -path '*/node_modules/*' 2>/dev/null |
        while read -r f; do
          case $(sed -n 1p "$f") in '#!'*) echo "$f" ;; esac
        done
      [ -f README.md ] && echo README.md
    } | grep -v '^tests/e2e/doc-refs\.sh$' | sort -u > "$tap_tmp/files" )
  LC_ALL=C awk -v root="$1" -v list="$tap_tmp/files" -f "$awk_prog" | LC_ALL=C sort
}

if [ "${1:-}" = "--scan" ]; then
  scan "$2" | cut -f2-
  exit 0
fi

# ---- the checker can fail: a small tree with one of each mistake ----
fx=$tap_tmp/fixture
mkdir -p "$fx/docs" "$fx/src" "$fx/tests"
{
  printf '# Rules\n\n## 1. Basics\n\n### S1. One\n\nTests:\n'
  printf -- '- `tests/t.c`: `t_one`, `t_gone`\n\n### S3. Three\n\n### L1. Wrap\n'
} > "$fx/docs/protocol.md"
printf '# Notes\n\n## 2. Two\n\n### 2.1 Two and a bit\n\nSee §2.1 and §%d.\n' 5 > "$fx/docs/notes.md"
n=NOTES r=RULES
{
  printf '/* rule S1, and rules S1 and S3 */\n'             # fine
  printf '/* rule S%d */\n' 99                               # undefined
  printf '/* rules S1-S%d */\n' 3                            # S2 is missing
  printf '/* a listener "L2" with route `R2` */\n'            # names, quoted
  printf '/* listener L%d */\n' 2                            # bare, unquoted
  printf '/* (S%d) */\n' 1                                   # bare citation
  printf '/* see docs/notes.md §2.1, §2 and §%d */\n' 4      # §4 undefined
  printf '/* docs/none.md */\n'                              # no such file
  printf '/* §%d alone */\n' 2                               # no file
  printf '/* GRPC-CORE-%s §1, XDS-SERVER-%s */\n' "$n" "$r"  # outside
  printf '/* rules S1,\n * S3 and S%d */\n' 7                # continued list
} > "$fx/src/a.c"
{
  printf 'static void t_one(void) {}\n'
  printf 'pu_add_test(s, "S%d", t_one);\n' 1
  printf 'pu_add_test(s, "S%d", t_two);\n' 3
  printf 'pu_add_test(s, "S%d", t_one);\n' 8
  printf 'pu_add_test(s, "wire", t_one);\n'
} > "$fx/tests/t.c"
scan "$fx" | cut -f2- > "$tap_tmp/fixture.out"
cat > "$tap_tmp/fixture.want" <<EOF
docs/notes.md:7: docs/notes.md has no section §5
docs/protocol.md:8: rule S1 lists t_gone in tests/t.c, which has no such test
src/a.c:2: rule S99 is not defined in docs/protocol.md
src/a.c:3: rule S2 is not defined in docs/protocol.md
src/a.c:5: bare L2: cite it as "rule L2", or quote it if it is a name
src/a.c:6: bare S1: cite it as "rule S1", or quote it if it is a name
src/a.c:7: docs/notes.md has no section §4
src/a.c:8: docs/none.md does not exist
src/a.c:9: §2 names no file: write docs/<name>.md §2
src/a.c:10: cites gRPC notes outside the repository: cite docs/grpc-core.md
src/a.c:10: cites the server rules outside the repository: cite docs/protocol.md
src/a.c:10: §1 names no file: write docs/<name>.md §1
src/a.c:12: rule S7 is not defined in docs/protocol.md
tests/t.c:3: t_two is registered under rule S3 but docs/protocol.md does not list it there
tests/t.c:4: rule S8 is not defined in docs/protocol.md
tests/t.c:4: t_one is registered under rule S8 but docs/protocol.md does not list it there
EOF
sort "$tap_tmp/fixture.out" > "$tap_tmp/got"
sort "$tap_tmp/fixture.want" > "$tap_tmp/want"
if diff "$tap_tmp/want" "$tap_tmp/got" > "$tap_tmp/diff"; then
  ok "the checker finds each kind of broken citation in a test tree"
else
  fail "the checker finds each kind of broken citation in a test tree"
  sed 's/^/# /' "$tap_tmp/diff"
fi

# ---- the tree itself ----
scan "$XDSD_SRCDIR" > "$tap_tmp/tree.out"
for area in src tests bench docs README.md tests-listed; do
  case $area in
    tests-listed) desc="docs/protocol.md lists exactly the tests registered under each rule" ;;
    README.md) desc="README.md cites only what docs/ defines" ;;
    *) desc="$area/ cites only rules and sections that docs/ defines" ;;
  esac
  grep "^$area	" "$tap_tmp/tree.out" | cut -f2- > "$tap_tmp/area.out"
  if [ -s "$tap_tmp/area.out" ]; then
    fail "$desc ($(wc -l < "$tap_tmp/area.out") findings)"
    sed 's/^/# /' "$tap_tmp/area.out"
  else
    ok "$desc"
  fi
done
rules=$(grep -c '^### [A-Z][0-9]*\. ' "$XDSD_SRCDIR/docs/protocol.md" 2>/dev/null)
check "docs/protocol.md defines the rules (${rules:-0} found)" test "${rules:-0}" -ge 30

done_testing
