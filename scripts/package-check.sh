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
    oscova-speech
    oscova-test-kit
    oscova-plugin-time
    oscova-plugin-files
    oscova-plugin-web
    oscova-plugin-openai
    oscova-plugin-ollama
    oscova-plugin-speech
    oscova-plugin-mcp
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
