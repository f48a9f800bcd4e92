// The per-thread cache behind RecycledTensors. A cached tensor holds an empty DataPtr, so the
// cache never keeps foreign memory (or a Python object) alive between calls.
//
// The cache is plain thread-local data (tensors in raw slots): reaching it costs no
// initialisation guard on this per-argument path. A separate thread-local object with a
// destructor, created when a thread first caches something, frees what is left at thread exit.
#include "opreg/core/recycled_tensors.h"

#include <new>
#include <utility>

#include "blob_layout.h"
#include "opreg/core/tensor_factories.h"

namespace opreg {
namespace {

// Enough for the tensor arguments of any real op; a call with more allocates the rest.
constexpr int kMaxCached = 16;

// Tensors live in raw slots (placement new) so that the whole cache is trivially constructible.
struct ThreadCache {
  alignas(Tensor) unsigned char slots[kMaxCached][sizeof(Tensor)];
  int size;
  bool cleanup_registered;

  Tensor* Slot(int i) { return std::launder(reinterpret_cast<Tensor*>(slots[i])); }
};
thread_local ThreadCache t_cache;  // zero-initialised: no guard

struct ThreadCacheCleanup {
  ~ThreadCacheCleanup() {
    ThreadCache& c = t_cache;
    while (c.size > 0) c.Slot(--c.size)->~Tensor();
  }
};

void RegisterCleanup(ThreadCache& c) {
  thread_local ThreadCacheCleanup cleanup;
  (void)cleanup;
  c.cleanup_registered = true;
}

}  // namespace

Tensor RecycledTensors::FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                                 Device device, void* owner, DataPtr::DeleterFn release) {
  ThreadCache& cache = t_cache;
  if (cache.size == 0) return from_blob(data, sizes, strides, dtype, device, owner, release);
  const BlobLayout layout = CheckBlobLayout(data, sizes, strides, dtype, device);
  // Nothing below throws: the cached objects take the layout and then `owner`.
  Tensor* slot = cache.Slot(--cache.size);
  Tensor t = std::move(*slot);
  slot->~Tensor();
  TensorImpl* impl = t.unsafe_get_impl();
  impl->ResetLayout(sizes, strides, dtype, layout.numel);
  StorageImpl* storage = impl->storage_.unsafe_get();
  storage->nbytes_ = layout.nbytes;
  storage->data_ptr_ = DataPtr(data, owner, release, device);
  return t;
}

void RecycledTensors::Give(Tensor* t) {
  TensorImpl* impl = t->unsafe_get_impl();
  if (impl == nullptr) return;
  ThreadCache& cache = t_cache;
  // A single handle cannot be copied by another thread (only its holder could), so these counts
  // cannot rise under us.
  if (cache.size >= kMaxCached || impl->refcount() != 1 || !impl->storage_.defined() ||
      impl->storage_.use_count() != 1) {
    *t = Tensor();
    return;
  }
  impl->storage_.unsafe_get()->data_ptr_.Reset();  // what the tensor's destruction would do now
  if (!cache.cleanup_registered) RegisterCleanup(cache);
  new (cache.slots[cache.size++]) Tensor(std::move(*t));
  *t = Tensor();
}

size_t RecycledTensors::CachedOnThisThread() { return static_cast<size_t>(t_cache.size); }

}  // namespace opreg
