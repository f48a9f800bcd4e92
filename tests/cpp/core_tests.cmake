# Catch2 tests of opreg::core, one binary per component.
foreach(_opreg_core_test
    test_allocator test_cuda_stream test_device test_dlpack test_dtype test_errors test_ivalue test_recycled_tensors test_tensor)
  opreg_add_cpp_test(${_opreg_core_test} LIBS opreg::core)
endforeach()
