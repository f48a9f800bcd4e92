opreg_add_cpp_test(test_symm_mem LIBS opreg::symm_mem)
opreg_add_cpp_test(test_symm_mem_planning LIBS opreg::symm_mem)
