#!/usr/bin/env bash
# Installs the OpenID Connect / OAuth 2.1 authorization server the OAuth
# resource-server tests get real access tokens from: npm oidc-provider
# (pinned), from scripts/oidc/package-lock.json, every package pinned by
# version and integrity hash, with install scripts off. It runs on the
# Node 22 scripts/ensure-pi.sh installs (no second Node). Prints two lines
# on stdout: the node binary, then the folder holding node_modules.
#
# Where: $OSCOVA_OIDC_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/oscova/oidc.
# Idempotent: a stamp holding the lockfile's hash skips the install when
# nothing changed. Needs npm (any version that has `npm ci`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
spec="$here/oidc"
dir="${OSCOVA_OIDC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oscova/oidc}"
stamp="$dir/.oscova-lock.sha256"
want="$(cat "$spec/package.json" "$spec/package-lock.json" | sha256sum | cut -d' ' -f1)"
node="$("$here/ensure-pi.sh" | head -n 1)"

if [[ ! -f "$dir/node_modules/oidc-provider/package.json" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    if ! command -v npm >/dev/null; then
        echo "ensure-oidc-provider: npm is missing (Debian: apt-get install npm)" >&2
        exit 1
    fi
    echo "ensure-oidc-provider: installing into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$spec/package.json" "$spec/package-lock.json" "$dir/"
    # --ignore-scripts: nothing outside the lockfile is fetched or run.
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    echo "$want" > "$stamp"
fi
echo "$node"
echo "$dir"
