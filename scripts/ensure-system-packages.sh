#!/usr/bin/env bash
# Installs the Debian packages the local speech providers need (flite,
# pocketsphinx with its English model and library; cmake and g++ to build
# whisper.cpp for the whisper provider; libclang for llama.cpp's bindings)
# and the tests need (iproute2;
# pocketsphinx-testdata's read-speech clips for the WER tests), only when
# missing.
# Runs non-interactively; uses sudo only when not already root.
set -euo pipefail

# iproute2: the network-namespace tests add their test addresses with `ip`.
packages=(flite pocketsphinx pocketsphinx-en-us libpocketsphinx-dev libsphinxbase-dev pkg-config iproute2)
# espeak-ng: the piper provider runs the `espeak-ng` program for phonemes.
packages+=(espeak-ng espeak-ng-data)
# cmake, g++: whisper-rs builds whisper.cpp; pocketsphinx-testdata: read-speech clips for the WER test.
packages+=(cmake g++ pocketsphinx-testdata)
# libclang-dev: llama-cpp-sys-2 (the embedded `llamacpp` model) generates
# its bindings with bindgen, which loads libclang.
packages+=(libclang-dev)
missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing system packages: ${missing[*]}; install them with your package manager" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq </dev/null
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
