// CudaGroup and CudaSymmetricMemory: VMM allocation, drift check, fd exchange, import and
// mapping of every peer's block, device tables (see cuda_group.h).
#include "opreg/symm_mem/cuda/cuda_group.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <type_traits>

#include "cuda_check.h"
#include "driver_api.h"
#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/symm_mem/cuda/device_collectives.h"
#include "opreg/symm_mem/fd_exchange.h"
#include "opreg/symm_mem/group_registry.h"

namespace opreg::symm_mem::cuda {
namespace {

static_assert(std::is_same_v<CUdeviceptr, unsigned long long> &&
                  std::is_same_v<CUmemGenericAllocationHandle, unsigned long long>,
              "cuda_group.h stores these driver types as unsigned long long");

size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

GroupRegistry<CudaGroup>& Groups() {
  static auto* r = new GroupRegistry<CudaGroup>("symm_mem (cuda)", "CUDA group",
                                                "symm_mem::cuda::CudaGroup::Create");
  return *r;
}
std::mutex& LiveMu() {
  static std::mutex mu;
  return mu;
}
// Data-region start -> (end, handle) of every live allocation, guarded by LiveMu().
struct LiveEntry {
  uintptr_t end;
  std::weak_ptr<CudaSymmetricMemory> handle;
};
std::map<uintptr_t, LiveEntry>& Live() {
  static auto* m = new std::map<uintptr_t, LiveEntry>();
  return *m;
}

CUmemAllocationProp PropFor(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

}  // namespace

// ---- CudaSymmetricMemory ----------------------------------------------------------------------

CudaSymmetricMemory::CudaSymmetricMemory(std::shared_ptr<CudaGroup> group, size_t buffer_bytes,
                                         int64_t alloc_id)
    : group_(std::move(group)),
      buffer_bytes_(buffer_bytes),
      pad_bytes_(SignalPadBytes(group_->world_size())),
      alloc_id_(alloc_id),
      handles_(static_cast<size_t>(group_->world_size()), 0),
      bases_(static_cast<size_t>(group_->world_size()), 0) {}

CudaSymmetricMemory::~CudaSymmetricMemory() {
  {
    std::lock_guard<std::mutex> lock(LiveMu());
    if (bases_[static_cast<size_t>(rank())] != 0) {
      Live().erase(static_cast<uintptr_t>(bases_[static_cast<size_t>(rank())] + pad_bytes_));
    }
  }
  Release();
}

void CudaSymmetricMemory::Release() noexcept {
  // Best effort: a destructor must not throw; failures are logged.
  try {
    CudaDeviceGuard guard(device());
    if (dev_buffers_ != nullptr) {
      const cudaError_t e = cudaFree(dev_buffers_);
      if (e != cudaSuccess) Logger().warn("symm_mem (cuda): cudaFree: {}", cudaGetErrorName(e));
      dev_buffers_ = nullptr;
      dev_pads_ = nullptr;
    }
    const DriverApiTable& api = DriverApi();
    for (size_t r = 0; r < bases_.size(); ++r) {
      if (bases_[r] != 0) {
        CUresult u = api.MemUnmap(bases_[r], block_bytes_);
        CUresult f = api.MemAddressFree(bases_[r], block_bytes_);
        if (u != CUDA_SUCCESS || f != CUDA_SUCCESS) {
          Logger().warn(
              "symm_mem (cuda): unmapping rank {}'s block of allocation #{} failed "
              "(cuMemUnmap {}, cuMemAddressFree {})",
              r, alloc_id_, static_cast<int>(u), static_cast<int>(f));
        }
        bases_[r] = 0;
      }
      if (handles_[r] != 0) {
        if (api.MemRelease(handles_[r]) != CUDA_SUCCESS) {
          Logger().warn("symm_mem (cuda): cuMemRelease of rank {}'s block failed", r);
        }
        handles_[r] = 0;
      }
    }
  } catch (const std::exception& e) {
    Logger().warn("symm_mem (cuda): releasing allocation #{} of group '{}': {}", alloc_id_,
                  group_name(), e.what());
  }
}

unsigned long long CudaSymmetricMemory::MapBlock(unsigned long long handle, int owner) {
  const DriverApiTable& api = DriverApi();
  const std::string what =
      StrCat("(rank ", owner, "'s block of ", block_bytes_, " bytes, allocation #", alloc_id_, ")");
  CUdeviceptr ptr = 0;
  CheckCu(api.MemAddressReserve(&ptr, block_bytes_, 0, 0, 0), StrCat("cuMemAddressReserve", what));
  CUresult r = api.MemMap(ptr, block_bytes_, 0, handle, 0);
  if (r != CUDA_SUCCESS) {
    api.MemAddressFree(ptr, block_bytes_);
    CheckCu(r, StrCat("cuMemMap", what));
  }
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device();
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  r = api.MemSetAccess(ptr, block_bytes_, &access, 1);
  if (r != CUDA_SUCCESS) {
    api.MemUnmap(ptr, block_bytes_);
    api.MemAddressFree(ptr, block_bytes_);
    CheckCu(r, StrCat("cuMemSetAccess", what, " for device ", device()));
  }
  return ptr;
}

void* CudaSymmetricMemory::buffer_ptr(int r) const {
  OPREG_CHECK_INDEX(r >= 0 && r < world_size(), "CudaSymmetricMemory::buffer_ptr: rank ", r,
                    " is not in [0, ", world_size(), ")");
  return reinterpret_cast<void*>(bases_[static_cast<size_t>(r)] + pad_bytes_);
}

uint32_t* CudaSymmetricMemory::signal_pad(int r) const {
  OPREG_CHECK_INDEX(r >= 0 && r < world_size(), "CudaSymmetricMemory::signal_pad: rank ", r,
                    " is not in [0, ", world_size(), ")");
  return reinterpret_cast<uint32_t*>(bases_[static_cast<size_t>(r)]);
}

int CudaSymmetricMemory::rank() const { return group_->rank(); }
int CudaSymmetricMemory::world_size() const { return group_->world_size(); }
int CudaSymmetricMemory::device() const { return group_->device(); }
const std::string& CudaSymmetricMemory::group_name() const { return group_->name(); }

// ---- CudaGroup --------------------------------------------------------------------------------

CudaGroup::CudaGroup(std::string name, int rank, int world, std::shared_ptr<Store> store,
                     CudaGroupOptions options)
    : name_(std::move(name)),
      rank_(rank),
      world_(world),
      store_(std::move(store)),
      options_(options) {}

std::string CudaGroup::Key(std::string_view suffix) const {
  return StrCat(name_, "/cuda/", suffix);
}

std::shared_ptr<CudaGroup> CudaGroup::Create(std::string name, int rank, int world,
                                             std::shared_ptr<Store> store,
                                             CudaGroupOptions options) {
  OPREG_CHECK_VALUE(!name.empty(), "symm_mem::cuda::CudaGroup::Create: empty group name");
  OPREG_CHECK_VALUE(world >= 1 && world <= kThreads && rank >= 0 && rank < world,
                    "symm_mem::cuda::CudaGroup::Create('", name, "'): rank ", rank, " / world ",
                    world, " invalid (need 0 <= rank < world <= ", kThreads, ")");
  OPREG_CHECK_VALUE(store != nullptr, "symm_mem::cuda::CudaGroup::Create('", name,
                    "'): null store");
  if (options.device < 0) CheckCudaRt(cudaGetDevice(&options.device), "cudaGetDevice");
  {
    CudaDeviceGuard guard(options.device);
    CheckCudaRt(cudaFree(nullptr),
                StrCat("cudaFree(nullptr) (context of device ", options.device, ")"));
    (void)DriverApi();  // fail here, not in the first collective allocation
  }
  Groups().CheckFree(name);
  std::shared_ptr<CudaGroup> g(new CudaGroup(name, rank, world, std::move(store), options));
  Groups().Insert(name, g);
  return g;
}

std::shared_ptr<CudaGroup> CudaGroup::Get(std::string_view name) { return Groups().Get(name); }

bool CudaGroup::Exists(std::string_view name) { return Groups().Exists(name); }

void CudaGroup::Destroy(std::string_view name) {
  Groups().Remove(name, "symm_mem::cuda::CudaGroup::Destroy");  // released here, unlocked
}

std::shared_ptr<CudaSymmetricMemory> CudaGroup::Find(const void* ptr) {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::shared_ptr<CudaSymmetricMemory> h;  // dies after the lock is released
  std::lock_guard<std::mutex> lock(LiveMu());
  auto it = Live().upper_bound(p);
  if (it == Live().begin()) return nullptr;
  --it;
  if (p >= it->second.end && !(p == it->first && it->first == it->second.end)) return nullptr;
  h = it->second.handle.lock();
  return h;
}

void CudaGroup::CheckDrift(int64_t id, size_t nbytes, size_t block_bytes) {
  const std::string prefix = Key(StrCat("alloc/", id, "/info/"));
  const std::string mine = StrCat(nbytes, " ", block_bytes);
  store_->Set(StrCat(prefix, rank_), mine);
  store_->WaitRanks(
      prefix, world_, rank_, options_.timeout,
      StrCat("symm_mem (cuda) group '", name_, "' allocation #", id, " (", nbytes, " bytes)"));
  std::vector<std::pair<unsigned long long, unsigned long long>> all(static_cast<size_t>(world_));
  for (int r = 0; r < world_; ++r) {
    const std::string v = r == rank_ ? mine : store_->Get(StrCat(prefix, r), Millis(0));
    std::sscanf(v.c_str(), "%llu %llu", &all[r].first, &all[r].second);
  }
  for (int r = 1; r < world_; ++r) {
    OPREG_CHECK(all[r].first == all[0].first, "symm_mem (cuda): allocation drift in group '", name_,
                "': rank ", r, " allocated ", all[r].first, " bytes as allocation #", id,
                " but rank 0 allocated ", all[0].first,
                " bytes (every rank must allocate the same sizes in the same order)");
    OPREG_CHECK(all[r].second == all[0].second, "symm_mem (cuda): group '", name_, "' allocation #",
                id, ": rank ", r, " rounded its block to ", all[r].second, " bytes but rank 0 to ",
                all[0].second, " (devices with different granularity)");
  }
}

std::shared_ptr<CudaSymmetricMemory> CudaGroup::Allocate(size_t nbytes) {
  std::lock_guard<std::mutex> alloc_lock(alloc_mu_);
  const int64_t id = next_alloc_id_++;
  CudaDeviceGuard guard(options_.device);
  const DriverApiTable& api = DriverApi();
  std::shared_ptr<CudaSymmetricMemory> h(new CudaSymmetricMemory(shared_from_this(), nbytes, id));

  // 1. This rank's block, mapped here, with a zeroed pad.
  const CUmemAllocationProp prop = PropFor(options_.device);
  size_t granularity = 0;
  CheckCu(
      api.MemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
      StrCat("cuMemGetAllocationGranularity(device ", options_.device, ")"));
  h->block_bytes_ = RoundUp(h->pad_bytes_ + std::max<size_t>(nbytes, 1), granularity);
  CUmemGenericAllocationHandle local = 0;
  CheckCu(api.MemCreate(&local, h->block_bytes_, &prop, 0),
          StrCat("cuMemCreate(", h->block_bytes_, " bytes on device ", options_.device, ")"));
  h->handles_[rank_] = local;
  h->bases_[rank_] = h->MapBlock(local, rank_);
  CheckCudaRt(cudaMemset(reinterpret_cast<void*>(h->bases_[rank_]), 0, h->pad_bytes_),
              "cudaMemset(signal pad)");
  CheckCudaRt(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after zeroing the signal pad)");

  if (world_ > 1) {
    // 2. Same allocation everywhere? (Publishing also says: "my pad is zero".)
    CheckDrift(id, nbytes, h->block_bytes_);
    // 3. Export, exchange, import, map.
    int fd = -1;
    CheckCu(api.MemExportToShareableHandle(&fd, local, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            StrCat("cuMemExportToShareableHandle(allocation #", id, ")"));
    std::vector<int> fds;
    try {
      fds = ExchangeFds(*store_, Key(StrCat("alloc/", id, "/fds")), rank_, world_, fd,
                        options_.timeout);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    struct CloseAll {
      std::vector<int>* v;
      ~CloseAll() {
        for (int f : *v) {
          if (f >= 0) ::close(f);
        }
      }
    } close_all{&fds};
    for (int r = 0; r < world_; ++r) {
      if (r == rank_) continue;
      CUmemGenericAllocationHandle imported = 0;
      CheckCu(
          api.MemImportFromShareableHandle(&imported,
                                           reinterpret_cast<void*>(static_cast<uintptr_t>(fds[r])),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          StrCat("cuMemImportFromShareableHandle(rank ", r, "'s block of allocation #", id, ")"));
      h->handles_[r] = imported;
      ::close(fds[r]);
      fds[r] = -1;
      h->bases_[r] = h->MapBlock(imported, r);
    }
    // Every peer read our info key before sending us its fd.
    store_->Delete(Key(StrCat("alloc/", id, "/info/", rank_)));
  }

  // 4. Device tables [buffers | pads].
  std::vector<void*> table(2 * static_cast<size_t>(world_));
  for (int r = 0; r < world_; ++r) {
    table[r] = h->buffer_ptr(r);
    table[world_ + r] = h->signal_pad(r);
  }
  void* dev = nullptr;
  CheckCudaRt(cudaMalloc(&dev, table.size() * sizeof(void*)),
              "cudaMalloc(peer-pointer / signal-pad tables)");
  h->dev_buffers_ = static_cast<void**>(dev);
  h->dev_pads_ = reinterpret_cast<uint32_t**>(h->dev_buffers_ + world_);
  CheckCudaRt(cudaMemcpy(dev, table.data(), table.size() * sizeof(void*), cudaMemcpyHostToDevice),
              "cudaMemcpy(peer-pointer / signal-pad tables)");

  std::lock_guard<std::mutex> lock(LiveMu());
  const auto begin = reinterpret_cast<uintptr_t>(h->buffer_ptr(rank_));
  Live()[begin] = LiveEntry{begin + nbytes, h};
  return h;
}

// ---- Tensors ----------------------------------------------------------------------------------

Tensor empty(IntArrayRef sizes, DType dtype, std::string_view group_name) {
  std::shared_ptr<CudaGroup> g = CudaGroup::Get(group_name);
  const int64_t numel = ComputeNumel(sizes, "symm_mem::cuda::empty");
  std::shared_ptr<CudaSymmetricMemory> h =
      g->Allocate(static_cast<size_t>(numel) * ItemSize(dtype));
  void* data = h->buffer_ptr(h->rank());
  return from_blob(data, sizes, dtype, Device::cuda(g->device()),
                   [h](void*) mutable { h.reset(); });
}

bool IsSymmetric(const Tensor& t) {
  if (!t.defined() || !t.is_cuda()) return false;
  return CudaGroup::Find(t.data_ptr()) != nullptr;
}

}  // namespace opreg::symm_mem::cuda
