#!/usr/bin/env bash
# Installs the opreg build in BUILD_DIR to a temporary prefix, configures and builds an example
# against it (find_package(opreg CONFIG)), and runs it. Proves that the installed headers,
# libraries and config package are enough for a kernel library author.
#   downstream    examples/downstream (OPREG_LIBRARY), its demo executable
#   torch_compat  examples/torch_compat (unchanged TORCH_LIBRARY sources on opreg::torch_compat);
#                 the installed `opreg ops --load` must list all its ops, with no registration
#                 error (it exits 1 on one)
#   torch_stable  examples/torch_stable (unchanged stable-ABI sources on opreg::torch_stable,
#                 CUDA sources too when opreg has CUDA); the installed `opreg ops --load` must
#                 list its 16 ops with no registration error, its CUDA kernels registered
#
# usage: tests/downstream/run.sh BUILD_DIR [downstream|torch_compat|torch_stable]
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [downstream|torch_compat|torch_stable]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
example=${2:-downstream}
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
    # The torch_compat example's CUDA sources compile against opreg::torch_compat too.
    if [[ $example == torch_compat ]]; then
      args+=(-DCOMPAT_KERNELS_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc")
    fi
    if [[ $example == torch_stable ]]; then
      args+=(-DSTABLE_KERNELS_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc")
    fi
  fi
fi

cmake -S "$source_dir/examples/$example" -B "$work/build" "${args[@]}" > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" -j "${OPREG_JOBS:-2}" > "$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; exit 1; }

# What runs must find libopreg_* from the temporary prefix, not from BUILD_DIR: a clean loader
# path (CMake's build RPATH points at the prefix's lib directory).
case $example in
  downstream)
    env -u LD_LIBRARY_PATH "$work/build/downstream_demo"
    ;;
  torch_compat)
    ops=$(env -u LD_LIBRARY_PATH "$prefix/bin/opreg" ops --load "$work/build/libcompat_kernels.so")
    count=$(grep -c '^compat_kernels' <<<"$ops" || true)
    echo "$ops" | grep '^compat_kernels'
    if [[ $count -ne 21 ]]; then
      echo "expected the 21 ops of examples/torch_compat, found $count" >&2
      exit 1
    fi
    # libtorch APIs outside the subset fail to compile with a message that names them.
    mkdir -p "$work/outside"
    cat > "$work/outside/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(outside LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(opreg CONFIG REQUIRED)
foreach(case softmax autograd_key custom_class)
  add_library(${case} OBJECT ${case}.cpp)
  target_link_libraries(${case} PRIVATE opreg::torch_compat)
endforeach()
CMAKE
    printf '%s\n' '#include <torch/all.h>' \
      'at::Tensor f(const at::Tensor& a) { return a.softmax(-1); }' > "$work/outside/softmax.cpp"
    printf '%s\n' '#include <torch/library.h>' \
      'TORCH_LIBRARY_IMPL(outside, Autograd, m) {}' > "$work/outside/autograd_key.cpp"
    printf '%s\n' '#include <torch/library.h>' 'struct Foo {};' \
      'TORCH_LIBRARY(outside, m) { m.class_<Foo>("Foo"); }' > "$work/outside/custom_class.cpp"
    cmake -S "$work/outside" -B "$work/outside/build" "${args[@]}" > "$work/outside.log" 2>&1 ||
      { cat "$work/outside.log" >&2; exit 1; }
    for expected in "softmax:at::Tensor::softmax is outside opreg's torch_compat subset" \
                    "autograd_key:dispatch key Autograd has no opreg counterpart" \
                    "custom_class:torch::Library::class_ (TorchScript custom classes) is outside"; do
      target=${expected%%:*}
      if cmake --build "$work/outside/build" --target "$target" > "$work/$target.log" 2>&1; then
        echo "$target.cpp compiled, but it uses an API outside torch_compat" >&2
        exit 1
      fi
      if ! grep -qF "${expected#*:}" "$work/$target.log"; then
        echo "$target.cpp: the compile error does not say '${expected#*:}':" >&2
        cat "$work/$target.log" >&2
        exit 1
      fi
      echo "outside the subset, as expected: $target.cpp: ${expected#*:}"
    done
    dump=$(env -u LD_LIBRARY_PATH "$prefix/bin/opreg" ops --load \
      "$work/build/libcompat_kernels.so" compat_kernels::silu_and_mul)
    echo "$dump"
    if [[ "$(cache_get OPREG_BUILD_CUDA)" == "ON" ]] && ! grep -q "CUDA: registered" <<<"$dump"; then
      echo "the CUDA kernel of compat_kernels::silu_and_mul was not registered" >&2
      exit 1
    fi
    ;;
  torch_stable)
    ops=$(env -u LD_LIBRARY_PATH "$prefix/bin/opreg" ops --load "$work/build/libstable_kernels.so")
    count=$(grep -c '^stable_kernels' <<<"$ops" || true)
    echo "$ops" | grep '^stable_kernels'
    if [[ $count -ne 16 ]]; then
      echo "expected the 16 ops of examples/torch_stable, found $count" >&2
      exit 1
    fi
    dump=$(env -u LD_LIBRARY_PATH "$prefix/bin/opreg" ops --load \
      "$work/build/libstable_kernels.so" stable_kernels::rms_norm)
    echo "$dump"
    if [[ "$(cache_get OPREG_BUILD_CUDA)" == "ON" ]] &&
       ! grep -q "CUDA: registered" <<<"$dump"; then
      echo "the CUDA kernel of stable_kernels::rms_norm was not registered" >&2
      exit 1
    fi
    ;;
  *)
    echo "unknown example '$example'" >&2
    exit 2
    ;;
esac
