// The per-thread cache behind RecycledTensors and RecycleScope. A cached tensor holds an empty
// DataPtr, so the cache never keeps foreign memory (or a Python object) alive between calls.
//
// The cache is plain thread-local data (tensors in raw slots): reaching it costs no
// initialisation guard. A separate thread-local object with a destructor, created when a thread
// first caches something, frees what is left at thread exit. In a shared library each
// thread-local access is a call (__tls_get_addr), so a RecycleScope looks the cache up once and
// passes it on: per argument, nothing.
#include "opreg/core/recycled_tensors.h"

#include <new>
#include <utility>

#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"

namespace opreg {
namespace internal {

// Enough for the tensor arguments of any real op; a call with more allocates the rest.
constexpr int kMaxCached = 16;

// Tensors live in raw slots (placement new) so that the whole cache is trivially constructible.
struct RecycledTensorCache {
  alignas(Tensor) unsigned char slots[kMaxCached][sizeof(Tensor)];
  int size;
  bool cleanup_registered;

  Tensor* Slot(int i) { return std::launder(reinterpret_cast<Tensor*>(slots[i])); }
};

}  // namespace internal

namespace {

using internal::kMaxCached;
using internal::RecycledTensorCache;

thread_local RecycledTensorCache t_cache;  // zero-initialised: no guard

struct ThreadCacheCleanup {
  ~ThreadCacheCleanup() {
    RecycledTensorCache& c = t_cache;
    while (c.size > 0) c.Slot(--c.size)->~Tensor();
  }
};

void RegisterCleanup(RecycledTensorCache& c) {
  thread_local ThreadCacheCleanup cleanup;
  (void)cleanup;
  c.cleanup_registered = true;
}

}  // namespace

Tensor RecycledTensors::FromCache(RecycledTensorCache& cache, void* data, IntArrayRef sizes,
                                  IntArrayRef strides, DType dtype, Device device, void* owner,
                                  DataPtr::DeleterFn release) {
  if (cache.size == 0) return from_blob(data, sizes, strides, dtype, device, owner, release);
  // The top cached tensor takes the layout in place and stays cached until nothing can throw
  // (a layout it refuses leaves it half-written; the next use writes every field again).
  Tensor* slot = cache.Slot(cache.size - 1);
  TensorImpl* impl = slot->unsafe_get_impl();
  size_t nbytes = 0;
  if (!impl->AdoptBlobLayout(sizes, strides, dtype, &nbytes) ||
      (data == nullptr && nbytes != 0 && !device.is_meta())) {
    // from_blob's checks, which run first, name the problem (and throw); a layout they accept
    // after all is made the ordinary way.
    return from_blob(data, sizes, strides, dtype, device, owner, release);
  }
  --cache.size;
  Tensor t = std::move(*slot);
  slot->~Tensor();
  StorageImpl* storage = impl->storage_.unsafe_get();
  storage->nbytes_ = nbytes;
  storage->data_ptr_ = DataPtr(data, owner, release, device);
  return t;
}

void RecycledTensors::GiveTo(RecycledTensorCache& cache, Tensor* t,
                             const DataPtr::DeleterFn* release, const DataPtr::DeleterFn* at_end,
                             int n) {
  TensorImpl* impl = t->unsafe_get_impl();
  if (impl == nullptr) return;
  // A single handle cannot be copied by another thread (only its holder could), so these counts
  // cannot rise under us.
  if (cache.size >= kMaxCached || impl->refcount() != 1 || !impl->storage_.defined() ||
      impl->storage_.use_count() != 1) {
    *t = Tensor();
    return;
  }
  // What the tensor's destruction would do now: release the memory's owner.
  DataPtr& data = impl->storage_.unsafe_get()->data_ptr_;
  const DataPtr::DeleterFn deleter = data.deleter();
  for (int i = 0; i < n; ++i) {
    if (deleter == release[i]) {
      at_end[i](data.ReleaseContext());
      break;
    }
  }
  data.Reset();  // a no-op when the substitution above took the owner
  // The release may have run Python code (a finaliser) that called ops and filled the cache.
  if (cache.size >= kMaxCached) {
    *t = Tensor();
    return;
  }
  if (!cache.cleanup_registered) RegisterCleanup(cache);
  new (cache.slots[cache.size++]) Tensor(std::move(*t));
}

void RecycledTensors::Disown(Tensor* t) {
  t->unsafe_get_impl()->storage_.unsafe_get()->data_ptr_.ReleaseContext();
  *t = Tensor();
}

Tensor RecycledTensors::FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                                 Device device, void* owner, DataPtr::DeleterFn release) {
  return FromCache(t_cache, data, sizes, strides, dtype, device, owner, release);
}

void RecycledTensors::Give(Tensor* t) { GiveTo(t_cache, t, nullptr, nullptr, 0); }

size_t RecycledTensors::CachedOnThisThread() { return static_cast<size_t>(t_cache.size); }

RecycleScope::RecycleScope() : cache_(&t_cache) {}

RecycleScope::~RecycleScope() {
  for (Tensor& t : tensors_) RecycledTensors::GiveTo(*cache_, &t, release_, at_end_, num_pairs_);
}

Tensor RecycleScope::FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                              Device device, void* owner, DataPtr::DeleterFn release,
                              const void* source) {
  Tensor t =
      RecycledTensors::FromCache(*cache_, data, sizes, strides, dtype, device, owner, release);
  try {
    Keep(t, source);
  } catch (...) {  // out of memory: `owner` goes back to the caller, unreleased, as documented
    RecycledTensors::Disown(&t);
    throw;
  }
  return t;
}

void RecycleScope::ReleaseAtEndWith(DataPtr::DeleterFn release, DataPtr::DeleterFn at_end) {
  OPREG_CHECK_VALUE(release != nullptr && at_end != nullptr,
                    "RecycleScope::ReleaseAtEndWith(): both functions are required");
  OPREG_CHECK_VALUE(num_pairs_ < 2,
                    "RecycleScope::ReleaseAtEndWith(): a scope takes at most two pairs");
  release_[num_pairs_] = release;
  at_end_[num_pairs_] = at_end;
  ++num_pairs_;
}

}  // namespace opreg
