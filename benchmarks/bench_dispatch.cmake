# bench_dispatch: dispatch overhead (direct / unboxed / boxed / lookup), optionally against
# libtorch's c10 dispatcher. Included from benchmarks/CMakeLists.txt.
add_executable(bench_dispatch bench_dispatch.cc)
target_link_libraries(bench_dispatch PRIVATE opreg::dispatch benchmark::benchmark)
opreg_target_settings(bench_dispatch)

# The libtorch comparison: AUTO turns it on when OPREG_BENCH_PYTHON can import torch (and the
# build is not sanitized); ON requires it. The wheel's headers and libc10 / libtorch_cpu are used
# directly rather than through find_package(Torch), whose config for a CUDA wheel wants a
# matching CUDA toolkit, cuDNN and more, none of which a CPU-side dispatch benchmark needs.
set(OPREG_BENCH_TORCH AUTO CACHE STRING "Compare bench_dispatch with libtorch: AUTO, ON or OFF")
set_property(CACHE OPREG_BENCH_TORCH PROPERTY STRINGS AUTO ON OFF)
find_program(OPREG_BENCH_PYTHON NAMES python3 python
  DOC "Python interpreter whose torch package bench_dispatch compares with")

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
  message(STATUS "bench_dispatch: comparing with torch ${_opreg_torch_version} "
    "(${_opreg_torch_libdir})")
  # An object library, so the TU's static BENCHMARK / TORCH_LIBRARY registrations are linked
  # in; C++20, which libtorch's headers require (opreg itself stays C++17).
  add_library(bench_dispatch_torch OBJECT torch_ext/bench_dispatch_torch.cc)
  set_target_properties(bench_dispatch_torch PROPERTIES CXX_STANDARD 20)
  target_include_directories(bench_dispatch_torch SYSTEM PRIVATE
    ${_opreg_torch_inc0} ${_opreg_torch_inc1})
  target_link_libraries(bench_dispatch_torch PRIVATE benchmark::benchmark)
  target_sources(bench_dispatch PRIVATE $<TARGET_OBJECTS:bench_dispatch_torch>)
  target_link_libraries(bench_dispatch PRIVATE
    ${_opreg_torch_libdir}/libtorch_cpu.so ${_opreg_torch_libdir}/libc10.so)
  set_property(TARGET bench_dispatch APPEND PROPERTY BUILD_RPATH ${_opreg_torch_libdir})
else()
  if(_opreg_torch_why)
    message(STATUS "bench_dispatch: no libtorch comparison (${_opreg_torch_why})")
  endif()
endif()
