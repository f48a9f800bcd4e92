// The CUDA driver API calls of the CUDA symmetric-memory backend, loaded at run time (private
// to symm_mem/cuda/src).
//
// Purpose: libopreg_symm_mem_cuda must load on machines without libcuda.so (CPU-only CI), so it
// never links the driver. DriverApi() resolves the few cu* entry points it needs through the
// runtime's cudaGetDriverEntryPointByVersion on first use; cudart is linked as the rest of
// opreg links it (kernels/cuda, the CUDA allocator).
//
// Errors: opreg::Error (kRuntime). DriverApi() throws when an entry point cannot be resolved
// ("cudaGetDriverEntryPointByVersion(cuMemCreate): ..."); CheckCu throws naming the call and
// the driver's error name and text ("cuMemCreate(...) failed: CUDA_ERROR_OUT_OF_MEMORY: ...").
//
// Ownership / thread safety: the table is a process-wide immutable singleton, initialized once
// (thread-safe); the function pointers stay valid for the life of the process.
#pragma once

#include <cuda.h>

#include <string_view>

namespace opreg::symm_mem::cuda {

struct DriverApiTable {
  decltype(&::cuGetErrorName) GetErrorName;
  decltype(&::cuGetErrorString) GetErrorString;
  decltype(&::cuMemGetAllocationGranularity) MemGetAllocationGranularity;
  decltype(&::cuMemCreate) MemCreate;
  decltype(&::cuMemRelease) MemRelease;
  decltype(&::cuMemExportToShareableHandle) MemExportToShareableHandle;
  decltype(&::cuMemImportFromShareableHandle) MemImportFromShareableHandle;
  decltype(&::cuMemAddressReserve) MemAddressReserve;
  decltype(&::cuMemAddressFree) MemAddressFree;
  decltype(&::cuMemMap) MemMap;
  decltype(&::cuMemUnmap) MemUnmap;
  decltype(&::cuMemSetAccess) MemSetAccess;
};

// The resolved table (resolving it on first call).
const DriverApiTable& DriverApi();

// Throws opreg::Error (kRuntime) "<what> failed: <CUDA_ERROR_NAME>: <text>" unless r is
// CUDA_SUCCESS.
void CheckCu(CUresult r, std::string_view what);

}  // namespace opreg::symm_mem::cuda
