# bench_symm_mem: host-backend all-reduce latency (p50/p99) and bandwidth at W ranks,
# 1 KiB .. 64 MiB. With OPREG_BUILD_MPI it also runs under mpirun (group bootstrapped over MPI,
# OpenMPI's MPI_Allreduce timed alongside); without MPI only the fork mode is built.
add_executable(bench_symm_mem bench_symm_mem.cc)
target_link_libraries(bench_symm_mem PRIVATE opreg::symm_mem)
if(OPREG_BUILD_MPI)
  target_link_libraries(bench_symm_mem PRIVATE opreg::symm_mem_mpi)
  target_compile_definitions(bench_symm_mem PRIVATE OPREG_BENCH_WITH_MPI=1)
endif()
opreg_target_settings(bench_symm_mem)
