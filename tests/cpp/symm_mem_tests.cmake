opreg_add_cpp_test(test_symm_mem LIBS opreg::symm_mem)
