# bench_symm_mem: host-backend all-reduce latency (p50/p99) at W ranks, 1 KiB .. 64 MiB.
add_executable(bench_symm_mem bench_symm_mem.cc)
target_link_libraries(bench_symm_mem PRIVATE opreg::symm_mem)
opreg_target_settings(bench_symm_mem)
