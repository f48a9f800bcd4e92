// Run-time resolution of the driver entry points (see driver_api.h).
#include "driver_api.h"

#include <cuda_runtime_api.h>

#include "opreg/core/error.h"

namespace opreg::symm_mem::cuda {
namespace {

// The driver ABI version the prototypes in cuda.h describe for these entry points (all of them
// exist unchanged since CUDA 10.2 / 11.x); 12000 works with every 12.x and 13.x driver.
constexpr unsigned kEntryPointVersion = 12000;

template <class Fn>
void Resolve(const char* symbol, Fn* out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t err =
      cudaGetDriverEntryPointByVersion(symbol, &fn, kEntryPointVersion, cudaEnableDefault, &status);
  if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || fn == nullptr) {
    (void)cudaGetLastError();
    OPREG_THROW(kRuntime, "symm_mem (cuda): cudaGetDriverEntryPointByVersion(", symbol, ", ",
                kEntryPointVersion, ") failed: ",
                err != cudaSuccess ? cudaGetErrorName(err) : "symbol not found in the driver",
                " (is a CUDA driver installed?)");
  }
  *out = reinterpret_cast<Fn>(fn);
}

DriverApiTable Load() {
  DriverApiTable t{};
  Resolve("cuGetErrorName", &t.GetErrorName);
  Resolve("cuGetErrorString", &t.GetErrorString);
  Resolve("cuMemGetAllocationGranularity", &t.MemGetAllocationGranularity);
  Resolve("cuMemCreate", &t.MemCreate);
  Resolve("cuMemRelease", &t.MemRelease);
  Resolve("cuMemExportToShareableHandle", &t.MemExportToShareableHandle);
  Resolve("cuMemImportFromShareableHandle", &t.MemImportFromShareableHandle);
  Resolve("cuMemAddressReserve", &t.MemAddressReserve);
  Resolve("cuMemAddressFree", &t.MemAddressFree);
  Resolve("cuMemMap", &t.MemMap);
  Resolve("cuMemUnmap", &t.MemUnmap);
  Resolve("cuMemSetAccess", &t.MemSetAccess);
  return t;
}

}  // namespace

const DriverApiTable& DriverApi() {
  static const DriverApiTable table = Load();  // a throw leaves it uninitialized: retried
  return table;
}

void CheckCu(CUresult r, std::string_view what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  const DriverApiTable& api = DriverApi();
  if (api.GetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (api.GetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  OPREG_THROW(kRuntime, "symm_mem (cuda): ", what, " failed: ", name != nullptr ? name : "CUresult",
              " (", static_cast<int>(r), "): ", text != nullptr ? text : "unknown error");
}

}  // namespace opreg::symm_mem::cuda
