# Memory placement (greedy portfolio, LB, verifier, allocator baselines) and `opreg plan`.
# Included from tests/cpp/CMakeLists.txt.
opreg_add_cpp_test(test_memory_placement LIBS opreg::planner_baselines)
opreg_add_cpp_test(test_cli_plan LIBS opreg_cli_commands)
