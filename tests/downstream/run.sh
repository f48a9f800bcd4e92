#!/usr/bin/env bash
# Installs the opreg build in BUILD_DIR to a temporary prefix, configures and builds
# examples/downstream against it (find_package(opreg CONFIG)), and runs its demo. Proves that
# the installed headers, libraries and config package are enough for a kernel library author.
#
# usage: tests/downstream/run.sh BUILD_DIR
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/opreg-downstream.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

# Reads a variable from the opreg build's cache (empty when absent).
cache_get() {
  sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" | head -n1
}

cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log" ||
  { cat "$work/install.log" >&2; exit 1; }

# Build the example with opreg's compiler (one C++ ABI) and generator.
args=(-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release)
cxx=$(cache_get CMAKE_CXX_COMPILER)
[[ -n "$cxx" ]] && args+=(-DCMAKE_CXX_COMPILER="$cxx")
generator=$(cache_get CMAKE_GENERATOR)
[[ -n "$generator" ]] && args+=(-G "$generator")
# An opreg built with CUDA makes its config call find_dependency(CUDAToolkit); point that at the
# toolkit opreg was built with, since nvcc need not be on PATH (e.g. /usr/local/cuda/bin).
if [[ "$(cache_get OPREG_BUILD_CUDA)" == "ON" ]]; then
  nvcc=$(cache_get CMAKE_CUDA_COMPILER)
  if [[ -n "$nvcc" ]]; then
    args+=(-DCUDAToolkit_ROOT="$(dirname "$(dirname "$nvcc")")")
  fi
fi

cmake -S "$source_dir/examples/downstream" -B "$work/build" "${args[@]}" > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" -j "${OPREG_JOBS:-2}" > "$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; exit 1; }

# The demo must find libopreg_* from the temporary prefix, not from BUILD_DIR: run it with a
# clean loader path (CMake's build RPATH points at the prefix's lib directory).
env -u LD_LIBRARY_PATH "$work/build/downstream_demo"
