# Tests of the built-in ops on CUDA against the CPU kernels (tests/cpp/test_ops_cuda.cc), every
# case tagged [cuda]. Built in every configuration: without CUDA (or without a GPU) each case
# warns "SKIPPED: no CUDA device (<reason>)" and passes. Included from tests/cpp/CMakeLists.txt.
opreg_add_cpp_test(test_ops_cuda LIBS opreg::ops)
# The test calls ops only through the dispatcher (no symbol of libopreg_ops is referenced), but
# the library must be loaded for its OPREG_LIBRARY blocks to register the ops.
target_link_options(test_ops_cuda PRIVATE "LINKER:--no-as-needed")
if(OPREG_BUILD_CUDA)
  target_link_libraries(test_ops_cuda PRIVATE CUDA::cudart)
  target_compile_definitions(test_ops_cuda PRIVATE OPREG_TEST_HAVE_CUDA=1)
endif()
