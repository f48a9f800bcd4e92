# Finds the libtorch the benchmarks compare with (bench_dispatch: its c10 dispatcher;
# bench_kernels: its CPU ops on decode-size inputs). Sets _opreg_bench_torch (ON/OFF) and, when
# ON, _opreg_torch_inc0/_inc1 (include folders), _opreg_torch_libdir and _opreg_torch_version.
# Included from benchmarks/CMakeLists.txt before the benchmarks that use it.
# The libtorch comparison: AUTO turns it on when OPREG_BENCH_PYTHON can import torch (and the
# build is not sanitized); ON requires it. The wheel's headers and libc10 / libtorch_cpu are used
# directly rather than through find_package(Torch), whose config for a CUDA wheel wants a
# matching CUDA toolkit, cuDNN and more, none of which these CPU-side benchmarks need.
set(OPREG_BENCH_TORCH AUTO CACHE STRING
  "Compare bench_dispatch and bench_kernels with libtorch: AUTO, ON or OFF")
set_property(CACHE OPREG_BENCH_TORCH PROPERTY STRINGS AUTO ON OFF)
find_program(OPREG_BENCH_PYTHON NAMES python3 python
  DOC "Python interpreter whose torch package the benchmarks compare with")

set(_opreg_bench_torch OFF)
if(OPREG_BENCH_TORCH STREQUAL "ON" OR (OPREG_BENCH_TORCH STREQUAL "AUTO" AND NOT OPREG_SANITIZE))
  set(_opreg_torch_probe [=[
import os, torch
root = os.path.dirname(torch.__file__)
print(os.path.join(root, "include") + ";" + os.path.join(root, "include", "torch", "csrc", "api", "include"))
print(os.path.join(root, "lib"))
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
print(torch.__version__)
]=])
  set(_opreg_torch_out "")
  set(_opreg_torch_rc 1)
  if(OPREG_BENCH_PYTHON)
    execute_process(COMMAND ${OPREG_BENCH_PYTHON} -c "${_opreg_torch_probe}"
      RESULT_VARIABLE _opreg_torch_rc OUTPUT_VARIABLE _opreg_torch_out ERROR_QUIET TIMEOUT 120)
  endif()
  if(_opreg_torch_rc EQUAL 0)
    string(REPLACE "\n" ";" _opreg_torch_lines "${_opreg_torch_out}")
    list(GET _opreg_torch_lines 0 _opreg_torch_inc0)
    list(GET _opreg_torch_lines 1 _opreg_torch_inc1)
    list(GET _opreg_torch_lines 2 _opreg_torch_libdir)
    list(GET _opreg_torch_lines 3 _opreg_torch_abi)
    list(GET _opreg_torch_lines 4 _opreg_torch_version)
    if(NOT _opreg_torch_abi EQUAL 1)
      # The torch TU shares std::string-taking Google Benchmark APIs with the rest of the binary.
      set(_opreg_torch_why "torch ${_opreg_torch_version} uses the pre-C++11 std::string ABI")
    elseif(NOT EXISTS "${_opreg_torch_libdir}/libtorch_cpu.so")
      set(_opreg_torch_why "no libtorch_cpu.so in ${_opreg_torch_libdir}")
    else()
      set(_opreg_bench_torch ON)
    endif()
  else()
    set(_opreg_torch_why "'${OPREG_BENCH_PYTHON}' cannot import torch")
  endif()
  if(NOT _opreg_bench_torch AND OPREG_BENCH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "OPREG_BENCH_TORCH=ON, but ${_opreg_torch_why} "
      "(set OPREG_BENCH_PYTHON to a Python with torch)")
  endif()
endif()

if(_opreg_bench_torch)
  message(STATUS "benchmarks: comparing with torch ${_opreg_torch_version} "
    "(${_opreg_torch_libdir})")
elseif(_opreg_torch_why)
  message(STATUS "benchmarks: no libtorch comparison (${_opreg_torch_why})")
endif()
