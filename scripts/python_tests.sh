#!/usr/bin/env bash
# Python package tests: installs what is missing (numpy, pytest, mypy, the build requirements),
# builds and installs the opreg package with `pip install .` (an incremental CMake build tree
# under build/python/ is reused between runs), then runs pytest on tests/python and mypy's
# stubtest on opreg._C.
#
#   PYTHON=python3 bash scripts/python_tests.sh [pytest args...]
# CMAKE_ARGS passes CMake options to the package build (e.g. -DOPREG_BUILD_CUDA=OFF).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
cd "$ROOT"

echo "== python: $($PY --version) ($PY)"
need=()
for mod in numpy pytest mypy pybind11 scikit_build_core; do
  $PY -c "import $mod" 2>/dev/null || need+=("${mod//_/-}")
done
if ((${#need[@]})); then
  echo "== pip install ${need[*]}"
  $PY -m pip install --quiet "${need[@]}"
fi

echo "== pip install . (scikit-build-core; build tree build/python/)"
# No build isolation: the requirements above are the build environment, and the persistent
# build tree stays valid between runs.
$PY -m pip install --quiet --no-build-isolation --no-deps .

# Run from outside the source tree so `import opreg` is the installed package.
cd "$ROOT/tests"
echo "== pytest tests/python"
$PY -m pytest -q "$ROOT/tests/python" "$@"
echo "== mypy stubtest opreg._C (and its submodule stubs, opreg/_C/*.pyi)"
$PY -m mypy.stubtest opreg._C
