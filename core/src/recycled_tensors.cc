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

thread_local RecycledTensorCache t_caches[2];  // by RecyclePool; zero-initialised: no guard

RecycledTensorCache& CacheOf(RecyclePool pool) { return t_caches[static_cast<int>(pool)]; }

struct ThreadCacheCleanup {
  ~ThreadCacheCleanup() {
    for (RecycledTensorCache& c : t_caches) {
      while (c.size > 0) c.Slot(--c.size)->~Tensor();
    }
  }
};

void RegisterCleanup(RecycledTensorCache& c) {
  thread_local ThreadCacheCleanup cleanup;
  (void)cleanup;
  c.cleanup_registered = true;
}

// A second handle to `t`, which is its TensorImpl's only handle and was made on this thread.
Tensor SecondHandleOfSole(const Tensor& t) {
  auto borrowed = intrusive_ptr<TensorImpl>::reclaim(t.unsafe_get_impl());  // t's reference
  Tensor second(borrowed.CopyOfSole());
  borrowed.release();  // t keeps its reference
  return second;
}

}  // namespace

// TensorImpl's member is defined here, next to its only caller, and inlined into it (a call per
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

// Inlined into its callers: the scope's destructor runs it for every tensor of every call.
__attribute__((always_inline)) inline void RecycledTensors::GiveTo(
    RecycledTensorCache& cache, Tensor* t, const DataPtr::DeleterFn* release,
    const DataPtr::DeleterFn* at_end, int n) {
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
                                 Device device, void* owner, DataPtr::DeleterFn release,
                                 RecyclePool pool) {
  return FromCache(CacheOf(pool), data, sizes, strides, dtype, device, owner, release);
}

void RecycledTensors::Give(Tensor* t, RecyclePool pool) {
  GiveTo(CacheOf(pool), t, nullptr, nullptr, 0);
}

size_t RecycledTensors::CachedOnThisThread(RecyclePool pool) {
  return static_cast<size_t>(CacheOf(pool).size);
}

RecycleScope::RecycleScope(RecyclePool pool) : cache_(&CacheOf(pool)) {}

RecycleScope::~RecycleScope() {
  const int n = size_ < kInline ? size_ : kInline;
  for (int i = 0; i < n; ++i) {
    Tensor* t = InlineTensor(i);
    RecycledTensors::GiveTo(*cache_, t, release_, at_end_, num_pairs_);
    t->~Tensor();  // left empty by GiveTo
  }
  for (auto& kept : overflow_) {
    RecycledTensors::GiveTo(*cache_, &kept.first, release_, at_end_, num_pairs_);
  }
}

Tensor RecycleScope::FromBlob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                              Device device, void* owner, DataPtr::DeleterFn release,
                              const void* source) {
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
  OPREG_CHECK_VALUE(release != nullptr && at_end != nullptr,
                    "RecycleScope::ReleaseAtEndWith(): both functions are required");
  OPREG_CHECK_VALUE(num_pairs_ < 2,
                    "RecycleScope::ReleaseAtEndWith(): a scope takes at most two pairs");
  release_[num_pairs_] = release;
  at_end_[num_pairs_] = at_end;
  ++num_pairs_;
}

}  // namespace opreg
