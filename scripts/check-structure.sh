#!/usr/bin/env bash
# Structural rules ARCHITECTURE.md promises, checked on every run:
# - the contract modules of oscova-core import nothing from the host;
# - no Rust source file is over 600 lines, inline tests included (a
#   longer one is a sign to split by concept).
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
contract=(oscova-core/src/plugin oscova-core/src/context.rs oscova-core/src/tool
    oscova-core/src/interaction oscova-core/src/runtime.rs oscova-core/src/provider)
if hits=$(grep -rnE '(crate|super)::host\b|use crate::\{[^}]*\bhost\b' "${contract[@]}" --include='*.rs'); then
    echo "contract modules must not import the host:" >&2
    echo "$hits" >&2
    status=1
fi

while IFS= read -r file; do
    lines=$(wc -l <"$file")
    if [ "$lines" -gt 600 ]; then
        echo "$file has $lines lines (at most 600): split it by concept" >&2
        status=1
    fi
done < <(git ls-files '*.rs')

[ "$status" -eq 0 ] && echo "structure: contract apart from the host; no source file over 600 lines"
exit "$status"
