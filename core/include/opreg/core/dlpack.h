// Zero-copy exchange with other frameworks (NumPy, PyTorch, JAX, CuPy) through the legacy DLPack
// ABI (DLManagedTensor, DLPack 0.6 as shipped by Debian).
//
// DType mapping: kDLFloat 16/32/64, kDLBfloat 16, kDLInt 8/16/32/64, kDLUInt 8, bool as code 6
// (kDLBool, DLPack >= 0.8) with 8 bits, fp8 e4m3fn / e5m2 as DLPack 1.1 codes 10 / 12 with 8
// bits. Devices: kDLCPU and kDLCUDA (device_id = CUDA ordinal).
//
// Thread safety: both functions may be called concurrently on different objects.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "opreg/core/allocator.h"
#include "opreg/core/recycled_tensors.h"
#include "opreg/core/tensor.h"

namespace opreg {

// DLDataTypeCode values newer than the DLPack 0.6 header (same numbers as DLPack 1.1).
inline constexpr uint8_t kDLPackBoolCode = 6;           // kDLBool
inline constexpr uint8_t kDLPackFloat8E4M3FNCode = 10;  // kDLFloat8_e4m3fn
inline constexpr uint8_t kDLPackFloat8E5M2Code = 12;    // kDLFloat8_e5m2

// The DLPack dtype of a DType (lanes 1).
DLDataType ToDLDataType(DType dtype);
// The DType of a DLPack dtype; InvalidArgument for unsupported code/bits or lanes != 1.
absl::StatusOr<DType> FromDLDataType(DLDataType dtype);

// Exports `tensor` (a view is fine). The returned DLManagedTensor holds a reference to the
// tensor's storage (via the tensor), so the data stays alive until the consumer calls its
// deleter, exactly once. `dl_tensor.data` points at the first element and byte_offset is 0;
// shape and strides (in elements, never NULL) live in the manager context.
// Throws opreg::Error (kValue) for undefined and meta tensors.
DLManagedTensor* ToDLPack(const Tensor& tensor);

// Fills `out` to describe `tensor` (not undefined, not meta): data at the first element,
// byte_offset 0, shape and strides (in elements) copied into the caller's arrays of
// tensor.dim() entries, which `out` then points at. The building block of every export
// (legacy and versioned capsules, framework exchange APIs); the caller keeps the data alive.
// Throws opreg::Error (kValue) for undefined and meta tensors.
void DescribeDLTensor(const Tensor& tensor, int64_t* shape, int64_t* strides, DLTensor* out);

// Imports the tensor `dl` describes, without copying, for any DLPack flavour (legacy,
// versioned, or a framework's exchange API). On success the tensor's storage owns `owner`:
// `release(owner)` runs exactly once, when the last tensor viewing the storage dies. On error
// (see FromDLPack) nothing is taken and the caller still owns `owner`. `dl` is only read
// during the call (shape and strides are copied). With `recycle`, the tensor comes from
// RecycledTensors and is kept by the scope, which gives it back when the caller's call ends,
// under `source` (see RecycleScope::Find).
absl::StatusOr<Tensor> FromDLTensor(const DLTensor& dl, void* owner, DataPtr::DeleterFn release,
                                    RecycleScope* recycle = nullptr,
                                    const void* source = nullptr);

// Imports a DLManagedTensor without copying. On success the returned tensor owns `managed`:
// its deleter runs exactly once, when the last tensor viewing the storage dies. On error
// (unsupported dtype, lanes != 1, device, negative ndim/sizes/strides, null arguments)
// ownership is NOT taken and the caller must still call managed->deleter. NULL strides mean
// contiguous; byte_offset is honoured.
absl::StatusOr<Tensor> FromDLPack(DLManagedTensor* managed);

}  // namespace opreg
