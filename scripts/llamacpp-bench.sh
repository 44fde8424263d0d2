#!/usr/bin/env bash
# The embedded model's benchmarks (examples/llamacpp-bench), with
# llama.cpp's own llama-bench built from the very source the provider
# vendors (the llama-cpp-sys-2 crate in cargo's registry), with the same
# CPU settings as the provider's build (GGML_NATIVE=OFF: AVX2/FMA/F16C,
# no OpenMP, Release), so the two run the same kernels on the same model
# file and threads. Arguments go to the benchmark (--model NAME,
# --threads N, --reps N, --only speed|resume|tools).
# Needs the model installed (scripts/ensure-llamacpp-model.sh NAME).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-system-packages.sh
cargo build --release --locked -p example-llamacpp-bench

version="$(cargo metadata --format-version 1 --locked |
    python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "llama-cpp-sys-2"))')"
src="$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 1 -mindepth 1 -type d |
    while read -r index; do [ -d "$index/llama-cpp-sys-2-$version/llama.cpp" ] && echo "$index/llama-cpp-sys-2-$version/llama.cpp"; done | head -n 1)"
if [ -z "$src" ]; then
    echo "llama-cpp-sys-2 $version is not in cargo's registry; build the workspace first" >&2
    exit 1
fi
build="target/llama-bench-$version"
if [ ! -x "$build/bin/llama-bench" ]; then
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=ON -DBUILD_SHARED_LIBS=OFF >/dev/null
    cmake --build "$build" --target llama-bench -j "$(nproc)" >/dev/null
fi
LLAMA_BENCH="$build/bin/llama-bench" target/release/llamacpp-bench "$@"
