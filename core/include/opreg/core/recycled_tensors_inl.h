// The inline parts of recycled_tensors.h: RecycleScope::FromBlob()'s common path, the TensorImpl
// member it uses, and the scope's end (RecycledTensors::GiveTo). Inline because a call from
// Python or through torch's dispatcher runs them for every tensor argument, where three calls
// across a shared library's boundary cost as much as the work. Include recycled_tensors.h, not
// this file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "opreg/core/macros.h"
#include "opreg/core/recycled_tensors.h"

namespace opreg {

// TensorImpl's member is defined here, next to its callers, and inlined into them (a call per
// framework tensor argument otherwise: about a fifth of its cost for a small tensor).
__attribute__((always_inline)) inline bool TensorImpl::AdoptBlobLayout(IntArrayRef sizes,
                                                                       IntArrayRef strides,
                                                                       DType dtype,
                                                                       size_t* nbytes) {
  // One loop that checks, copies, measures and tests contiguity: this runs for every framework
  // tensor argument of every call, where from_blob's separate check, copy and contiguity passes
  // cost more than the copy itself. The loop runs in from_blob's order, so a shape whose element
  // count overflows before a zero size is refused here as it is there. A recycled tensor usually
  // gets the rank it had, so the resizes rarely act.
  const size_t n = sizes.size();
  if (strides.size() != n) return false;
  if (sizes_.size() != n) sizes_.resize(n);
  if (strides_.size() != n) strides_.resize(n);
  int64_t* sz = sizes_.data();
  int64_t* st = strides_.data();
  int64_t numel = 1, last = 0;
  // Contiguity front to back: each dim of size > 1 spans exactly the stride of the previous such
  // dim (`outer`), and the last such dim has stride 1 (size-1 dims' strides never matter).
  int64_t outer = -1;
  bool contiguous = true;
  for (size_t d = 0; d < n; ++d) {
    const int64_t size = sizes[d], stride = strides[d];
    int64_t reach = 0;
    if (size < 0 || stride < 0 || __builtin_mul_overflow(numel, size, &numel) ||
        (size != 0 && (__builtin_mul_overflow(size - 1, stride, &reach) ||
                       __builtin_add_overflow(last, reach, &last)))) {
      return false;
    }
    sz[d] = size;
    st[d] = stride;
    if (size != 1) {
      int64_t span = 0;
      if (outer >= 0) {
        contiguous = contiguous && !__builtin_mul_overflow(stride, size, &span) && span == outer;
      }
      outer = stride;
    }
  }
  int64_t bytes = 0;
  if (numel != 0 &&
      __builtin_mul_overflow(last + 1, static_cast<int64_t>(ItemSize(dtype)), &bytes)) {
    return false;
  }
  *nbytes = static_cast<size_t>(bytes);
  storage_offset_ = 0;
  numel_ = numel;
  dtype_ = dtype;
  is_contiguous_ = numel == 0 || (contiguous && (outer == -1 || outer == 1));
  return true;
}

// Inlined into its callers: the scope's destructor runs it for every tensor of every call.
__attribute__((always_inline)) inline void RecycledTensors::GiveTo(
    internal::RecycledTensorCache& cache, Tensor* t, const DataPtr::DeleterFn* release,
    const DataPtr::DeleterFn* at_end, const DataPtr::DeleterFn* acquire, int n) {
  TensorImpl* impl = t->unsafe_get_impl();
  if (impl == nullptr) return;
  // A single handle cannot be copied by another thread (only its holder could), so these counts
  // cannot rise under us.
  if (cache.size >= internal::kMaxCached || impl->refcount() != 1 || !impl->storage_.defined() ||
      impl->storage_.use_count() != 1) {
    // The tensor outlives the scope: a borrowed owner gets the reference the tensor's release
    // will drop. Our handle keeps the tensor, and with it its storage, alive until this is done,
    // so that release cannot run first (the storage is never swapped for another).
    if (n > 0 && impl->storage_.defined()) {
      const DataPtr& data = impl->storage_.unsafe_get()->data_ptr_;
      for (int i = 0; i < n; ++i) {
        if (data.deleter() == release[i] && at_end[i] == nullptr) acquire[i](data.context());
      }
    }
    *t = Tensor();
    return;
  }
  // What the tensor's destruction would do now: release the memory's owner (a borrowed one:
  // nothing, the caller's reference covered the scope).
  DataPtr& data = impl->storage_.unsafe_get()->data_ptr_;
  const DataPtr::DeleterFn deleter = data.deleter();
  for (int i = 0; i < n; ++i) {
    if (deleter == release[i]) {
      void* owner = data.ReleaseContext();
      if (at_end[i] != nullptr) at_end[i](owner);
      break;
    }
  }
  data.Reset();  // a no-op when the substitution above took the owner
  // The release may have run Python code (a finaliser) that called ops and filled the cache.
  if (cache.size >= internal::kMaxCached) {
    *t = Tensor();
    return;
  }
  if (!cache.cleanup_registered) RegisterCleanup(cache);
  new (cache.slots[cache.size++]) Tensor(std::move(*t));
}

__attribute__((always_inline)) inline RecycleScope::~RecycleScope() {
  const int n = size_ < kInline ? size_ : kInline;
  for (int i = 0; i < n; ++i) {
    Tensor* t = InlineTensor(i);
    RecycledTensors::GiveTo(*cache_, t, release_, at_end_, acquire_, num_pairs_);
    t->~Tensor();  // left empty by GiveTo
  }
  if (OPREG_UNLIKELY(!overflow_.empty())) GiveOverflow();
}

inline Tensor RecycleScope::FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides,
                                     DType dtype, Device device, void* owner,
                                     DataPtr::DeleterFn release, const void* source) {
  internal::RecycledTensorCache& cache = *cache_;
  if (OPREG_LIKELY(cache.size > 0 && size_ < kInline)) {
    // The top cached tensor takes the layout in place and stays cached until nothing can throw
    // (a layout it refuses leaves it half-written; the next use writes every field again).
    Tensor* slot = cache.Slot(cache.size - 1);
    TensorImpl* impl = slot->unsafe_get_impl();
    size_t nbytes = 0;
    if (OPREG_LIKELY(impl->AdoptBlobLayout(sizes, strides, dtype, &nbytes) &&
                     (data != nullptr || nbytes == 0 || device.is_meta()))) {
      --cache.size;
      StorageImpl* storage = impl->storage_.unsafe_get();
      storage->nbytes_ = nbytes;
      storage->read_only_ = false;  // only writable memory is recycled
      storage->data_ptr_ = DataPtr(data, owner, release, device);
      // The cached handle becomes the scope's; the caller's is a second one, made without an
      // atomic increment (the cached handle was the only one, and this thread's).
      new (inline_tensors_[size_]) Tensor(std::move(*slot));
      slot->~Tensor();
      inline_sources_[size_] = source;
      ++size_;
      auto scope_handle = intrusive_ptr<TensorImpl>::reclaim(impl);
      Tensor caller(scope_handle.CopyOfSole());
      scope_handle.release();  // the scope's slot keeps its reference
      return caller;
    }
  }
  // from_blob's checks name a refused layout; an empty cache or a full scope take the general way.
  return FromBlobSlow(data, sizes, strides, dtype, device, owner, release, source);
}

}  // namespace opreg
