#!/usr/bin/env bash
# The main job on embedded defaults: no API keys, no network. Lists the
# linked plugins and the published catalog, calls a tool, and runs an
# offline speech round trip (flite to pocketsphinx). Installs the system
# packages the local speech providers need when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-system-packages.sh

oscova() {
    cargo run --quiet --release --locked -p oscova-cli -- "$@"
}

echo "== plugins"
oscova plugins
echo
echo "== tools"
oscova tools list
echo
echo "== a tool call"
oscova tools call acme_search__example__example_echo --args '{"text": "Hello from Oscova"}'
if oscova speech --help >/dev/null 2>&1; then
    echo
    echo "== offline speech round trip"
    out="$(mktemp -d)/hello.wav"
    oscova speech say "open the door and turn on the light" -o "$out" --offline
    oscova speech hear "$out" --offline
fi
