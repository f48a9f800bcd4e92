#!/usr/bin/env bash
# The main job: installs what is missing, builds opreg in its own tree (build/demo: no tests, no
# benchmarks) and runs the end-to-end demo (scripts/run_demo.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$OPREG_ROOT/scripts/install_deps.sh"

build=$OPREG_ROOT/build/demo
opreg_build "$build" -DCMAKE_BUILD_TYPE=Release -DOPREG_BUILD_TESTS=OFF \
  -DOPREG_BUILD_BENCHMARKS=OFF -DOPREG_BUILD_FUZZERS=OFF -DOPREG_BUILD_PYTHON=OFF \
  -DOPREG_SANITIZE= >/dev/null
bash "$OPREG_ROOT/scripts/run_demo.sh" "$build"
