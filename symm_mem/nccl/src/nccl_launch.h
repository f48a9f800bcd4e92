// The launcher of the NCCL one-shot all-reduce kernel (private to symm_mem/nccl/src; defined in
// nccl_one_shot.cu). Errors: opreg::Error (kRuntime) naming the failed launch. Thread safety:
// reentrant.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cstdint>

#include "opreg/core/dtype.h"

namespace opreg::symm_mem::nccl {

// out[i] = sum over LSA peers p (in order) of window(p)[offset + i]; kNcclBlocks CTAs, each
// using LSA barrier blockIdx.x of `comm`.
void LaunchNcclOneShot(const ncclDevComm& comm, ncclWindow_t window, size_t offset, DType dtype,
                       int64_t numel, void* out, cudaStream_t stream);

}  // namespace opreg::symm_mem::nccl
