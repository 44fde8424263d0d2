#!/usr/bin/env bash
# Installs Debian's Chromium (package `chromium`, from the release's own
# archive) for the browser tests, only when missing, and prints the path
# of its binary on the last line. The tests start it themselves, headless,
# with a fresh profile and no background networking
# (test-support/src/chromium.rs).
# Runs non-interactively; uses sudo only when not already root.
set -euo pipefail

binary=/usr/bin/chromium
if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "missing Chromium: install Debian's \`chromium\` package" >&2
        exit 1
    fi
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo=(sudo)
    fi
    echo "installing: chromium" >&2
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq </dev/null
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium </dev/null >/dev/null
fi
"$binary" --version 2>/dev/null | head -n 1 >&2 || true
echo "$binary"
