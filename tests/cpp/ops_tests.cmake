# Tests of the built-in ops (opreg::ops): every op and variant against double-precision
# references in the tests, argument errors, and graph capture/replay of a small block.
opreg_add_cpp_test(test_ops_elementwise LIBS opreg::ops)
opreg_add_cpp_test(test_ops_norm LIBS opreg::ops)
opreg_add_cpp_test(test_ops_misc LIBS opreg::ops)
opreg_add_cpp_test(test_ops_linear LIBS opreg::ops opreg::planner)
opreg_add_cpp_test(test_ops_large LIBS opreg::ops)

# The same kernel tests on each code path: on a CPU with AVX-512 the kernels take their AVX-512
# paths (kernels/cpu/src/simd/simd_rows.h) unless OPREG_CPU_NO_AVX512 is set, then their AVX2 paths
# unless OPREG_CPU_NO_AVX2 is set too, then the portable loops.
foreach(t test_ops_elementwise test_ops_norm test_ops_misc test_ops_large)
  add_test(NAME ${t}_avx2 COMMAND ${t})
  set_tests_properties(${t}_avx2 PROPERTIES ENVIRONMENT "OPREG_CPU_NO_AVX512=1")
  add_test(NAME ${t}_portable COMMAND ${t})
  set_tests_properties(${t}_portable PROPERTIES ENVIRONMENT
                       "OPREG_CPU_NO_AVX512=1;OPREG_CPU_NO_AVX2=1")
endforeach()
opreg_add_cpp_test(test_capture_ops LIBS opreg::ops opreg::planner)
