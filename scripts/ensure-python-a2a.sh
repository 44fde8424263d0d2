#!/usr/bin/env bash
# Installs the official A2A Python SDK (pip package `a2a-sdk` 1.3.0 with its
# `http-server` extra, and uvicorn; every dependency pinned by version and
# wheel hash in scripts/python-a2a-requirements.txt)
# into a virtual environment of its own, when it is missing or out of date,
# and prints the path of that environment's python on standard output.
#
# Where: $OSCOVA_A2A_VENV, else ${XDG_CACHE_HOME:-$HOME/.cache}/oscova/python-a2a.
# Tests find the interpreter through $OSCOVA_A2A_PYTHON (scripts/test.sh sets
# it from this script's output) or, when that is unset, at the default place;
# they fail, naming this script, when neither has it.
#
# Idempotent: a stamp holding the requirements file's hash skips the install
# when nothing changed. Needs python3 (3.11) with the venv module; installs
# Debian's python3-venv when that module is missing and we are root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
requirements="$here/python-a2a-requirements.txt"
venv="${OSCOVA_A2A_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/oscova/python-a2a}"
stamp="$venv/.oscova-requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "$venv/bin/python"
    exit 0
fi

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
        echo "ensure-python-a2a: installing python3-venv" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >&2
    else
        echo "ensure-python-a2a: python3 has no venv module; install python3-venv" >&2
        exit 1
    fi
fi

echo "ensure-python-a2a: creating $venv" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
python3 -m venv "$venv" >&2
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-deps --only-binary=:all: --require-hashes -r "$requirements" >&2; then
    echo "ensure-python-a2a: pip could not install the pinned A2A SDK (a wheel missing from the registry, or a hash mismatch); see $requirements" >&2
    exit 1
fi
"$venv/bin/python" -c 'import a2a.server.routes, a2a.types, uvicorn' >&2
echo "$want" > "$stamp"
echo "$venv/bin/python"
