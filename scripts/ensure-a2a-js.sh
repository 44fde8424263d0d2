#!/usr/bin/env bash
# Installs the official A2A JavaScript SDK whose client the oscova-a2a
# tests run against the server (scripts/a2a/client.mjs): npm @a2a-js/sdk
# 1.3.0, from scripts/a2a-js/package-lock.json, every package pinned by
# version and integrity hash, with install scripts off. It runs on the
# Node 22 scripts/ensure-pi.sh installs (no second Node). Prints two lines
# on stdout: the node binary, then the folder holding node_modules.
#
# Where: $OSCOVA_A2A_JS_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/oscova/a2a-js.
# Idempotent: a stamp holding the lockfile's hash skips the install when
# nothing changed. Needs npm (any version that has `npm ci`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
spec="$here/a2a-js"
dir="${OSCOVA_A2A_JS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oscova/a2a-js}"
stamp="$dir/.oscova-lock.sha256"
want="$(cat "$spec/package.json" "$spec/package-lock.json" | sha256sum | cut -d' ' -f1)"
node="$("$here/ensure-pi.sh" | sed -n 1p)"  # sed reads it all: no SIGPIPE under pipefail

if [[ ! -f "$dir/node_modules/@a2a-js/sdk/package.json" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    if ! command -v npm >/dev/null; then
        echo "ensure-a2a-js: npm is missing (Debian: apt-get install npm)" >&2
        exit 1
    fi
    echo "ensure-a2a-js: installing into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$spec/package.json" "$spec/package-lock.json" "$dir/"
    # --ignore-scripts: nothing outside the lockfile is fetched or run.
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    echo "$want" > "$stamp"
fi
echo "$node"
echo "$dir"
