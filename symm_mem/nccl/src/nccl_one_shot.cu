// Device code of the NCCL backend: a one-shot all-reduce over a symmetric window with the NCCL
// device API (ncclGetLsaPointer, ncclLsaBarrierSession). See nccl_symmetric_buffer.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "nccl_launch.h"
#include "opreg/core/dtype_visit.h"
#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/kernels/cuda/element_types.cuh"
#include "opreg/symm_mem/nccl/nccl_symmetric_buffer.h"

namespace opreg::symm_mem::nccl {
namespace {

constexpr int kThreads = 512;

using ::opreg::kernels::cuda::device::DeviceType;
using ::opreg::kernels::cuda::device::FromFloat;
using ::opreg::kernels::cuda::device::ToFloat;

template <class T>
__global__ void __launch_bounds__(kThreads)
    OneShotKernel(ncclWindow_t window, size_t offset, int64_t numel, T* out, ncclDevComm comm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), comm, ncclTeamLsa(comm), comm.lsaBarrier,
                                         blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);  // every rank's input is ready
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = tid; i < numel; i += nthreads) {
    float acc = ToFloat(static_cast<const T*>(ncclGetLsaPointer(window, offset, 0))[i]);
    for (int p = 1; p < comm.lsaSize; ++p) {
      acc += ToFloat(static_cast<const T*>(ncclGetLsaPointer(window, offset, p))[i]);
    }
    out[i] = FromFloat<T>(acc);
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);  // peers finished reading
}

}  // namespace

void LaunchNcclOneShot(const ncclDevComm& comm, ncclWindow_t window, size_t offset, DType dtype,
                       int64_t numel, void* out, cudaStream_t stream) {
  VisitFloatingDType(
      dtype,
      [&](auto tag) {
        using T = DeviceType<decltype(tag)>;
        OneShotKernel<T><<<kNcclBlocks, kThreads, 0, stream>>>(window, offset, numel,
                                                               static_cast<T*>(out), comm);
      },
      [](DType unsupported) {
        OPREG_THROW(kType,
                    "symm_mem (nccl) one_shot_all_reduce: expected dtype f32, f16 or bf16, "
                    "got ",
                    DTypeName(unsupported));
      });
  const cudaError_t err = cudaGetLastError();
  OPREG_CHECK(err == cudaSuccess,
              "symm_mem (nccl) one_shot_all_reduce: kernel launch failed: ", cudaGetErrorName(err),
              ": ", cudaGetErrorString(err));
}

}  // namespace opreg::symm_mem::nccl
