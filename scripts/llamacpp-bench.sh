#!/usr/bin/env bash
# The embedded model's benchmarks (examples/llamacpp-bench) beside
# llama.cpp's own llama-bench, built from the very llama.cpp the provider
# vendors (the llama-cpp-sys-2 crate in cargo's registry), with the same
# CPU settings as the provider's build (GGML_NATIVE=OFF: AVX2/FMA/F16C,
# no OpenMP, Release), so both run the same kernels on the same model file
# and threads. The crate ships llama.cpp's library sources but not its
# tools, so llama-bench's own two files (tools/llama-bench) come from the
# sdist of llama-cpp-python 0.3.36 (pinned, hash-checked, via pip), which
# vendors a llama.cpp a few weeks older (ggml 0.25.3 against the crate's
# 0.26.0); they build unchanged against the crate's headers. Arguments go
# to the benchmark (--model NAME, --threads N, --reps N,
# --only speed|resume|tools). Needs the model installed
# (scripts/ensure-llamacpp-model.sh NAME).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-system-packages.sh
cargo build --release --locked -p example-llamacpp-bench

version="$(cargo metadata --format-version 1 --locked |
    python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "llama-cpp-sys-2"))')"
# The first registry index holding the crate's sources. A loop, not a
# pipeline: under pipefail a `find | while | head` pipeline failed, and
# ended the script without a word, whenever a later index lacked them.
src=""
for index in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
    if [ -d "${index}llama-cpp-sys-2-$version/llama.cpp" ]; then
        src="${index}llama-cpp-sys-2-$version/llama.cpp"
        break
    fi
done
if [ -z "$src" ]; then
    echo "llama-cpp-sys-2 $version is not in cargo's registry; build the workspace first" >&2
    exit 1
fi
build="target/llama-bench-$version"
if [ ! -x "$build/bin/llama-bench" ]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    echo "llama-cpp-python==0.3.36 --hash=sha256:832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e" >"$work/req.txt"
    python3 -m pip download --quiet --no-deps --no-binary=:all: --require-hashes \
        --disable-pip-version-check --no-input -r "$work/req.txt" -d "$work" </dev/null
    tar -xzf "$work"/llama_cpp_python-0.3.36.tar.gz -C "$work" \
        llama_cpp_python-0.3.36/vendor/llama.cpp/tools/llama-bench
    # The crate's llama.cpp with llama-bench as its only tool.
    tree="$build-src"
    rm -rf "$tree" "$build"
    cp -r "$src" "$tree"
    cp -r "$work"/llama_cpp_python-0.3.36/vendor/llama.cpp/tools/llama-bench "$tree/tools/"
    printf 'find_package(Threads REQUIRED)\nllama_add_compile_flags()\nadd_subdirectory(llama-bench)\n' \
        >"$tree/tools/CMakeLists.txt"
    cmake -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=ON \
        -DBUILD_SHARED_LIBS=OFF >/dev/null
    cmake --build "$build" --target llama-bench -j "$(nproc)" >/dev/null
fi
LLAMA_BENCH="$build/bin/llama-bench" target/release/llamacpp-bench "$@"
