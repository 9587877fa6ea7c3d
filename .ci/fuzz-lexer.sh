#!/bin/sh
# Builds the lexer fuzzer with clang (libFuzzer, ASan, UBSan) in its own build
# directory and runs it for a bounded time from a copy of the checked-in seed
# corpus. Any crash, sanitizer report or kernel disagreement fails the script.
# Usage: .ci/fuzz-lexer.sh [build-dir]   (FUZZ_SECONDS, default 60)
set -eu

cd "$(dirname "$0")/.."
build_dir=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "fuzz-lexer: clang++-14 not found (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
fi

CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLEXPACK_LEXER_ONLY=ON -DLEXPACK_BUILD_BENCH=OFF -DLEXPACK_BUILD_FUZZ=ON
cmake --build "$build_dir" -j "${JOBS:-2}" --target lexer_fuzz

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp tests/fuzz/corpus/* "$work/corpus/"

# libFuzzer exits non-zero on the first crash and writes the input next to the
# build as crash-*; -timeout flags inputs that make the scanner hang.
"$build_dir/bin/lexer_fuzz" "$work/corpus" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build_dir/" -print_final_stats=1
echo "fuzz-lexer: no crash or kernel disagreement in ${seconds}s"
