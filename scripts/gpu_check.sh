#!/usr/bin/env bash
# GPU checks of opreg: the C++ [cuda] tests, the Python tests on CUDA tensors (pytest -m cuda)
# and the call-overhead table with CUDA tensors. In two halves, for a GPU machine that cannot
# build opreg itself (no Debian -dev packages, no network):
#
#   scripts/gpu_check.sh pack [KIT]   on the build machine: builds the release tree (CUDA on, the
#                                     tests' own options) and a wheel of the Python package for
#                                     the GPU machine's Python (GPU_PYTHON, default python3.12),
#                                     then packs the [cuda] test binaries, the opreg libraries,
#                                     the Debian libraries they load (abseil, spdlog, fmt,
#                                     OpenBLAS) and the wheel into KIT/kit.tar.xz (KIT: .gpu)
#   scripts/gpu_check.sh run [KIT]    on the GPU machine, from the checkout: unpacks the kit,
#                                     runs the checks, writes logs and JSON to $OUT (default
#                                     KIT/out) and prints a summary last; exit status 1 when a
#                                     check failed
#
# The GPU machine needs python3 with torch (CUDA build) and pytest, the CUDA runtime and
# cuBLAS (the toolkit's or the nvidia-* wheels'), and NCCL >= 2.28 for the NCCL backend (the
# nvidia-nccl wheel's is found). A wheel of apache-tvm-ffi for that Python, put in KIT/wheels
# before packing, adds its row to the call table.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mode=${1:-}
kit=${2:-$OPREG_ROOT/.gpu}
cuda_tests=(test_ops_cuda test_cuda_stream test_symm_mem_cuda test_symm_mem_cuda_simulated
  test_symm_mem_nccl)

