#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs the system packages the
# local speech providers need when they are missing, then formatting,
# lints, every test (unit, integration, doc and UI tests), the docs built
# with warnings as errors, the seed plugin's crate budget, and the
# packaging of every crate meant for the registry, and the structural
# rules of ARCHITECTURE.md (scripts/check-structure.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-system-packages.sh
# Debian's Postgres, for the session store's tests (throwaway clusters).
scripts/ensure-postgres.sh
# The pi coding agent's package on its pinned Node 22: the session interop
# tests check our JSONL against pi's own parseSessionEntries/buildSessionContext.
OSCOVA_PI_DIR="$(scripts/ensure-pi.sh | tail -n 1)"
export OSCOVA_PI_DIR
# oidc-provider (pinned) on that Node: the authorization server the OAuth
# resource-server tests get real access tokens from.
OSCOVA_OIDC_DIR="$(scripts/ensure-oidc-provider.sh | tail -n 1)"
export OSCOVA_OIDC_DIR
# The official A2A JavaScript SDK (@a2a-js/sdk, pinned) on that Node: its
# client against the A2A server over both bindings (oscova-a2a's js tests).
OSCOVA_A2A_JS_DIR="$(scripts/ensure-a2a-js.sh | tail -n 1)"
export OSCOVA_A2A_JS_DIR
# The official MCP Python SDK, a real third-party client and server for the MCP tests.
OSCOVA_MCP_PYTHON="$(scripts/ensure-python-mcp.sh)"
export OSCOVA_MCP_PYTHON
# The official A2A Python SDK's server (echo and slow agents) for the oscova.a2a tests.
OSCOVA_A2A_PYTHON="$(scripts/ensure-python-a2a.sh)"
export OSCOVA_A2A_PYTHON
# onnxruntime and the test voice for the piper provider's tests.
scripts/ensure-piper.sh
# Kokoro-82M, its English voices and vocabulary for the kokoro provider's tests.
scripts/ensure-kokoro.sh
# Silero VAD and Smart Turn, the voice loop's turn-taking (speech's and the
# session agent's `voice` tests).
scripts/ensure-voice-models.sh
# The Whisper models (tiny.en, base) for the whisper provider's tests.
scripts/ensure-whisper-model.sh all
# The embedded model (Qwen2.5-Coder-0.5B-Instruct) for the llamacpp
# provider's tests and the agent tests that run on it.
scripts/ensure-llamacpp-model.sh
# Debian's Chromium, for the browser tests (the voice page with a fake
# microphone, an OAuth login clicked through).
OSCOVA_CHROMIUM="$(scripts/ensure-chromium.sh | tail -n 1)"
export OSCOVA_CHROMIUM

cargo fmt --all --check
# The contract apart from the host; no source file over the 1000-line
# backstop (one concept per file is the rule); README examples compiled.
scripts/check-structure.sh
cargo clippy --workspace --all-targets --locked -- -D warnings
# The run's report is kept (and shown as it goes) for the check below.
ran="$(mktemp)"
trap 'rm -f "$ran"' EXIT
cargo test --workspace --all-targets --locked 2>&1 | tee "$ran"
cargo test --workspace --doc --locked
# The CLI as a library for other hosts (`default-features = false`, no
# plugins, no speech libraries) builds without warnings.
cargo clippy -p oscova-cli --no-default-features --lib --locked -- -D warnings
# The Postgres session store's conformance suite and two-process test, and
# the A2A fleet tests (two servers on one database), against throwaway
# clusters, ran above: the CLI's default `sessions-postgres` feature turns
# `postgres` on in oscova-agent, oscova-a2a, oscova-mcp and oscova.mcp for the whole workspace
# build, so clippy and the tests saw them. Running them again with
# `-p CRATE --features postgres` rebuilt both crates and everything above
# them under another feature set for nothing; this check fails should the
# feature ever stop reaching the workspace build: each of these tests
# must have passed in the run above. (Asking the test binaries again with
# `-- --list` also ran every bench's smoke test a second time, minutes.)
for needed in "session::stores::postgres_store_conforms" "session::processes::two_processes_write_one_postgres_session" "fleet::any_instance_answers_for_a_task_another_runs_and_a_cancel_there_holds" "oauth_user::postgres::two_stores_refreshing_at_once_use_a_rotating_refresh_token_once" "http::tasks::a_task_is_followed_on_another_instance_over_postgres"; do
    if ! grep -qF "test $needed ... ok" "$ran"; then
        echo "the workspace test run no longer passed $needed (oscova-cli's sessions-postgres feature?)" >&2
        exit 1
    fi
done
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
scripts/check-seed-budget.sh
scripts/package-check.sh
# The official MCP conformance suite against the streamable HTTP server.
scripts/mcp-conformance.sh
