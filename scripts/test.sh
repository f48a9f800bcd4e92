#!/usr/bin/env bash
# Runs every test on a fresh machine: installs what is missing, then
#   1. Release build: all Catch2 tests (ctest), the CLI corpus check, a benchmark smoke run;
#   2. the Python package: pip install ., pytest (NumPy, and torch where installed), stubtest;
#   3. libFuzzer target (clang-14, ASan+UBSan) for a bounded time (OPREG_FUZZ_SECONDS, 60);
#   4. ASan+UBSan build: all Catch2 tests again;
#   5. TSan build: the tests that exercise threads (registration while calling).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$OPREG_ROOT/scripts/install_deps.sh"
mkdir -p "$OPREG_ROOT/build"
export CTEST_OUTPUT_ON_FAILURE=1

echo "== release build"
opreg_build "$OPREG_ROOT/build/release" -DCMAKE_BUILD_TYPE=Release
ctest --test-dir "$OPREG_ROOT/build/release" -j "$OPREG_JOBS"

echo "== benchmark smoke run (figures are not asserted)"
"$OPREG_ROOT/build/release/benchmarks/bench_schema" --benchmark_min_time=0.05
"$OPREG_ROOT/build/release/benchmarks/bench_dispatch" --benchmark_min_time=0.01
"$OPREG_ROOT/build/release/benchmarks/bench_planner" --runs 1
"$OPREG_ROOT/build/release/benchmarks/bench_kernels" --sizes-mib 1 --min-time-s 0.01 --no-linear
# Two MPI ranks (OpenMPI's shared-memory transport; root is allowed in CI containers).
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 \
  --mca btl self,vader "$OPREG_ROOT/build/release/benchmarks/bench_symm_mem" \
  --max-bytes 65536 --iters 20

echo "== end-to-end corpus check"
bash "$OPREG_ROOT/scripts/demo.sh"

echo "== python package (pip install ., pytest, stubtest)"
# The CUDA parts were compiled by the release build above; the wheel here skips them for time.
CMAKE_ARGS="${CMAKE_ARGS:--DOPREG_BUILD_CUDA=OFF}" bash "$OPREG_ROOT/scripts/python_tests.sh"

echo "== fuzzing"
bash "$OPREG_ROOT/scripts/fuzz.sh" "${OPREG_FUZZ_SECONDS:-60}"

echo "== ASan+UBSan build"
opreg_build "$OPREG_ROOT/build/asan" -DCMAKE_BUILD_TYPE=Debug -DOPREG_BUILD_CUDA=OFF \
  -DOPREG_BUILD_BENCHMARKS=OFF -DOPREG_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$OPREG_ROOT/build/asan" -j "$OPREG_JOBS"

echo "== TSan build (threaded tests)"
opreg_build "$OPREG_ROOT/build/tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPREG_BUILD_CUDA=OFF \
  -DOPREG_BUILD_BENCHMARKS=OFF -DOPREG_SANITIZE=thread --target test_dispatch_threads
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir "$OPREG_ROOT/build/tsan" -R '^test_dispatch_threads$'
