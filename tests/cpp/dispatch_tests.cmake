opreg_add_cpp_test(test_library LIBS opreg::dispatch)
opreg_add_cpp_test(test_dispatcher LIBS opreg::dispatch)
opreg_add_cpp_test(test_kernel_types LIBS opreg::dispatch)
opreg_add_cpp_test(test_torch_compat LIBS opreg::torch_compat)
opreg_add_cpp_test(test_torch_compat_compute LIBS opreg::torch_compat)
opreg_add_cpp_test(test_torch_compat_cpu LIBS opreg::torch_compat Threads::Threads
  SOURCES torch_compat_check_helper.cc)
opreg_add_cpp_test(test_dispatch_threads LIBS opreg::dispatch Threads::Threads)

# `opreg ops --load`: a kernel library loaded with dlopen at run time.
add_library(opreg_test_plugin SHARED ops_plugin.cc)
target_link_libraries(opreg_test_plugin PRIVATE opreg::dispatch)
opreg_target_settings(opreg_test_plugin)
# One whose block has a failing call in the middle.
add_library(opreg_test_plugin_broken SHARED ops_plugin_broken.cc)
target_link_libraries(opreg_test_plugin_broken PRIVATE opreg::dispatch)
opreg_target_settings(opreg_test_plugin_broken)
opreg_add_cpp_test(test_cli_ops LIBS opreg_cli_commands)
add_dependencies(test_cli_ops opreg_test_plugin opreg_test_plugin_broken)
target_compile_definitions(test_cli_ops PRIVATE
  OPREG_TEST_PLUGIN="$<TARGET_FILE:opreg_test_plugin>"
  OPREG_TEST_PLUGIN_BROKEN="$<TARGET_FILE:opreg_test_plugin_broken>")
opreg_add_cpp_test(test_registry_warnings LIBS opreg::dispatch)
opreg_add_cpp_test(test_out_resolution LIBS opreg::dispatch)
opreg_add_cpp_test(test_checked_once LIBS opreg::ops)
opreg_add_cpp_test(test_graph_plan LIBS opreg::planner)
opreg_add_cpp_test(test_capture_scope LIBS opreg::planner Threads::Threads)
# torch's stable ABI over opreg: examples/torch_stable's unchanged sources compiled into the
# test (their STABLE_TORCH_LIBRARY blocks register at start-up), called through the dispatcher.
opreg_add_cpp_test(test_torch_stable LIBS opreg::torch_stable opreg::core opreg::dispatch
  SOURCES ${PROJECT_SOURCE_DIR}/examples/torch_stable/csrc/cpu_kernels.cc
          ${PROJECT_SOURCE_DIR}/examples/torch_stable/csrc/torch_bindings.cc)
# examples/torch_stable built against the stable headers alone, linking no opreg library (as a
# build against torch's headers links no torch library): `opreg ops --load` must find the C shim
# in its own process.
add_library(opreg_test_stable_plugin SHARED
  ${PROJECT_SOURCE_DIR}/examples/torch_stable/csrc/cpu_kernels.cc
  ${PROJECT_SOURCE_DIR}/examples/torch_stable/csrc/torch_bindings.cc)
target_include_directories(opreg_test_stable_plugin PRIVATE
  ${PROJECT_SOURCE_DIR}/torch_stable/include ${PROJECT_SOURCE_DIR}/core/include)
# A Python extension module in miniature: a module init that refers to libpython's symbols.
add_library(opreg_test_pymodule_plugin SHARED ops_plugin_pymodule.cc)
target_link_libraries(opreg_test_pymodule_plugin PRIVATE opreg::dispatch)
add_dependencies(test_cli_ops opreg_test_stable_plugin opreg_test_pymodule_plugin)
target_compile_definitions(test_cli_ops PRIVATE
  OPREG_TEST_STABLE_PLUGIN="$<TARGET_FILE:opreg_test_stable_plugin>"
  OPREG_TEST_PYMODULE_PLUGIN="$<TARGET_FILE:opreg_test_pymodule_plugin>")
opreg_add_cpp_test(test_op_events LIBS opreg::dispatch Threads::Threads)
