# bench_kernels: bandwidth of the memory-bound built-in ops against a parallel memcpy, and
# linear's GFLOP/s against cblas_sgemm (CPU); decode-size calls (1, 8, 64 rows) next to torch's
# CPU ops when torch is found; with CUDA built and a GPU present, the same ops on cuda:0 against
# cudaMemcpyAsync and cublasGemmEx. Included from benchmarks/CMakeLists.txt.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPREG_BENCH_OPENBLAS REQUIRED IMPORTED_TARGET openblas)
add_executable(bench_kernels bench_kernels.cc bench_timing.cc)
target_link_libraries(bench_kernels PRIVATE opreg::ops OpenMP::OpenMP_CXX
  PkgConfig::OPREG_BENCH_OPENBLAS)
if(OPREG_BUILD_CUDA)
  target_link_libraries(bench_kernels PRIVATE CUDA::cudart CUDA::cublas)
  target_compile_definitions(bench_kernels PRIVATE OPREG_BENCH_HAVE_CUDA=1)
endif()
# Ops are called only through the dispatcher: no symbol of libopreg_ops is referenced, but it
# must be loaded (its static OPREG_LIBRARY blocks register the ops), so keep it on the link.
target_link_options(bench_kernels PRIVATE "LINKER:--no-as-needed")
opreg_target_settings(bench_kernels)
if(_opreg_bench_torch)
  # torch's CPU ops on the decode-size shapes (bench_torch.cmake found torch).
  add_library(bench_kernels_torch OBJECT torch_ext/bench_kernels_torch.cc)
  set_target_properties(bench_kernels_torch PROPERTIES CXX_STANDARD 20)
  target_include_directories(bench_kernels_torch SYSTEM PRIVATE
    ${_opreg_torch_inc0} ${_opreg_torch_inc1})
  target_include_directories(bench_kernels_torch PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(bench_kernels_torch PRIVATE
    OPREG_BENCH_TORCH_VERSION="${_opreg_torch_version}")
  target_sources(bench_kernels PRIVATE $<TARGET_OBJECTS:bench_kernels_torch>)
  target_link_libraries(bench_kernels PRIVATE
    ${_opreg_torch_libdir}/libtorch_cpu.so ${_opreg_torch_libdir}/libc10.so)
  set_property(TARGET bench_kernels APPEND PROPERTY BUILD_RPATH ${_opreg_torch_libdir})
endif()
