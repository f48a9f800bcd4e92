# bench_kernels: bandwidth of the memory-bound built-in ops against a parallel memcpy, and
# linear's GFLOP/s against cblas_sgemm (CPU); with CUDA built and a GPU present, the same ops on
# cuda:0 against cudaMemcpyAsync and cublasGemmEx. Included from benchmarks/CMakeLists.txt.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPREG_BENCH_OPENBLAS REQUIRED IMPORTED_TARGET openblas)
add_executable(bench_kernels bench_kernels.cc)
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
