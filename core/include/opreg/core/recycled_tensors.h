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

// Enough for the tensor arguments of any real op; a call with more allocates the rest.
constexpr int kMaxCached = 16;

// One thread's cached objects. Tensors live in raw slots (placement new) so that the whole cache
// is trivially constructible: thread-local data with no initialisation guard.
struct RecycledTensorCache {
  alignas(Tensor) unsigned char slots[kMaxCached][sizeof(Tensor)];
  int size;
  bool cleanup_registered;

  Tensor* Slot(int i) { return std::launder(reinterpret_cast<Tensor*>(slots[i])); }
};

// Each thread's caches, by RecyclePool (recycled_tensors.cc); only for this header's inline code.
extern thread_local RecycledTensorCache t_recycled_tensor_caches[2];

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
  // This thread's cache for `pool`, for a RecycleScope made from it (a caller that keeps it in
  // thread-local state of its own saves the scope's lookup). Valid for the thread's life.
  static internal::RecycledTensorCache* ThisThreadCache(RecyclePool pool);
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
  // recycled_tensors_inl.h.
  // A pair whose `at_end` is null borrows its owners (RecycleScope::BorrowOwners): `acquire`
  // runs for a tensor that is not cached.
  static inline void GiveTo(internal::RecycledTensorCache& cache, Tensor* t,
                            const DataPtr::DeleterFn* release, const DataPtr::DeleterFn* at_end,
                            const DataPtr::DeleterFn* acquire, int n);
  // Makes the thread free its cache at exit (on its first cached tensor).
  static void RegisterCleanup(internal::RecycledTensorCache& cache);
};

// The tensors one call made with FromBlob() (or RecycledTensors::FromBlob() and Keep()), given
// back when the scope ends (on an exception too). Declare it before anything that holds the
// call's tensors, so that it ends after them. The scope finds its thread's cache once, when it is
// made, so making and giving back each tensor costs no thread-local lookup. Not thread-safe: one
// per call, on the caller's thread.
class RecycleScope {
 public:
  explicit RecycleScope(RecyclePool pool = RecyclePool::kArguments)
      : cache_(&internal::t_recycled_tensor_caches[static_cast<int>(pool)]) {}
  // A scope over this thread's cache as RecycledTensors::ThisThreadCache() gave it.
  explicit RecycleScope(internal::RecycledTensorCache* this_thread_cache)
      : cache_(this_thread_cache) {}
  inline ~RecycleScope();  // recycled_tensors_inl.h
  RecycleScope(const RecycleScope&) = delete;
  RecycleScope& operator=(const RecycleScope&) = delete;

  // RecycledTensors::FromBlob() followed by Keep(t, source): the same checks and errors (when
  // it throws the caller still owns `owner` and nothing is kept). Inline (recycled_tensors_inl.h):
  // a call from Python or torch runs it for every tensor argument.
  inline Tensor FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                         Device device, void* owner, DataPtr::DeleterFn release,
                         const void* source = nullptr);

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

  // The `source` of the tensor of `impl` in this scope (null when none or none was given): the
  // framework object an argument's opreg tensor was made from, for a binding that returns the
  // caller's own object when a kernel returns its argument.
  const void* SourceOf(const TensorImpl* impl) const {
    const int n = size_ < kInline ? size_ : kInline;
    for (int i = 0; i < n; ++i) {
      if (InlineTensor(i)->unsafe_get_impl() == impl) return inline_sources_[i];
    }
    for (const auto& [t, s] : overflow_) {
      if (t.unsafe_get_impl() == impl) return s;
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

  // Declares that the owners of this scope's tensors whose release function is `release` are
  // borrowed: the caller holds a reference to each owner for the whole scope, and FromBlob()
  // took none. A tensor given back at the end of the scope then releases nothing, and one that
  // outlives the scope (someone kept it, or the cache is full) first gets `acquire(owner)`, its
  // own reference, which `release` drops when the tensor dies. Saves the two reference-count
  // operations per argument that a call's tensors otherwise cost. Shares ReleaseAtEndWith's two
  // pairs (kValue error beyond).
  void BorrowOwners(DataPtr::DeleterFn release, DataPtr::DeleterFn acquire) {
    if (OPREG_UNLIKELY(release == nullptr || acquire == nullptr || num_pairs_ >= 2)) {
      RefusePair("BorrowOwners", release, acquire);
    }
    release_[num_pairs_] = release;
    acquire_[num_pairs_] = acquire;  // at_end_ stays null: the owner is borrowed
    ++num_pairs_;
  }

 private:
  // The first kInline tensors live in raw slots: keeping one is a placement new, and giving it
  // back leaves nothing for a container to destroy (a call's tensors are a few at most).
  static constexpr int kInline = 8;

  // Throws the kValue error for a pair ReleaseAtEndWith or BorrowOwners cannot take.
  [[noreturn]] static void RefusePair(const char* what, DataPtr::DeleterFn first,
                                      DataPtr::DeleterFn second);

  // The end of the scope for the tensors past the inline slots.
  void GiveOverflow();
  // FromBlob() when its inline path cannot serve: an empty cache, a full scope, a layout to
  // refuse.
  Tensor FromBlobSlow(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                      Device device, void* owner, DataPtr::DeleterFn release, const void* source);

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
  DataPtr::DeleterFn acquire_[2] = {nullptr, nullptr};
  int num_pairs_ = 0;
};

}  // namespace opreg

#include "opreg/core/recycled_tensors_inl.h"  // IWYU pragma: export
