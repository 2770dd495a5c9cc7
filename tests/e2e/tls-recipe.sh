#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tls-recipe.sh DIR: runs in DIR (created) the openssl recipe of
# README.md, "TLS and mutual TLS" (a CA, a server certificate and a
# client certificate), exactly as written there, once xdsd.yaml(5) is
# seen to give the same commands. tests/e2e/check_tls_ops.c then serves
# and connects with what it made.
#
# The recipe is the ```sh block after the line "<!-- tls-recipe -->" in
# the README, and the .EX/.EE block after the comment line
# '.\" tls-recipe' in the man page.
set -eu
src=${XDSD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$1

readme=$(awk '
  /^<!-- tls-recipe -->$/ { armed = 1; next }
  armed && /^```sh$/ { inside = 1; next }
  inside && /^```$/ { exit }
  inside { print }
' "$src/README.md")
# groff escapes: \- a hyphen, \e a backslash, \(dq a double quote
man=$(awk '
  /^\.\\" tls-recipe$/ { armed = 1; next }
  armed && /^\.EX$/ { inside = 1; next }
  inside && /^\.EE$/ { exit }
  inside { print }
' "$src/man/xdsd.yaml.5" | sed -e 's/\\-/-/g' -e 's/\\(dq/"/g' -e 's/\\e/\\/g')

if [ -z "$readme" ]; then
  echo "README.md: no recipe after <!-- tls-recipe -->" >&2
  exit 1
fi
if [ "$readme" != "$man" ]; then
  echo "README.md and man/xdsd.yaml.5 give different TLS recipes:" >&2
  printf '%s\n' "$readme" > "${TMPDIR:-/tmp}/tls-recipe.readme.$$"
  printf '%s\n' "$man" > "${TMPDIR:-/tmp}/tls-recipe.man.$$"
  diff "${TMPDIR:-/tmp}/tls-recipe.readme.$$" "${TMPDIR:-/tmp}/tls-recipe.man.$$" >&2 || true
  rm -f "${TMPDIR:-/tmp}/tls-recipe.readme.$$" "${TMPDIR:-/tmp}/tls-recipe.man.$$"
  exit 1
fi
mkdir -p "$dir"
cd "$dir"
sh -eu -c "$readme"
for f in ca.pem server.pem server.key client.pem client.key; do
  [ -s "$f" ] || { echo "the recipe made no $f" >&2; exit 1; }
done
