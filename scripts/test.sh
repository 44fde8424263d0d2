#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs the system packages the
# local speech providers need and the Whisper models (tiny.en, base) when
# they are missing, then formatting,
# lints, and every test (unit, integration, doc and UI tests).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-system-packages.sh
scripts/ensure-whisper-model.sh all

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
