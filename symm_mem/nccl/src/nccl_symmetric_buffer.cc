// NcclSymmetricBuffer: ncclMemAlloc + symmetric window registration + device communicator (see
// nccl_symmetric_buffer.h).
#include "opreg/symm_mem/nccl/nccl_symmetric_buffer.h"

#include <string_view>

#include "nccl_launch.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"

namespace opreg::symm_mem::nccl {
namespace {

void CheckNccl(ncclResult_t r, ncclComm_t comm, std::string_view what) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  const char* last = comm != nullptr ? ncclGetLastError(comm) : nullptr;
  OPREG_THROW(kRuntime, "symm_mem (nccl): ", what, " failed: ", ncclGetErrorString(r),
              (last != nullptr && *last != '\0') ? StrCat(" (", last, ")") : std::string());
}

}  // namespace

struct NcclSymmetricBuffer::Impl {
  ncclComm_t comm = nullptr;
  size_t bytes = 0;
  void* data = nullptr;
  ncclWindow_t window = nullptr;
  ncclDevComm dev_comm{};
  bool has_dev_comm = false;

  ~Impl() {
    // Best effort, in reverse order; failures are logged (a destructor must not throw).
    if (has_dev_comm && ncclDevCommDestroy(comm, &dev_comm) != ncclSuccess) {
      Logger().warn("symm_mem (nccl): ncclDevCommDestroy failed");
    }
    if (window != nullptr && ncclCommWindowDeregister(comm, window) != ncclSuccess) {
      Logger().warn("symm_mem (nccl): ncclCommWindowDeregister failed");
    }
    if (data != nullptr && ncclMemFree(data) != ncclSuccess) {
      Logger().warn("symm_mem (nccl): ncclMemFree failed");
    }
  }
};

NcclSymmetricBuffer::NcclSymmetricBuffer(ncclComm* comm, size_t bytes)
    : impl_(std::make_unique<Impl>()) {
  OPREG_CHECK_VALUE(comm != nullptr, "symm_mem (nccl): NcclSymmetricBuffer: null communicator");
  OPREG_CHECK_VALUE(bytes > 0, "symm_mem (nccl): NcclSymmetricBuffer: zero bytes");
  impl_->comm = comm;
  impl_->bytes = bytes;
  CheckNccl(ncclMemAlloc(&impl_->data, bytes), comm, StrCat("ncclMemAlloc(", bytes, " bytes)"));
  CheckNccl(
      ncclCommWindowRegister(comm, impl_->data, bytes, &impl_->window, NCCL_WIN_COLL_SYMMETRIC),
      comm, "ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC)");
  OPREG_CHECK(impl_->window != nullptr,
              "symm_mem (nccl): ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) returned a null "
              "window: the communicator has no symmetric-memory support (needs all ranks on one "
              "node with CUDA P2P, cuMem enabled (NCCL_CUMEM_ENABLE) and NCCL_WIN_ENABLE)");
  ncclDevCommRequirements reqs{};  // 2.28.9 has no NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
  reqs.lsaBarrierCount = kNcclBlocks;
  CheckNccl(ncclDevCommCreate(comm, &reqs, &impl_->dev_comm), comm,
            StrCat("ncclDevCommCreate(lsaBarrierCount = ", kNcclBlocks, ")"));
  impl_->has_dev_comm = true;
}

NcclSymmetricBuffer::~NcclSymmetricBuffer() = default;

void* NcclSymmetricBuffer::data() const { return impl_->data; }
size_t NcclSymmetricBuffer::bytes() const { return impl_->bytes; }
int NcclSymmetricBuffer::lsa_rank() const { return impl_->dev_comm.lsaRank; }
int NcclSymmetricBuffer::lsa_size() const { return impl_->dev_comm.lsaSize; }

void NcclSymmetricBuffer::OneShotAllReduce(DType dtype, int64_t numel, void* out,
                                           CUstream_st* stream) {
  OPREG_CHECK_VALUE(numel >= 0 && static_cast<size_t>(numel) * ItemSize(dtype) <= impl_->bytes,
                    "symm_mem (nccl) one_shot_all_reduce: ", numel, " elements of ",
                    DTypeName(dtype), " do not fit the ", impl_->bytes, "-byte buffer");
  OPREG_CHECK_VALUE(out != nullptr || numel == 0,
                    "symm_mem (nccl) one_shot_all_reduce: null output");
  LaunchNcclOneShot(impl_->dev_comm, impl_->window, 0, dtype, numel, out, stream);
}

int NcclVersion() {
  int v = -1;
  return ncclGetVersion(&v) == ncclSuccess ? v : -1;
}

}  // namespace opreg::symm_mem::nccl
