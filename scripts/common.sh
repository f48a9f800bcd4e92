# Shared by the scripts: repo root, job count, the corpus, and a configure+build function.
# shellcheck shell=bash
OPREG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OPREG_JOBS=${OPREG_JOBS:-$(nproc)}
# The ATen schema corpus (test data, tests/data/corpus/README.md).
OPREG_CORPUS=$OPREG_ROOT/tests/data/corpus

# opreg_build DIR [cmake args...] [--target T]: configures and builds the tree in DIR (all
# targets, or only T). Every caller passes each option it relies on, so a tree configured by one
# script and reused by another still builds what the second one needs.
opreg_build() {
  local dir=$1
  shift
  local target=()
  if [[ $# -ge 2 && ${*: -2:1} == --target ]]; then
    target=(--target "${*: -1}")
    set -- "${@:1:$#-2}"
  fi
  local compiler_args=()
  # nvcc may be installed off PATH; point CMake at it so the CUDA parts are compiled.
  if [[ -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
    compiler_args=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
  # ccache, when installed, makes rebuilds in new trees and new clones cheap; paths below the
  # checkout are hashed relative to it, so clones in other folders share the cache.
  if [[ ${OPREG_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$OPREG_ROOT}
    compiler_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
      -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  else
    compiler_args+=(-UCMAKE_CXX_COMPILER_LAUNCHER -UCMAKE_C_COMPILER_LAUNCHER
      -UCMAKE_CUDA_COMPILER_LAUNCHER)
  fi
  mkdir -p "$(dirname "$dir")"
  cmake -S "$OPREG_ROOT" -B "$dir" -G Ninja "${compiler_args[@]}" "$@" >"$dir.configure.log" 2>&1 || {
    cat "$dir.configure.log"
    return 1
  }
  cmake --build "$dir" -j "$OPREG_JOBS" "${target[@]}"
}

# opreg_free_gib DIR: free space, in whole GiB, on the file system that holds DIR.
opreg_free_gib() {
  df -P -k "$1" | awk 'NR == 2 {print int($4 / 1048576)}'
}

# opreg_tally NAME PASSED FAILED: records one suite's counts for opreg_tally_report.
OPREG_TALLY_FILE=${OPREG_TALLY_FILE:-}
opreg_tally() {
  [[ -n $OPREG_TALLY_FILE ]] && echo "$1 $2 $3" >>"$OPREG_TALLY_FILE"
  return 0
}

# opreg_ctest NAME BUILD_DIR [ctest args...]: runs ctest (no tests found is a failure) and
# records how many tests passed and failed.
opreg_ctest() {
  local name=$1 dir=$2
  shift 2
  local log status=0
  log=$(mktemp)
  ctest --test-dir "$dir" --no-tests=error "$@" 2>&1 | tee "$log" || status=$?
  local line total failed
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  rm -f "$log"
  if [[ -z $line ]]; then
    echo "$name: ctest printed no summary" >&2
    return 1
  fi
  failed=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  opreg_tally "$name" $((total - failed)) "$failed"
  return "$status"
}
