// RecycledTensors: tensors over memory another runtime owns, made for the length of one call
// without a heap allocation.
//
// Every call from Python or through torch's dispatcher wraps each framework tensor argument in an
// opreg tensor (from_blob): a TensorImpl and a StorageImpl, two allocations and two frees per
// argument, about a third of a no-op call's cost. A caller that knows when its call ends takes
// the tensors from FromBlob() and hands them back with Give(); a tensor nobody else kept is then
// emptied (its memory's owner released, as destruction would) and cached for the next FromBlob()
// on the same thread.
//
// Ownership: FromBlob() returns an ordinary tensor; one never given back is simply destroyed.
// Give() recycles only a tensor whose TensorImpl and StorageImpl have no other handle (a kernel
// that kept the tensor, a view of it or a result aliasing it keeps it alive, untouched).
//
// Thread safety: the cache is per thread; both functions may be called from any thread.
#pragma once

#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "opreg/core/allocator.h"
#include "opreg/core/tensor.h"

namespace opreg {

namespace internal {
struct RecycledTensorCache;  // one thread's cached objects (recycled_tensors.cc)
}  // namespace internal

// Each thread has two caches: one for the framework tensors callers wrap (kArguments, the
// default), one for the tensors opreg makes itself (kOwned: new tensors' objects, from
// empty()/empty_strided() on any device, meta copies made to run a meta function). Neither use
// then takes the other's objects.
enum class RecyclePool : uint8_t { kArguments = 0, kOwned = 1 };

class RecycledTensors {
 public:
  // from_blob(data, sizes, strides, dtype, device, owner, release), with the same checks and
  // errors (when it throws the caller still owns `owner`), built from this thread's cached
  // objects when there are some.
  static Tensor FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                         Device device, void* owner, DataPtr::DeleterFn release,
                         RecyclePool pool = RecyclePool::kArguments);
  // Ends the caller's use of `*t` (left undefined). When `*t` is the only handle of its
  // TensorImpl and of its storage, the memory's owner is released now and the objects are
  // cached; otherwise the handle is just dropped. Undefined tensors are ignored.
  static void Give(Tensor* t, RecyclePool pool = RecyclePool::kArguments);
  // Tensor objects cached on this thread (for tests).
  static size_t CachedOnThisThread(RecyclePool pool = RecyclePool::kArguments);

 private:
  friend class RecycleScope;
  static Tensor FromCache(internal::RecycledTensorCache& cache, void* data, IntArrayRef sizes,
                          IntArrayRef strides, DType dtype, Device device, void* owner,
                          DataPtr::DeleterFn release);
  // Drops `*t` (just made by FromCache, its only handle) without releasing its memory's owner.
  static void Disown(Tensor* t);
  // Give() with `n` release substitutions (RecycleScope::ReleaseAtEndWith). Inline, defined in
  // recycled_tensors.cc (its callers' file).
  static inline void GiveTo(internal::RecycledTensorCache& cache, Tensor* t,
                            const DataPtr::DeleterFn* release, const DataPtr::DeleterFn* at_end,
                            int n);
};

// The tensors one call made with FromBlob() (or RecycledTensors::FromBlob() and Keep()), given
// back when the scope ends (on an exception too). Declare it before anything that holds the
// call's tensors, so that it ends after them. The scope finds its thread's cache once, when it is
// made, so making and giving back each tensor costs no thread-local lookup. Not thread-safe: one
// per call, on the caller's thread.
class RecycleScope {
 public:
  explicit RecycleScope(RecyclePool pool = RecyclePool::kArguments);
  ~RecycleScope();
  RecycleScope(const RecycleScope&) = delete;
  RecycleScope& operator=(const RecycleScope&) = delete;

  // RecycledTensors::FromBlob() followed by Keep(t, source): the same checks and errors (when
  // it throws the caller still owns `owner` and nothing is kept).
  Tensor FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device,
                  void* owner, DataPtr::DeleterFn release, const void* source = nullptr);

  // Keeps a handle to `t` until the scope ends. `source`, when not null, identifies the
  // framework object `t` was made from (a Python tensor), for Find().
  void Keep(const Tensor& t, const void* source = nullptr) { KeepHandle(Tensor(t), source); }

  // The tensor kept for `source` in this scope, or nullptr (always for a null `source`). A
  // framework tensor passed twice to one call is then one opreg tensor, as it is one tensor in
  // the framework: aliasing between the arguments is visible to the kernel.
  const Tensor* Find(const void* source) const {
    if (source == nullptr) return nullptr;
    const int n = size_ < kInline ? size_ : kInline;
    for (int i = 0; i < n; ++i) {
      if (inline_sources_[i] == source) return InlineTensor(i);
    }
    for (const auto& [t, s] : overflow_) {
      if (s == source) return &t;
    }
    return nullptr;
  }

  // How many tensors the scope gives back when it ends (their owners are released then unless
  // someone else still holds the tensor).
  size_t size() const { return static_cast<size_t>(size_); }

  // Declares that whoever ends this scope holds what `release` must otherwise acquire (the
  // Python bindings: the GIL, which their release functions would check for). The owners of
  // tensors given back at the end of the scope whose release function is `release` are then
  // released by `at_end` instead; a tensor someone kept still gets `release` when it dies,
  // wherever that is. At most two pairs per scope (kValue error otherwise).
  void ReleaseAtEndWith(DataPtr::DeleterFn release, DataPtr::DeleterFn at_end);

 private:
  // The first kInline tensors live in raw slots: keeping one is a placement new, and giving it
  // back leaves nothing for a container to destroy (a call's tensors are a few at most).
  static constexpr int kInline = 8;

  const Tensor* InlineTensor(int i) const {
    return std::launder(reinterpret_cast<const Tensor*>(inline_tensors_[i]));
  }
  Tensor* InlineTensor(int i) {
    return std::launder(reinterpret_cast<Tensor*>(inline_tensors_[i]));
  }
  void KeepHandle(Tensor&& t, const void* source) {
    if (size_ < kInline) {
      new (inline_tensors_[size_]) Tensor(std::move(t));
      inline_sources_[size_] = source;
    } else {
      overflow_.emplace_back(std::move(t), source);  // on a throw nothing is kept
    }
    ++size_;
  }

  internal::RecycledTensorCache* cache_;
  int size_ = 0;
  alignas(Tensor) unsigned char inline_tensors_[kInline][sizeof(Tensor)];
  const void* inline_sources_[kInline];
  std::vector<std::pair<Tensor, const void*>> overflow_;
  DataPtr::DeleterFn release_[2] = {nullptr, nullptr};
  DataPtr::DeleterFn at_end_[2] = {nullptr, nullptr};
  int num_pairs_ = 0;
};

}  // namespace opreg
