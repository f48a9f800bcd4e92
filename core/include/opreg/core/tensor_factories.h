// Functions that create tensors: new storage (empty, zeros, ones, full, arange, empty_strided,
// empty_like) or adopted memory (from_blob).
//
// Errors: opreg::Error (kValue) for negative sizes, mismatched sizes/strides, size overflow;
// allocation failures as the allocator reports them (kRuntime; kNotImplemented for CUDA in a
// build without CUDA). Values on CUDA devices are filled on the host and copied over.
//
// Thread safety: all functions may be called concurrently.
#pragma once

#include <functional>

#include "opreg/core/device.h"
#include "opreg/core/dtype.h"
#include "opreg/core/scalar.h"
#include "opreg/core/tensor.h"

namespace opreg {

// A contiguous tensor with uninitialized values (meta: no memory at all).
Tensor empty(IntArrayRef sizes, DType dtype, Device device = Device::cpu());
// A tensor with the given strides over a storage just large enough to hold it.
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, DType dtype,
                     Device device = Device::cpu());
// empty() with the sizes, dtype and device of `like` (contiguous strides).
Tensor empty_like(const Tensor& like);
Tensor zeros(IntArrayRef sizes, DType dtype, Device device = Device::cpu());
Tensor ones(IntArrayRef sizes, DType dtype, Device device = Device::cpu());
// Every element set to `value` converted to dtype (as copy_ converts). kValue error, as torch's
// "value cannot be converted to type ... without overflow", for a value the dtype cannot hold:
// NaN or out of range for an integral dtype (truncation toward zero is fine; a negative value
// for an unsigned dtype is refused, where torch wraps it), a finite value beyond a floating
// dtype's largest.
Tensor full(IntArrayRef sizes, double value, DType dtype, Device device = Device::cpu());
// The same from a Scalar; an integer into an integral dtype is exact (beyond 2^53 too).
Tensor full(IntArrayRef sizes, const Scalar& value, DType dtype, Device device = Device::cpu());
// [0, 1, ..., end-1] (1-d).
Tensor arange(int64_t end, DType dtype, Device device = Device::cpu());
// start, start+step, ... while < end (> end for negative step), as torch.arange: the length is
// ceil((end - start) / step). kValue error for step == 0 or a step of the wrong sign, and when
// an element would not fit the dtype (full()'s rule; torch wraps those silently).
Tensor arange(double start, double end, double step, DType dtype, Device device = Device::cpu());

// Wraps existing memory without copying. The storage covers exactly the bytes the sizes and
// strides reach from `data`. When the last view dies, `deleter(data)` is called (if non-empty);
// an empty deleter means the caller keeps ownership and must keep the memory alive. Negative
// strides are refused.
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                 Device device = Device::cpu(), std::function<void(void*)> deleter = {});
// from_blob for memory another runtime owns (a DLPack producer, a Python object): when the last
// view dies, `release(owner)` runs. Everything is validated before anything is taken, so when
// this throws the caller still owns `owner`. No allocation for the deleter (the hot path of
// converting framework tensors per call).
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device,
                 void* owner, DataPtr::DeleterFn release);
// from_blob with contiguous strides.
Tensor from_blob(void* data, IntArrayRef sizes, DType dtype, Device device = Device::cpu(),
                 std::function<void(void*)> deleter = {});

}  // namespace opreg
