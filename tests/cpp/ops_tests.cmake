# Tests of the built-in ops (opreg::ops): every op and variant against double-precision
# references in the tests, argument errors, and graph capture/replay of a small block.
opreg_add_cpp_test(test_ops_elementwise LIBS opreg::ops)
opreg_add_cpp_test(test_ops_norm LIBS opreg::ops)
opreg_add_cpp_test(test_ops_misc LIBS opreg::ops)
opreg_add_cpp_test(test_ops_linear LIBS opreg::ops)
opreg_add_cpp_test(test_ops_large LIBS opreg::ops)
