opreg_add_cpp_test(test_library LIBS opreg::dispatch)
opreg_add_cpp_test(test_dispatcher LIBS opreg::dispatch)
opreg_add_cpp_test(test_dispatch_threads LIBS opreg::dispatch Threads::Threads)