pack() {
  local release=$OPREG_ROOT/build/release want=${GPU_PYTHON:-python3.12} py
  # pyenv's shims answer `command -v` for versions that are installed but not selected.
  py=$(ls "$HOME"/.pyenv/versions/3.12*/bin/python3 2>/dev/null | tail -n 1 || true)
  [[ -n ${GPU_PYTHON:-} || -z $py ]] && py=$(command -v "$want" || true)
  if ! "$py" --version >/dev/null 2>&1; then
    echo "gpu_check: no $want here (set GPU_PYTHON)" >&2
    exit 2
  fi
  echo "== release build (CUDA on)"
  opreg_build "$release" -DCMAKE_BUILD_TYPE=Release -DOPREG_BUILD_TESTS=ON \
    -DOPREG_BUILD_BENCHMARKS=ON -DOPREG_BUILD_FUZZERS=OFF -DOPREG_BUILD_PYTHON=OFF \
    -DOPREG_SANITIZE= -DOPREG_BUILD_CUDA=ON
  echo "== wheel for $("$py" --version) (CUDA on)"
  local tools=$OPREG_ROOT/build/gpu-wheel/tools
  [[ -x $tools/bin/python ]] || "$py" -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet "scikit-build-core>=0.10" "pybind11>=2.12" \
    "apache-tvm-ffi>=0.1.15"
  rm -rf "$OPREG_ROOT/build/gpu-wheel/dist"
  local cmake_args="-DOPREG_BUILD_CUDA=ON -DCMAKE_CUDA_COMPILER=$(command -v nvcc ||
    echo /usr/local/cuda/bin/nvcc)"
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$OPREG_ROOT}
    for lang in C CXX CUDA; do cmake_args+=" -DCMAKE_${lang}_COMPILER_LAUNCHER=ccache"; done
  fi
  CMAKE_ARGS=$cmake_args "$tools/bin/python" -m pip wheel --no-build-isolation \
    --no-deps -w "$OPREG_ROOT/build/gpu-wheel/dist" -Cbuild-dir="$OPREG_ROOT/build/gpu-wheel/tree" \
    "$OPREG_ROOT" >"$OPREG_ROOT/build/gpu-wheel/log" 2>&1 ||
    { tail -n 40 "$OPREG_ROOT/build/gpu-wheel/log"; exit 1; }

  echo "== packing $kit/kit.tar.xz"
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib" "$stage/wheels" "$kit"
  for t in "${cuda_tests[@]}"; do cp "$release/tests/cpp/$t" "$stage/bin/"; done
  cp "$OPREG_ROOT"/build/gpu-wheel/dist/opreg-*.whl "$stage/wheels/"
  cp "$kit"/wheels/*.whl "$stage/wheels/" 2>/dev/null || true
  # Every library the binaries and the wheel's modules load, but the C/C++ runtime and CUDA's
  # own (the GPU machine's driver and toolkit provide those).
  local unpacked=$stage/unpacked
  "$tools/bin/python" -m zipfile -e "$stage"/wheels/opreg-*.whl "$unpacked"
  local system='/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so'
  local cuda='/lib(cuda|cudart|cublas|cublasLt|nccl|nvrtc|nvJitLink)\.so'
  local deps="" f
  while IFS= read -r f; do
    deps+=$(ldd "$f" 2>&1 || true)$'\n'
  done < <(find "$stage/bin" "$unpacked" -type f \( -name '*.so*' -o -perm -u+x \))
  if grep 'not found' <<<"$deps" | grep -vE "$cuda" | sort -u | grep .; then
    echo "gpu_check: the libraries above are missing here and are left out of the kit" >&2
  fi
  awk '$3 ~ /^\// {print $3}' <<<"$deps" | sort -u | grep -vE "$system|$cuda" |
    grep -v "$unpacked" | awk -F/ '!seen[$NF]++' | xargs -r cp -L -t "$stage/lib/"
  # The release tree's opreg libraries serve the test binaries only: the wheel's modules load
  # the wheel's own.
  mkdir -p "$stage/cpplib"
  mv "$stage"/lib/libopreg* "$stage/cpplib/"
  rm -rf "$unpacked"
  tar -C "$stage" -cJf "$kit/kit.tar.xz" bin cpplib lib wheels
  rm -rf "$stage"
  echo "kit: $(du -h "$kit/kit.tar.xz" | cut -f1) ($kit/kit.tar.xz)"
}

run() {
  local out=${OUT:-$kit/out} root=/tmp/opreg-gpu failed=()
  rm -rf "$root"  # a kit unpacked by an earlier run would mix with this one
  mkdir -p "$out" "$root"
  tar -C "$root" -xJf "$kit/kit.tar.xz"
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
    tee "$out/gpu.txt" || true
  python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__,
"cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' | tee -a "$out/gpu.txt" || true
  # Libraries: the kit's, the toolkit's, and those of the nvidia-* wheels (cuBLAS, NCCL).
  local ld=$root/lib
  for d in /usr/local/cuda/lib64 $(python3 -c 'import glob, site; print(" ".join(
      g for p in site.getsitepackages() for pat in ("/nvidia/*/lib", "/nvidia/*/*/lib")
      for g in sorted(glob.glob(p + pat))))'); do
    if [[ -d $d ]]; then ld+=:$d; fi
  done
  export LD_LIBRARY_PATH=$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  python3 -m pip install --quiet --no-index --no-deps --no-compile --target "$root/site" \
    "$root"/wheels/*.whl
  export PYTHONPATH=$root/site${PYTHONPATH:+:$PYTHONPATH}

  echo "== C++ [cuda] tests (test_cuda_stream: all its cases)"
  local log=$out/cpp_tests.log filter
  : >"$log"
  for t in "${cuda_tests[@]}"; do
    filter=("[cuda]")
    [[ $t == test_cuda_stream ]] && filter=()
    echo "==== $t ${filter[*]}" >>"$log"
    if LD_LIBRARY_PATH=$root/cpplib:$LD_LIBRARY_PATH timeout 180 "$root/bin/$t" "${filter[@]}" \
        --reporter compact >"$log.one" 2>&1; then
      echo "$t: $(grep -v '^$' "$log.one" | tail -n 1) ($(grep -c SKIPPED "$log.one") skipped)"
    else
      failed+=("$t")
      echo "$t: FAILED"
      tail -n 30 "$log.one"
    fi
    cat "$log.one" >>"$log"
  done
  rm -f "$log.one"

  echo "== pytest -m cuda (tests/python)"
  if (cd "$OPREG_ROOT/tests" && timeout 420 python3 -m pytest -q -rs -m cuda -p no:cacheprovider \
      "$OPREG_ROOT/tests/python" >"$out/pytest_cuda.log" 2>&1); then
    tail -n 1 "$out/pytest_cuda.log"
    # On a GPU machine every CUDA case runs: a skip means opreg or torch saw no device.
    if tail -n 1 "$out/pytest_cuda.log" | grep -q skipped; then
      failed+=("pytest (CUDA cases skipped)")
      grep '^SKIPPED' "$out/pytest_cuda.log" | head -n 5 || true
    fi
  else
    failed+=(pytest)
    grep -E '^(FAILED|ERROR)|Error|assert' "$out/pytest_cuda.log" | head -n 40 || true
    tail -n 3 "$out/pytest_cuda.log"
  fi

  echo "== call overhead (bench_python_call.py), CUDA then CPU tensors, same machine"
  for dev in cuda cpu; do
    timeout 300 python3 "$OPREG_ROOT/benchmarks/bench_python_call.py" --device "$dev" \
      --iters 50000 --repeats 7 --json "$out/call_$dev.json" >"$out/call_$dev.log" 2>&1 ||
      failed+=("call_$dev")
  done
  cat "$out/call_cuda.log" "$out/call_cpu.log" | grep -v '^building' || true
  if ((${#failed[@]})); then
    echo "gpu_check: FAILED: ${failed[*]} (logs in $out)"
    return 1
  fi
  echo "gpu_check: all checks passed (logs in $out)"
}

case $mode in
  pack) pack ;;
  run) run ;;
  *) sed -n '2,20p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
