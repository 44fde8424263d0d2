#!/usr/bin/env bash
# Keeps the lighter build honest: the seed plugin alone, built as a plugin
# author builds it (oscova-core without its default features, macros on),
# may compile at most BUDGET crates, itself included. Counts the distinct
# packages of its normal and build dependency graph: what `cargo build -p
# example-hello-plugin` compiles. A count, not a timing.
set -euo pipefail
cd "$(dirname "$0")/.."

BUDGET=40
crates="$(cargo tree -p example-hello-plugin -e normal,build --prefix none --locked \
    | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u)"
count="$(printf '%s\n' "$crates" | wc -l)"
if [ "$count" -gt "$BUDGET" ]; then
    echo "the seed plugin builds $count crates, over the budget of $BUDGET:" >&2
    printf '%s\n' "$crates" >&2
    exit 1
fi
echo "the seed plugin builds $count crates (budget $BUDGET)"
