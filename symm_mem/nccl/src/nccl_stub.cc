// Built instead of the NCCL backend's sources when OPREG_BUILD_NCCL=OFF: constructing a
// NcclSymmetricBuffer throws opreg::Error (kNotImplemented) saying the part is not built, and
// NcclVersion() is -1. Nothing NCCL or CUDA is included or linked.
#include "opreg/core/error.h"
#include "opreg/symm_mem/nccl/nccl_symmetric_buffer.h"

namespace opreg::symm_mem::nccl {
namespace {
[[noreturn]] void NotBuilt(const char* what) {
  OPREG_THROW(kNotImplemented, "symm_mem::nccl::", what,
              ": the NCCL symmetric-memory backend is not built (opreg was built with "
              "OPREG_BUILD_NCCL=OFF)");
}
}  // namespace

struct NcclSymmetricBuffer::Impl {};

NcclSymmetricBuffer::NcclSymmetricBuffer(ncclComm*, size_t) { NotBuilt("NcclSymmetricBuffer"); }
NcclSymmetricBuffer::~NcclSymmetricBuffer() = default;
void* NcclSymmetricBuffer::data() const { NotBuilt("NcclSymmetricBuffer::data"); }
size_t NcclSymmetricBuffer::bytes() const { NotBuilt("NcclSymmetricBuffer::bytes"); }
int NcclSymmetricBuffer::lsa_rank() const { NotBuilt("NcclSymmetricBuffer::lsa_rank"); }
int NcclSymmetricBuffer::lsa_size() const { NotBuilt("NcclSymmetricBuffer::lsa_size"); }
void NcclSymmetricBuffer::OneShotAllReduce(DType, int64_t, void*, CUstream_st*) {
  NotBuilt("NcclSymmetricBuffer::OneShotAllReduce");
}
int NcclVersion() { return -1; }

}  // namespace opreg::symm_mem::nccl
