#!/usr/bin/env bash
# Packages every crate meant for the registry, together and in dependency
# order, and verifies each by building it from its packaged files alone:
# `cargo package` with several `-p` resolves the workspace crates among
# them from the packages just made (a local registry overlay), so crates
# whose workspace dependencies are not published yet still verify honestly.
# Internal crates (tests, test-support, examples, the CLI for now) are
# `publish = false` and not listed.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(
    oscova-wire
    oscova-macros
    oscova-core
    oscova-agent
    oscova-serve
    oscova-mcp
    oscova-a2a
    oscova-speech
    oscova-test-kit
    oscova-plugin-time
    oscova-plugin-files
    oscova-plugin-web
    oscova-plugin-openai
    oscova-plugin-ollama
    oscova-plugin-speech
    oscova-plugin-mcp
    oscova-plugin-a2a
)
args=()
for crate in "${crates[@]}"; do
    args+=(-p "$crate")
done
# cargo unpacks each crate of that overlay into its home once per
# version and reuses the copy ever after, so a crate changed since an
# earlier run (same version) would be verified as it was then. Remove
# those copies of our crates first; nothing else of cargo's cache.
home="${CARGO_HOME:-$HOME/.cargo}"
for crate in "${crates[@]}"; do
    rm -rf "$home"/registry/src/-*/"$crate"-[0-9]* "$home"/registry/cache/-*/"$crate"-[0-9]*.crate
done
# Each package is verified as a workspace of its own, which would build
# with cargo's default dev profile (full debug info) and so rebuild every
# dependency. The workspace's own dev profile, given here as config, lets
# the verification reuse what `cargo test` built where features agree and
# halves the time.
cargo package --locked "${args[@]}" \
    --config 'profile.dev.debug="line-tables-only"' \
    --config 'profile.dev.package."*".debug=false' \
    "$@"

# The plugin guide's version lines (docs/plugin-guide.md, step 1), as an
# author will write them once the crates are published: a crate outside
# the repository, made from the guide's marked blocks (as
# oscova-cli/tests/it/outside_crate.rs makes it from the path lines), whose
# oscova crates resolve to the packages just made, through
# `[patch.crates-io]` onto their unpacked files in target/package, builds
# and passes its kit test. The workspace's Cargo.lock keeps every other
# dependency where it is, so nothing is fetched.
root="$(pwd)"
outside="$(mktemp -d)"
trap 'rm -rf "$outside"' EXIT
python3 - "$root" "$outside" "${crates[@]}" <<'PY'
import os, re, sys

root, outside, crates = sys.argv[1], sys.argv[2], sys.argv[3:]
guide = open(os.path.join(root, "docs/plugin-guide.md")).read()

def marked(kind):
    blocks = re.findall(r"<!-- outside-crate: %s -->\n```[^\n]*\n(.*?)```" % kind, guide, re.S)
    if not blocks:
        sys.exit(f"docs/plugin-guide.md has no `outside-crate: {kind}` block")
    return blocks

def visible(block):
    return "".join(l + "\n" for l in block.splitlines()
                   if not (l.lstrip() == "#" or l.lstrip().startswith("# ")))

# The path lines, with each oscova crate's line replaced by its version line.
version = {l.split("=")[0].strip(): l for b in marked("version") for l in b.splitlines()
           if l.startswith("oscova-")}
manifest = ""
for line in marked("manifest")[0].splitlines():
    name = line.split("=")[0].strip()
    manifest += (version.pop(name) if name in version else line) + "\n"
if version:
    sys.exit(f"version lines without a path line: {sorted(version)}")
manifest = '[package]\nname = "acme-weather"\nversion = "0.1.0"\nedition = "2024"\n\n' + manifest
manifest += "\n[patch.crates-io]\n"
packaged = os.path.join(root, "target/package")
for crate in crates:
    dirs = [d for d in os.listdir(packaged)
            if re.fullmatch(re.escape(crate) + r"-\d+\.\d+\.\d+", d)]
    if len(dirs) != 1:
        sys.exit(f"target/package has no single unpacked {crate}: {dirs}")
    manifest += f'{crate} = {{ path = "{packaged}/{dirs[0]}" }}\n'

os.makedirs(os.path.join(outside, "src"))
os.makedirs(os.path.join(outside, "tests"))
open(os.path.join(outside, "Cargo.toml"), "w").write(manifest)
open(os.path.join(outside, "src/lib.rs"), "w").write("\n".join(visible(b) for b in marked("lib")))
open(os.path.join(outside, "tests/weather.rs"), "w").write(visible(marked("test")[0]))
PY
cp Cargo.lock "$outside/Cargo.lock"
(
    cd "$outside"
    CARGO_TARGET_DIR="$root/target/outside-crate" cargo test --offline \
        --config 'profile.dev.debug="line-tables-only"' \
        --config 'profile.dev.package."*".debug=false'
)
echo "package-check: the guide's version lines build against the packaged crates"
