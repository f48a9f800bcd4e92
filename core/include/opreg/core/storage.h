// Storage: the shared, reference-counted byte buffer behind one or more tensors (views).
//
// Views of a tensor share one StorageImpl; alias analysis and the memory planner reason about
// storage identity (Storage::is_same / Tensor::is_alias_of).
//
// Thread safety: handles are like std::shared_ptr (atomic count); the bytes are not synchronized.
#pragma once

#include <cstddef>
#include <utility>

#include "opreg/core/allocator.h"
#include "opreg/core/device.h"
#include "opreg/core/intrusive_ptr.h"

namespace opreg {

// The owner of a buffer: its DataPtr and size. Non-copyable; freed when the last handle dies.
class StorageImpl : public intrusive_ptr_target {
 public:
  StorageImpl(DataPtr data_ptr, size_t nbytes) : data_ptr_(std::move(data_ptr)), nbytes_(nbytes) {}
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_ptr_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_ptr_.device(); }
  const DataPtr& data_ptr() const { return data_ptr_; }
  // Gives a storage made without an owner (its DataPtr has no deleter and no context) the owner
  // of its buffer: from_blob() validates a layout on a non-owning storage, then hands it the
  // owner. The buffer, its size and its device stay as they are (no call can point a storage at
  // other memory). Returns false, changing nothing, when the storage has an owner already. Only
  // while no other thread uses this storage.
  bool AdoptOwner(void* owner, DataPtr::DeleterFn release) noexcept {
    if (data_ptr_.deleter() != nullptr || data_ptr_.context() != nullptr) return false;
    data_ptr_ = DataPtr(data_ptr_.get(), owner, release, data_ptr_.device());
    return true;
  }
  // Memory its owner lent for reading only (a read-only NumPy array, a DLPack tensor flagged
  // read-only): opreg's writes to it (copy_, written op arguments) are refused. Set once, by
  // the import that creates the storage, before the tensor is shared.
  bool read_only() const { return read_only_; }
  void set_read_only(bool read_only) { read_only_ = read_only; }

 private:
  friend class RecycledTensors;  // they refill a storage they hold the only handle of
  friend class RecycleScope;

  DataPtr data_ptr_;
  size_t nbytes_;
  bool read_only_ = false;
};

// A handle to a StorageImpl (may be null: a default-constructed Storage is undefined).
class Storage {
 public:
  Storage() = default;
  explicit Storage(intrusive_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  // Allocates `nbytes` from `allocator` (not null).
  static Storage Allocate(size_t nbytes, Allocator* allocator) {
    return Storage(make_intrusive<StorageImpl>(allocator->Allocate(nbytes), nbytes));
  }

  bool defined() const { return static_cast<bool>(impl_); }
  // The following require defined().
  void* data() const { return impl_->data(); }
  size_t nbytes() const { return impl_->nbytes(); }
  Device device() const { return impl_->device(); }

  // Number of handles (Storage objects and tensors) sharing the buffer; 0 if undefined.
  size_t use_count() const { return impl_.use_count(); }
  bool is_same(const Storage& other) const { return impl_ == other.impl_; }
  bool read_only() const { return impl_ && impl_->read_only(); }
  StorageImpl* unsafe_get() const { return impl_.get(); }

 private:
  intrusive_ptr<StorageImpl> impl_;
};

}  // namespace opreg
