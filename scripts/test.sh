#!/usr/bin/env bash
# Runs every test on a fresh machine: installs what is missing, then
#   1. Release build (build/release): all Catch2 tests (ctest), a benchmark smoke run, the
#      end-to-end demo on that build (scripts/run_demo.sh) and the demo's output check;
#   2. the Python package as a user gets it: a wheel, repaired with auditwheel, installed into a
#      fresh venv, and pytest + stubtest against that install (scripts/python_tests.sh);
#   3. libFuzzer target (clang-14, ASan+UBSan) for a bounded time (OPREG_FUZZ_SECONDS, 60);
#   4. ASan+UBSan build: all Catch2 tests again;
#   5. TSan build: the tests that exercise threads (registration while calling, capture on one
#      thread while another calls).
# Every build tree is configured with every option it relies on, so this script and
# scripts/demo.sh run in either order. The last line counts the tests that ran.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$OPREG_ROOT/scripts/install_deps.sh"
export CTEST_OUTPUT_ON_FAILURE=1
OPREG_TALLY_FILE=$(mktemp)
export OPREG_TALLY_FILE
trap 'rm -f "$OPREG_TALLY_FILE"' EXIT
release=$OPREG_ROOT/build/release

# The build trees and the test venv (torch with its CUDA wheels) take about 8 GiB in the checkout,
# and pip needs about 4 GiB more while it installs torch.
echo "== $(opreg_free_gib "$OPREG_ROOT") GiB free on the checkout's disk (a run needs about 12 GiB)"

echo "== release build"
opreg_build "$release" -DCMAKE_BUILD_TYPE=Release -DOPREG_BUILD_TESTS=ON \
  -DOPREG_BUILD_BENCHMARKS=ON -DOPREG_BUILD_FUZZERS=OFF -DOPREG_BUILD_PYTHON=OFF -DOPREG_SANITIZE=
opreg_ctest release "$release" -j "$OPREG_JOBS"

echo "== benchmark smoke run (figures are not asserted)"
"$release/benchmarks/bench_schema" --benchmark_min_time=0.05
"$release/benchmarks/bench_dispatch" --benchmark_min_time=0.01
"$release/benchmarks/bench_planner" --runs 1 --budget-ms 100
"$release/benchmarks/bench_kernels" --sizes-mib 1 --min-time-s 0.01 --no-linear
# Two MPI ranks (OpenMPI's shared-memory transport; root is allowed in CI containers).
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 \
  --mca btl self,vader "$release/benchmarks/bench_symm_mem" --max-bytes 65536 --iters 20

echo "== end-to-end demo (on the release build), its output through a pipe"
demo_log=$(mktemp)
bash "$OPREG_ROOT/scripts/run_demo.sh" "$release" | tee "$demo_log"
bash "$OPREG_ROOT/tests/demo/check_demo_output.sh" --with-schema "$demo_log"
rm -f "$demo_log"
opreg_tally demo 1 0

echo "== python package (wheel, auditwheel repair, fresh venv, pytest, stubtest)"
bash "$OPREG_ROOT/scripts/python_tests.sh"

echo "== fuzzing"
bash "$OPREG_ROOT/scripts/fuzz.sh" "${OPREG_FUZZ_SECONDS:-60}"
opreg_tally fuzz 1 0

echo "== ASan+UBSan build"
opreg_build "$OPREG_ROOT/build/asan" -DCMAKE_BUILD_TYPE=Debug -DOPREG_BUILD_CUDA=OFF \
  -DOPREG_BUILD_TESTS=ON -DOPREG_BUILD_BENCHMARKS=OFF -DOPREG_BUILD_FUZZERS=OFF \
  -DOPREG_BUILD_PYTHON=OFF -DOPREG_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  opreg_ctest asan "$OPREG_ROOT/build/asan" -j "$OPREG_JOBS"

echo "== TSan build (threaded tests)"
opreg_build "$OPREG_ROOT/build/tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPREG_BUILD_CUDA=OFF \
  -DOPREG_BUILD_TESTS=ON -DOPREG_BUILD_BENCHMARKS=OFF -DOPREG_BUILD_FUZZERS=OFF \
  -DOPREG_BUILD_PYTHON=OFF -DOPREG_SANITIZE=thread --target test_dispatch_threads
cmake --build "$OPREG_ROOT/build/tsan" -j "$OPREG_JOBS" --target test_capture_scope test_op_events
TSAN_OPTIONS=halt_on_error=1 opreg_ctest tsan "$OPREG_ROOT/build/tsan" \
  -R '^(test_dispatch_threads|test_capture_scope|test_op_events)$'

echo "== summary"
awk '{printf "  %-8s %5d passed, %d failed\n", $1, $2, $3; p += $2; f += $3}
     END {printf "test.sh: %d passed, %d failed\n", p, f}' "$OPREG_TALLY_FILE"
