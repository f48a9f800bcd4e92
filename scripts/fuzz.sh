#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan + UBSan) and runs each for a bounded time,
# seeded from the ATen schema corpus and the past findings in tests/fuzz/regressions.
# Usage: scripts/fuzz.sh [SECONDS]  (default 60)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
seconds=${1:-60}
build=$OPREG_ROOT/build/fuzz
mkdir -p "$OPREG_ROOT/build"
CC=clang-14 CXX=clang++-14 opreg_build "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPREG_BUILD_PYTHON=OFF \
  -DOPREG_BUILD_CUDA=OFF -DOPREG_BUILD_TESTS=OFF -DOPREG_BUILD_BENCHMARKS=OFF \
  -DOPREG_BUILD_FUZZERS=ON -DOPREG_SANITIZE=address,undefined \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link" >/dev/null

seeds=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$seeds" "$work"' EXIT
i=0
while IFS= read -r line; do
  printf '%s' "aten::$line" >"$seeds/$i"
  i=$((i + 1))
done <"$OPREG_CORPUS/aten_schemas.txt"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/tests/fuzz/schema_parser_fuzzer" "$work" "$seeds" "$OPREG_ROOT/tests/fuzz/regressions" \
  -dict="$OPREG_ROOT/tests/fuzz/schema.dict" -max_total_time="$seconds" -max_len=4096 \
  -print_final_stats=1 -artifact_prefix="$OPREG_ROOT/build/fuzz/crash-" 2>&1 | tail -n 25
echo "fuzz: schema_parser_fuzzer ran ${seconds}s with no crash, leak or undefined behaviour"
