# Shared by the scripts: repo root, job count, and a configure+build function.
# shellcheck shell=bash
OPREG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OPREG_JOBS=${OPREG_JOBS:-$(nproc)}
# shared/ (corpus, references) sits beside the checkout.
OPREG_SHARED=${OPREG_SHARED:-$OPREG_ROOT/../shared}

# opreg_build DIR [cmake args...] [--target T]: configures and builds the tree in DIR (all
# targets, or only T).
opreg_build() {
  local dir=$1
  shift
  local target=()
  if [[ $# -ge 2 && ${*: -2:1} == --target ]]; then
    target=(--target "${*: -1}")
    set -- "${@:1:$#-2}"
  fi
  local cuda_args=()
  # nvcc may be installed off PATH; point CMake at it so the CUDA parts are compiled.
  if [[ -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
    cuda_args=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
  cmake -S "$OPREG_ROOT" -B "$dir" -G Ninja "${cuda_args[@]}" "$@" >"$dir.configure.log" 2>&1 || {
    cat "$dir.configure.log"
    return 1
  }
  cmake --build "$dir" -j "$OPREG_JOBS" "${target[@]}"
}
