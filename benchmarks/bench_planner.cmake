# bench_planner: arena placement vs LB and allocator baselines on synthetic traces; PNG plots when
# libpng is found (optional: the binary builds without it). Included from benchmarks/CMakeLists.txt.
find_package(nlohmann_json 3 CONFIG REQUIRED)
add_executable(bench_planner bench_planner.cc planner_traces.cc planner_exact_section.cc)
target_link_libraries(bench_planner PRIVATE opreg::planner_baselines nlohmann_json::nlohmann_json)
target_include_directories(bench_planner PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
# MiniMalloc's benchmark instances, run by default in the exact-mode section.
target_compile_definitions(bench_planner PRIVATE
  OPREG_MINIMALLOC_DIR="${PROJECT_SOURCE_DIR}/tests/data/minimalloc")
find_package(PNG QUIET)
if(PNG_FOUND)
  target_compile_definitions(bench_planner PRIVATE OPREG_BENCH_HAVE_PNG=1)
  target_link_libraries(bench_planner PRIVATE PNG::PNG)
else()
  message(STATUS "bench_planner: libpng not found, --plot disabled")
endif()
opreg_target_settings(bench_planner)
