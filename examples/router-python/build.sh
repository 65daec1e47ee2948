#!/usr/bin/env bash
# Builds the Python router (app.py) into a component exporting kg:router/router@0.1.0:
# componentize-py from PyPI (pinned below) in a virtualenv under the repository's target/,
# the bindings generated from ../../wit (world `router-component`), the component written to
# target/router-python/router.wasm. Idempotent: it rebuilds only when app.py, the WIT or the
# pinned version changed (then about 20-35 s, plus the pip install the first time). Prints
# the component's path. Needs python3 with venv, flock and PyPI.
set -euo pipefail
COMPONENTIZE_PY_VERSION=0.25.1

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/target/router-python
venv=$out/venv
wasm=$out/router.wasm

# The inputs' fingerprint: the tool's version, this script, app.py and every WIT file.
want=$(
  {
    echo "componentize-py $COMPONENTIZE_PY_VERSION"
    sha256sum "$here/build.sh" "$here/app.py"
    find "$root/wit" -name '*.wit' -type f | sort | xargs sha256sum
  } | sha256sum | cut -d' ' -f1
)
if [ -f "$wasm" ] && [ "$(cat "$out/.inputs.sha256" 2>/dev/null)" = "$want" ]; then
  echo "$wasm"
  exit 0
fi

mkdir -p "$out"
# One build at a time (a test and a bench may both ask); the second finds it done.
exec 9>"$out/.lock"
flock 9
if [ -f "$wasm" ] && [ "$(cat "$out/.inputs.sha256" 2>/dev/null)" = "$want" ]; then
  echo "$wasm"
  exit 0
fi
if [ "$("$venv/bin/componentize-py" --version 2>/dev/null)" != "componentize-py $COMPONENTIZE_PY_VERSION" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "componentize-py==$COMPONENTIZE_PY_VERSION" >&2
fi

# The venv's site-packages, not the system Python's, are the app's search path.
export VIRTUAL_ENV=$venv
# Fresh bindings beside a copy of app.py, so nothing is written into the source folder.
rm -rf "$out/src"
mkdir -p "$out/src"
cp "$here/app.py" "$out/src/"
"$venv/bin/componentize-py" -d "$root/wit" -w router-component bindings "$out/src" >&2
rm -f "$out/.inputs.sha256"
(cd "$out/src" && "$venv/bin/componentize-py" -d "$root/wit" -w router-component \
  componentize app -p . -o "$wasm.tmp" >&2)
mv "$wasm.tmp" "$wasm"
echo "$want" >"$out/.inputs.sha256"
echo "$wasm"
