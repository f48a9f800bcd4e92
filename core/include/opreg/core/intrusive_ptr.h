// Intrusive reference counting: the ownership model of Tensor, Storage and the boxed IValue
// payloads (as c10::intrusive_ptr in PyTorch).
//
// An object derived from `intrusive_ptr_target` carries its own atomic reference count, so a
// handle (`intrusive_ptr<T>`) is one pointer wide and can be rebuilt from a raw pointer (which is
// what lets IValue, DLPack and other C interfaces hand ownership around).
//
// Thread safety: the count is atomic, so handles to one object may be copied and destroyed
// concurrently from many threads; the object itself is not synchronized.
#pragma once

#include <atomic>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace opreg {

template <class T>
class intrusive_ptr;

// Base class of every intrusively counted object. The count starts at zero; the first
// intrusive_ptr to adopt the object raises it to one. The virtual destructor lets a handle to a
// base class delete the most derived object.
class intrusive_ptr_target {
 public:
  intrusive_ptr_target() noexcept = default;
  // Copying an object never copies its count: the copy is a new, unowned object.
  intrusive_ptr_target(const intrusive_ptr_target&) noexcept {}
  intrusive_ptr_target& operator=(const intrusive_ptr_target&) noexcept { return *this; }
  virtual ~intrusive_ptr_target() = default;

  // Current number of owning handles (racy snapshot when other threads hold handles).
  size_t refcount() const noexcept { return refcount_.load(std::memory_order_acquire); }

 private:
  template <class T>
  friend class intrusive_ptr;
  friend void IntrusiveIncRef(const intrusive_ptr_target* p) noexcept;
  friend void IntrusiveDecRef(const intrusive_ptr_target* p) noexcept;
  template <class T, class... Args>
  friend intrusive_ptr<T> make_intrusive(Args&&... args);

  mutable std::atomic<size_t> refcount_{0};
};

// Raw count manipulation for code that stores intrusive_ptr_target pointers without a typed
// handle. Every IntrusiveIncRef must be balanced by one IntrusiveDecRef, which deletes the
// object when the count reaches zero.
inline void IntrusiveIncRef(const intrusive_ptr_target* p) noexcept {
  if (p != nullptr) p->refcount_.fetch_add(1, std::memory_order_relaxed);
}
inline void IntrusiveDecRef(const intrusive_ptr_target* p) noexcept {
  if (p == nullptr) return;
  // The sole owner may skip the atomic decrement: with one handle left (this one) no other
  // thread holds a handle it could copy, so the count cannot change under us (there are no weak
  // references). Most tensors die this way, and a locked instruction costs ~20 cycles.
  if (p->refcount_.load(std::memory_order_acquire) == 1 ||
      p->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete p;
  }
}

// An owning handle, like std::shared_ptr but one pointer wide. A null handle is allowed.
template <class T>
class intrusive_ptr {
 public:
  using element_type = T;

  constexpr intrusive_ptr() noexcept = default;
  constexpr intrusive_ptr(std::nullptr_t) noexcept {}  // NOLINT: implicit like shared_ptr.

  // Takes a new reference on `p` (which may already be owned by other handles).
  explicit intrusive_ptr(T* p) noexcept : ptr_(p) { IntrusiveIncRef(ptr_); }

  intrusive_ptr(const intrusive_ptr& other) noexcept : ptr_(other.ptr_) { IntrusiveIncRef(ptr_); }
  intrusive_ptr(intrusive_ptr&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }

  // Upcasts from a handle to a derived type.
  template <class U, std::enable_if_t<std::is_convertible_v<U*, T*>, int> = 0>
  intrusive_ptr(const intrusive_ptr<U>& other) noexcept  // NOLINT: implicit upcast.
      : ptr_(other.get()) {
    IntrusiveIncRef(ptr_);
  }
  template <class U, std::enable_if_t<std::is_convertible_v<U*, T*>, int> = 0>
  intrusive_ptr(intrusive_ptr<U>&& other) noexcept  // NOLINT: implicit upcast.
      : ptr_(other.release()) {}

  // The base-class check lives here (not in the class body) so that intrusive_ptr<T> may be
  // named while T is still incomplete, as IValue's recursive payloads need.
  ~intrusive_ptr() {
    static_assert(std::is_base_of_v<intrusive_ptr_target, T>,
                  "intrusive_ptr<T> requires T to derive from intrusive_ptr_target");
    IntrusiveDecRef(ptr_);
  }

  intrusive_ptr& operator=(const intrusive_ptr& other) noexcept {
    intrusive_ptr(other).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& other) noexcept {
    intrusive_ptr(std::move(other)).swap(*this);
    return *this;
  }

  // Adopts a pointer whose reference was previously given up by release(); does not increment.
  static intrusive_ptr reclaim(T* p) noexcept {
    intrusive_ptr r;
    r.ptr_ = p;
    return r;
  }
  // A second handle to an object this handle is the only one of, made with a plain store of the
  // count instead of an atomic increment (as make_intrusive does for the first handle).
  // Precondition: use_count() == 1 and no other thread can reach the object, e.g. it was just
  // made or taken from a thread-local cache; otherwise the count is corrupted.
  intrusive_ptr CopyOfSole() const noexcept {
    static_cast<const intrusive_ptr_target*>(ptr_)->refcount_.store(2, std::memory_order_relaxed);
    return reclaim(ptr_);
  }
  // Gives up ownership without decrementing; the caller must later reclaim() the pointer.
  T* release() noexcept {
    T* p = ptr_;
    ptr_ = nullptr;
    return p;
  }

  void reset() noexcept { intrusive_ptr().swap(*this); }
  void swap(intrusive_ptr& other) noexcept { std::swap(ptr_, other.ptr_); }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  // Number of handles sharing the object; 0 for a null handle.
  size_t use_count() const noexcept { return ptr_ ? ptr_->refcount() : 0; }

 private:
  T* ptr_ = nullptr;
};

template <class T, class U>
bool operator==(const intrusive_ptr<T>& a, const intrusive_ptr<U>& b) noexcept {
  return a.get() == b.get();
}
template <class T, class U>
bool operator!=(const intrusive_ptr<T>& a, const intrusive_ptr<U>& b) noexcept {
  return a.get() != b.get();
}
template <class T>
bool operator==(const intrusive_ptr<T>& a, std::nullptr_t) noexcept {
  return a.get() == nullptr;
}
template <class T>
bool operator!=(const intrusive_ptr<T>& a, std::nullptr_t) noexcept {
  return a.get() != nullptr;
}

// Allocates a T and returns the first handle to it.
template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  T* p = new T(std::forward<Args>(args)...);
  // Nobody else can see the new object yet: a plain store instead of an atomic increment.
  static_cast<const intrusive_ptr_target*>(p)->refcount_.store(1, std::memory_order_relaxed);
  return intrusive_ptr<T>::reclaim(p);
}

}  // namespace opreg
