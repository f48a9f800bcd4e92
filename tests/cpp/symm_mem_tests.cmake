opreg_add_cpp_test(test_symm_mem LIBS opreg::symm_mem)
opreg_add_cpp_test(test_fd_exchange_security LIBS opreg::symm_mem)
opreg_add_cpp_test(test_file_store_security LIBS opreg::symm_mem)
opreg_add_cpp_test(test_symm_mem_peers LIBS opreg::symm_mem)
opreg_add_cpp_test(test_symm_mem_planning LIBS opreg::symm_mem opreg::planner)

# test_symm_mem_mpi: the MPI bootstrap (MpiStore, CreateMpiGroup), run under mpirun with 2 and 3
# ranks (oversubscribed: the CI machine may have fewer cores), plus one run that initializes
# MPI without thread support to check the error. It has its own main (MPI_Init_thread), so it
# does not use opreg_add_cpp_test. OMPI_ALLOW_RUN_AS_ROOT*: CI containers run as root.
if(OPREG_BUILD_MPI)
  add_executable(test_symm_mem_mpi test_symm_mem_mpi.cc)
  target_link_libraries(test_symm_mem_mpi PRIVATE Catch2::Catch2 opreg::symm_mem_mpi)
  opreg_target_settings(test_symm_mem_mpi)
  set(_opreg_mpirun ${MPIEXEC_EXECUTABLE} ${MPIEXEC_PREFLAGS})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _opreg_mpirun_version
    ERROR_QUIET)
  if(_opreg_mpirun_version MATCHES "Open MPI|OpenRTE")
    list(APPEND _opreg_mpirun --oversubscribe)
  endif()
  set(_opreg_mpi_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none)
  if(OPREG_SANITIZE MATCHES "address")
    # OpenMPI leaks in MPI_Init/MPI_Finalize, much of it from MCA components it has dlclosed by
    # the time LeakSanitizer reports (no module name to suppress), so leak checking is off for
    # these tests only; ASan's other checks and UBSan still run.
    list(APPEND _opreg_mpi_env ASAN_OPTIONS=detect_leaks=0)
  endif()
  foreach(np 2 3)
    add_test(NAME test_symm_mem_mpi_np${np}
      COMMAND ${_opreg_mpirun} ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:test_symm_mem_mpi>)
    set_tests_properties(test_symm_mem_mpi_np${np} PROPERTIES
      TIMEOUT 120 PROCESSORS ${np} ENVIRONMENT "${_opreg_mpi_env}")
  endforeach()
  add_test(NAME test_symm_mem_mpi_thread_level
    COMMAND ${_opreg_mpirun} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:test_symm_mem_mpi>
      --mpi-single "[thread_level]")
  set_tests_properties(test_symm_mem_mpi_thread_level PROPERTIES
    TIMEOUT 60 PROCESSORS 2 ENVIRONMENT "${_opreg_mpi_env}")
endif()

# CUDA (and NCCL) symmetric-memory backends (symm_mem/cuda, symm_mem/nccl), every case tagged
# [cuda]: built in every configuration (against the stubs without CUDA); without a usable CUDA
# device each case warns "SKIPPED: no CUDA device (<reason>)" and passes.
opreg_add_cpp_test(test_symm_mem_cuda LIBS opreg::symm_mem_cuda opreg::ops)
opreg_add_cpp_test(test_symm_mem_cuda_simulated LIBS opreg::symm_mem_cuda)
foreach(_t test_symm_mem_cuda test_symm_mem_cuda_simulated)
  # Loaded for its OPREG_LIBRARY_IMPL block (the CUDA kernels of the symm_mem ops).
  target_link_options(${_t} PRIVATE "LINKER:--no-as-needed")
  if(OPREG_BUILD_CUDA)
    target_link_libraries(${_t} PRIVATE CUDA::cudart)
    target_compile_definitions(${_t} PRIVATE OPREG_TEST_HAVE_CUDA=1)
  endif()
endforeach()
opreg_add_cpp_test(test_symm_mem_nccl LIBS opreg::symm_mem_nccl)
if(OPREG_BUILD_CUDA)
  target_link_libraries(test_symm_mem_nccl PRIVATE CUDA::cudart)
  target_compile_definitions(test_symm_mem_nccl PRIVATE OPREG_TEST_HAVE_CUDA=1)
endif()
if(OPREG_BUILD_NCCL)
  target_link_libraries(test_symm_mem_nccl PRIVATE ${OPREG_NCCL_LIBRARY})
  target_include_directories(test_symm_mem_nccl PRIVATE ${OPREG_NCCL_INCLUDE_DIR})
  target_compile_definitions(test_symm_mem_nccl PRIVATE OPREG_TEST_HAVE_NCCL=1)
endif()
