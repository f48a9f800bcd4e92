#!/usr/bin/env bash
# Builds vLLM's x86 CPU extension (_C_AVX512 or _C_AVX2 of cmake/cpu_extension.cmake, by what
# this CPU has; VLLM_CPU_ISA=avx512|avx2 chooses) from an unpacked vLLM source release, unchanged,
# against opreg::torch_compat or against torch, so that scripts/real_sources/vllm_cpu_checks.py
# can run its ops on both runtimes.
#
#   scripts/real_sources/vllm_cpu_build.sh VLLM_SRC opreg OUT_DIR   # OPREG_PREFIX: an install
#   scripts/real_sources/vllm_cpu_build.sh VLLM_SRC torch OUT_DIR   # the python3 torch
#
# Left out of both builds, the same way: csrc/cpu/dnnl_kernels.cpp (needs oneDNN, which is not
# installed here), and dynamic_4bit_int_moe_cpu.cpp (outside opreg's subset:
# at::_ops::_dyn_quant_matmul_4bit, at::mm). Their functions come from vllm_cpu_not_built.cc,
# which raises when called, so the rest of torch_bindings.cpp registers as written. Needs g++ >= 12 with OpenMP, sleef.h
# (Debian: libsleef-dev) and python3 (for vLLM's header generator and the include paths).
set -euo pipefail
src=$(cd "$1" && pwd); backend=$2; out=$(mkdir -p "$3" && cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
case $backend in
  opreg)
    prefix=${OPREG_PREFIX:?set OPREG_PREFIX to an opreg install prefix}
    hdr=(-I"$prefix/include/opreg_torch_compat" -I"$prefix/include")
    libs=(-L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lopreg_torch_compat -lopreg_dispatch
          -lopreg_core)
    ;;
  torch)
    torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
    hdr=(-I"$torch_dir/include" -I"$torch_dir/include/torch/csrc/api/include")
    libs=(-L"$torch_dir/lib" -Wl,-rpath,"$torch_dir/lib" -ltorch -ltorch_cpu -lc10)
    ;;
  *) echo "backend must be opreg or torch, not '$backend'" >&2; exit 2 ;;
esac
py_inc=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
# vLLM's CMake generates this header before compiling cpu_attn.cpp.
(cd "$src/csrc/cpu" && [[ -f cpu_attn_dispatch_generated.h ]] ||
  "$python" generate_cpu_attn_dispatch.py > /dev/null)
isa=${VLLM_CPU_ISA:-}
if [[ -z $isa ]]; then
  isa=avx2
  cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
  if [[ $cpu_flags == *avx512f* && $cpu_flags == *avx512bw* && $cpu_flags == *avx512vl* &&
        $cpu_flags == *avx512dq* ]]; then
    isa=avx512
  fi
fi
# vLLM's source lists and flags for the two targets, less the two files named above.
files=(cpu_fused_moe utils spec_decode_utils cpu_attn cpu_isa mamba_cpu sampling_kernels
       fp8_quant torch_bindings activation layernorm mla_decode pos_encoding sgl-kernels/fla)
case $isa in
  avx512) isa_flags=(-mavx512f -mavx512vl -mavx512bw -mavx512dq); files+=(shm cpu_wna16) ;;
  avx2) isa_flags=(-mavx2) ;;
  *) echo "VLLM_CPU_ISA must be avx512 or avx2, not '$isa'" >&2; exit 2 ;;
esac
flags=(-std=c++20 -O2 -fPIC -fopenmp -mf16c "${isa_flags[@]}" -DVLLM_NUMA_DISABLED
       -DTORCH_EXTENSION_NAME=_C -I"$src/csrc" "${hdr[@]}" -I"$py_inc")
jobs=${OPREG_JOBS:-2}
# One object per source (sgl-kernels/fla.o as sgl-kernels_fla.o), $jobs at a time.
for f in "${files[@]}"; do
  printf '%s\0%s\0' "$out/${f//\//_}.o" "$src/csrc/cpu/$f.cpp"  # for `-o OUT SRC`
done | xargs -0 -n 2 -P "$jobs" g++ "${flags[@]}" -c -o
g++ "${flags[@]}" -c "$here/vllm_cpu_not_built.cc" -o "$out/not_built.o"
# As every Python extension module: Python's own symbols resolve in the interpreter at load.
g++ -shared -fopenmp -o "$out/_C.so" "$out"/*.o "${libs[@]}" -lsleef
echo "$isa" > "$out/isa.txt"
echo "$out/_C.so"
