// Built instead of the CUDA backend's sources when OPREG_BUILD_CUDA=OFF: every entry point of
// cuda_group.h, device_collectives.h and simulated_ranks.h throws opreg::Error
// (kNotImplemented) saying the part is not built, except the queries that can answer plainly
// (IsSymmetric is false, Exists is false, Find is null). No CUDA header or library is used, and
// no symm_mem op gets a CUDA kernel.
#include "opreg/core/error.h"
#include "opreg/symm_mem/cuda/cuda_group.h"
#include "opreg/symm_mem/cuda/device_collectives.h"
#include "opreg/symm_mem/cuda/simulated_ranks.h"

namespace opreg::symm_mem::cuda {
namespace {
[[noreturn]] void NotBuilt(const char* what) {
  OPREG_THROW(kNotImplemented, "symm_mem::cuda::", what,
              ": the CUDA symmetric-memory backend is not built (opreg was built with "
              "OPREG_BUILD_CUDA=OFF)");
}
}  // namespace

CudaSymmetricMemory::~CudaSymmetricMemory() = default;
void* CudaSymmetricMemory::buffer_ptr(int) const { NotBuilt("CudaSymmetricMemory::buffer_ptr"); }
uint32_t* CudaSymmetricMemory::signal_pad(int) const {
  NotBuilt("CudaSymmetricMemory::signal_pad");
}
int CudaSymmetricMemory::rank() const { NotBuilt("CudaSymmetricMemory::rank"); }
int CudaSymmetricMemory::world_size() const { NotBuilt("CudaSymmetricMemory::world_size"); }
int CudaSymmetricMemory::device() const { NotBuilt("CudaSymmetricMemory::device"); }
const std::string& CudaSymmetricMemory::group_name() const {
  NotBuilt("CudaSymmetricMemory::group_name");
}

std::shared_ptr<CudaGroup> CudaGroup::Create(std::string, int, int, std::shared_ptr<Store>,
                                             CudaGroupOptions) {
  NotBuilt("CudaGroup::Create");
}
std::shared_ptr<CudaGroup> CudaGroup::Get(std::string_view) { NotBuilt("CudaGroup::Get"); }
bool CudaGroup::Exists(std::string_view) { return false; }
void CudaGroup::Destroy(std::string_view) { NotBuilt("CudaGroup::Destroy"); }
std::shared_ptr<CudaSymmetricMemory> CudaGroup::Find(const void*) { return nullptr; }
std::shared_ptr<CudaSymmetricMemory> CudaGroup::Allocate(size_t) {
  NotBuilt("CudaGroup::Allocate");
}

Tensor empty(IntArrayRef, DType, std::string_view) { NotBuilt("empty"); }
bool IsSymmetric(const Tensor&) { return false; }

size_t SignalPadBytes(int world) {
  const size_t bytes = static_cast<size_t>(kMaxBlocks) * static_cast<size_t>(world) * 4;
  return (bytes + 127) / 128 * 128;
}
void LaunchCollective(const CollectiveArgs&) { NotBuilt("LaunchCollective"); }

SimulatedRanks::SimulatedRanks(int, size_t, std::chrono::milliseconds)
    : world_(0), buffer_bytes_(0), pad_bytes_(0), stride_(0), timeout_ns_(0) {
  NotBuilt("SimulatedRanks");
}
SimulatedRanks::~SimulatedRanks() = default;
void* SimulatedRanks::buffer(int) const { NotBuilt("SimulatedRanks::buffer"); }
void SimulatedRanks::OneShotAllReduce(DType, int64_t, void*, size_t, CUstream_st*) {
  NotBuilt("SimulatedRanks::OneShotAllReduce");
}
void SimulatedRanks::TwoShotAllReduce(DType, int64_t, CUstream_st*) {
  NotBuilt("SimulatedRanks::TwoShotAllReduce");
}
void SimulatedRanks::AllGather(DType, int64_t, void*, size_t, CUstream_st*) {
  NotBuilt("SimulatedRanks::AllGather");
}
void SimulatedRanks::ReduceScatter(DType, int64_t, void*, size_t, CUstream_st*) {
  NotBuilt("SimulatedRanks::ReduceScatter");
}

}  // namespace opreg::symm_mem::cuda
