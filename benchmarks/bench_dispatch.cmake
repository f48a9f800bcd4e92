# bench_dispatch: dispatch overhead (direct / unboxed / boxed / lookup), optionally against
# libtorch's c10 dispatcher. Included from benchmarks/CMakeLists.txt.
add_executable(bench_dispatch bench_dispatch.cc)
target_link_libraries(bench_dispatch PRIVATE opreg::dispatch benchmark::benchmark)
opreg_target_settings(bench_dispatch)

# The libtorch comparison (bench_torch.cmake finds torch).
if(_opreg_bench_torch)
  # An object library, so the TU's static BENCHMARK / TORCH_LIBRARY registrations are linked
  # in; C++20, which libtorch's headers require (opreg itself stays C++17).
  add_library(bench_dispatch_torch OBJECT torch_ext/bench_dispatch_torch.cc)
  set_target_properties(bench_dispatch_torch PROPERTIES CXX_STANDARD 20)
  target_include_directories(bench_dispatch_torch SYSTEM PRIVATE
    ${_opreg_torch_inc0} ${_opreg_torch_inc1})
  target_link_libraries(bench_dispatch_torch PRIVATE benchmark::benchmark)
  target_sources(bench_dispatch PRIVATE $<TARGET_OBJECTS:bench_dispatch_torch>)
  target_link_libraries(bench_dispatch PRIVATE
    ${_opreg_torch_libdir}/libtorch_cpu.so ${_opreg_torch_libdir}/libc10.so)
  set_property(TARGET bench_dispatch APPEND PROPERTY BUILD_RPATH ${_opreg_torch_libdir})
endif()
