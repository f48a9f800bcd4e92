// Device code of the NCCL backend: a one-shot all-reduce over a symmetric window with the NCCL
// device API (ncclGetLsaPointer, ncclLsaBarrierSession). See nccl_symmetric_buffer.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "nccl_launch.h"
#include "opreg/core/error.h"
#include "opreg/symm_mem/nccl/nccl_symmetric_buffer.h"

namespace opreg::symm_mem::nccl {
namespace {

constexpr int kThreads = 512;

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void FromFloat(float v, float* o) { *o = v; }
__device__ __forceinline__ void FromFloat(float v, __half* o) { *o = __float2half_rn(v); }
__device__ __forceinline__ void FromFloat(float v, __nv_bfloat16* o) {
  *o = __float2bfloat16_rn(v);
}

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
    FromFloat(acc, out + i);
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);  // peers finished reading
}

}  // namespace

void LaunchNcclOneShot(const ncclDevComm& comm, ncclWindow_t window, size_t offset, DType dtype,
                       int64_t numel, void* out, cudaStream_t stream) {
  switch (dtype) {
    case DType::kFloat32:
      OneShotKernel<float><<<kNcclBlocks, kThreads, 0, stream>>>(window, offset, numel,
                                                                 static_cast<float*>(out), comm);
      break;
    case DType::kFloat16:
      OneShotKernel<__half><<<kNcclBlocks, kThreads, 0, stream>>>(window, offset, numel,
                                                                  static_cast<__half*>(out), comm);
      break;
    case DType::kBFloat16:
      OneShotKernel<__nv_bfloat16><<<kNcclBlocks, kThreads, 0, stream>>>(
          window, offset, numel, static_cast<__nv_bfloat16*>(out), comm);
      break;
    default:
      OPREG_THROW(kType,
                  "symm_mem (nccl) one_shot_all_reduce: expected dtype f32, f16 or bf16, "
                  "got ",
                  DTypeName(dtype));
  }
  const cudaError_t err = cudaGetLastError();
  OPREG_CHECK(err == cudaSuccess,
              "symm_mem (nccl) one_shot_all_reduce: kernel launch failed: ", cudaGetErrorName(err),
              ": ", cudaGetErrorString(err));
}

}  // namespace opreg::symm_mem::nccl
