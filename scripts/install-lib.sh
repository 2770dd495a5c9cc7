# SPDX-License-Identifier: Apache-2.0
# Sourced by the scripts that install the tests' own copies of outside
# clients (scripts/install-venv, install-go-client, install-java-client):
# one directory per install, remade only when what it is made from
# changed, under a lock so that tests running at once wait for one
# another instead of installing twice.

# stamp_dir DIR: makes DIR's parent and prints DIR as an absolute path.
stamp_dir() {
  mkdir -p "$(dirname "$1")"
  echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}

# stamp_of WORD... FILE...: one sha256 over the words (a tool's
# version) and the files' contents, the inputs of an install.
stamp_of() {
  for x in "$@"; do
    if [ -f "$x" ]; then
      printf 'file %s\n' "$(basename "$x")"
      cat "$x"
    else
      printf 'word %s\n' "$x"
    fi
  done | sha256sum | cut -d' ' -f1
}

# stamp_fresh DIR SUM: true when DIR was installed from inputs of SUM.
stamp_fresh() {
  [ "$(cat "$1/.inputs-sha256" 2>/dev/null || true)" = "$2" ]
}

# stamp_write DIR SUM: DIR is complete, made from inputs of SUM.
stamp_write() {
  echo "$2" > "$1/.inputs-sha256"
}

# stamp_locked DIR COMMAND...: runs COMMAND holding DIR.lock (flock(1),
# util-linux's, on every Debian), so one install runs at a time.
stamp_locked() {
  _dir=$1
  shift
  (
    flock 9
    "$@"
  ) 9> "$_dir.lock"
}
