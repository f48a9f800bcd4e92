# Memory placement (greedy portfolio, LB, verifier, allocator baselines) and `opreg plan`.
# Included from tests/cpp/CMakeLists.txt.
opreg_add_cpp_test(test_memory_placement LIBS opreg::planner_baselines)
opreg_add_cpp_test(test_cli_plan LIBS opreg_cli_commands)
# The guillotine generator is the benchmark's (benchmarks/planner_traces.h).
opreg_add_cpp_test(test_exact_placement LIBS opreg::planner
  SOURCES ${PROJECT_SOURCE_DIR}/benchmarks/planner_traces.cc)
target_include_directories(test_exact_placement PRIVATE ${PROJECT_SOURCE_DIR}/benchmarks)
opreg_add_cpp_test(test_argument_binding LIBS opreg::planner)
