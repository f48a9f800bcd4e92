// The per-thread cache behind RecycledTensors. A cached tensor holds an empty DataPtr, so the
// cache never keeps foreign memory (or a Python object) alive between calls.
#include "opreg/core/recycled_tensors.h"

#include <utility>

#include "absl/container/inlined_vector.h"
#include "blob_layout.h"
#include "opreg/core/tensor_factories.h"

namespace opreg {
namespace {

// Enough for the tensor arguments of any real op; a call with more allocates the rest.
constexpr size_t kMaxCached = 16;

absl::InlinedVector<Tensor, kMaxCached>& Cache() {
  thread_local absl::InlinedVector<Tensor, kMaxCached> cache;
  return cache;
}

}  // namespace

Tensor RecycledTensors::FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                                 Device device, void* owner, DataPtr::DeleterFn release) {
  auto& cache = Cache();
  if (cache.empty()) return from_blob(data, sizes, strides, dtype, device, owner, release);
  const BlobLayout layout = CheckBlobLayout(data, sizes, strides, dtype, device);
  // Nothing below throws: the cached objects take the layout and then `owner`.
  Tensor t = std::move(cache.back());
  cache.pop_back();
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
  auto& cache = Cache();
  // A single handle cannot be copied by another thread (only its holder could), so these counts
  // cannot rise under us.
  if (cache.size() >= kMaxCached || impl->refcount() != 1 || !impl->storage_.defined() ||
      impl->storage_.use_count() != 1) {
    *t = Tensor();
    return;
  }
  impl->storage_.unsafe_get()->data_ptr_.Reset();  // what the tensor's destruction would do now
  cache.push_back(std::move(*t));
  *t = Tensor();
}

size_t RecycledTensors::CachedOnThisThread() { return Cache().size(); }

}  // namespace opreg
