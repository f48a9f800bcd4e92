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
#include "opreg/core/string_util.h"
#include "opreg/core/tensor_factories.h"

namespace opreg {
namespace internal {

thread_local RecycledTensorCache t_recycled_tensor_caches[2];  // zero-initialised: no guard

}  // namespace internal

namespace {

using internal::RecycledTensorCache;
using internal::t_recycled_tensor_caches;

RecycledTensorCache& CacheOf(RecyclePool pool) {
  return t_recycled_tensor_caches[static_cast<int>(pool)];
}

struct ThreadCacheCleanup {
  ~ThreadCacheCleanup() {
    for (RecycledTensorCache& c : t_recycled_tensor_caches) {
      while (c.size > 0) c.Slot(--c.size)->~Tensor();
    }
  }
};

// A second handle to `t`, which is its TensorImpl's only handle and was made on this thread.
Tensor SecondHandleOfSole(const Tensor& t) {
  auto borrowed = intrusive_ptr<TensorImpl>::reclaim(t.unsafe_get_impl());  // t's reference
  Tensor second(borrowed.CopyOfSole());
  borrowed.release();  // t keeps its reference
  return second;
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
  storage->read_only_ = false;  // only writable arrays are recycled
  storage->data_ptr_ = DataPtr(data, owner, release, device);
  return t;
}

void RecycledTensors::RegisterCleanup(RecycledTensorCache& c) {
  thread_local ThreadCacheCleanup cleanup;
  (void)cleanup;
  c.cleanup_registered = true;
}

void RecycledTensors::Disown(Tensor* t) {
  t->unsafe_get_impl()->storage_.unsafe_get()->data_ptr_.ReleaseContext();
  *t = Tensor();
}

Tensor RecycledTensors::FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                                 Device device, void* owner, DataPtr::DeleterFn release,
                                 RecyclePool pool) {
  return FromCache(CacheOf(pool), data, sizes, strides, dtype, device, owner, release);
}

void RecycledTensors::Give(Tensor* t, RecyclePool pool) {
  GiveTo(CacheOf(pool), t, nullptr, nullptr, nullptr, 0);
}

RecycledTensorCache* RecycledTensors::ThisThreadCache(RecyclePool pool) { return &CacheOf(pool); }

size_t RecycledTensors::CachedOnThisThread(RecyclePool pool) {
  return static_cast<size_t>(CacheOf(pool).size);
}

void RecycleScope::GiveOverflow() {
  for (auto& kept : overflow_) {
    RecycledTensors::GiveTo(*cache_, &kept.first, release_, at_end_, acquire_, num_pairs_);
  }
}

Tensor RecycleScope::FromBlobSlow(void* data, IntArrayRef sizes, IntArrayRef strides,
                                  DType dtype, Device device, void* owner,
                                  DataPtr::DeleterFn release, const void* source) {
  Tensor t =
      RecycledTensors::FromCache(*cache_, data, sizes, strides, dtype, device, owner, release);
  try {
    // `t` is the only handle, made on this thread: the scope's handle needs no atomic increment
    // (a locked instruction per framework tensor argument).
    KeepHandle(SecondHandleOfSole(t), source);
  } catch (...) {  // out of memory: `owner` goes back to the caller, unreleased, as documented
    RecycledTensors::Disown(&t);
    throw;
  }
  return t;
}

void RecycleScope::ReleaseAtEndWith(DataPtr::DeleterFn release, DataPtr::DeleterFn at_end) {
  if (release == nullptr || at_end == nullptr || num_pairs_ >= 2) {
    RefusePair("ReleaseAtEndWith", release, at_end);
  }
  release_[num_pairs_] = release;
  at_end_[num_pairs_] = at_end;
  ++num_pairs_;
}

void RecycleScope::RefusePair(const char* what, DataPtr::DeleterFn first,
                              DataPtr::DeleterFn second) {
  OPREG_CHECK_VALUE(first != nullptr && second != nullptr, "RecycleScope::", what,
                    "(): both functions are required");
  throw Error(ErrorKind::kValue, StrCat("RecycleScope::", what, "(): a scope takes at most two "
                                        "pairs (ReleaseAtEndWith's and BorrowOwners' together)"));
}

}  // namespace opreg
