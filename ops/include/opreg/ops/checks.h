// Argument validation shared by the registrations of opreg's built-in ops (CPU and CUDA alike).
//
// Every check throws opreg::Error with the canonical kernel-argument text of ArgErrorMessage:
//   "[opreg::rms_norm] argument 'weight' (#1): expected dtype bf16, got f32"
// `op` is the qualified op name as the user called it ("opreg::rms_norm" or
// "opreg::rms_norm.out"); `arg` and `index` name the argument in that op's schema.
// Error kinds: dtype mismatches kType; shapes, devices, layouts and aliasing kValue; dims kIndex.
//
// Thread safety: all functions are pure.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "opreg/core/device.h"
#include "opreg/core/dtype.h"
#include "opreg/core/tensor.h"

namespace opreg::ops {

// A tensor argument with its schema name and position, for checks over several arguments.
struct NamedTensor {
  std::string_view name;
  int index;
  const Tensor* tensor;
};

// "[f32, f16]" style printing of sizes: "[2, 3]".
std::string ShapeString(IntArrayRef sizes);

// `t` is defined: "expected a tensor, got an undefined tensor" (kValue).
void CheckDefined(std::string_view op, std::string_view arg, int index, const Tensor& t);

// `t` has a floating dtype the built-in ops compute on: f32, f16 or bf16 (kType):
//   "... expected dtype f32, f16 or bf16, got i32".
void CheckFloating(std::string_view op, std::string_view arg, int index, const Tensor& t);

// `t.dtype() == dtype` (kType): "... expected dtype bf16, got f32".
void CheckDType(std::string_view op, std::string_view arg, int index, const Tensor& t,
                DType dtype);

// `t` lives on `device` (kValue): "... expected device cpu, got meta". Only the device type is
// compared when either index is -1 (unspecified).
void CheckDevice(std::string_view op, std::string_view arg, int index, const Tensor& t,
                 Device device);

// `t.dim() >= min_dim` (kValue): "... expected a tensor with at least 1 dimension(s), got 0".
void CheckMinDim(std::string_view op, std::string_view arg, int index, const Tensor& t,
                 int64_t min_dim);

// `t.sizes() == sizes` (kValue): "... expected shape [4, 8], got [4, 7]".
void CheckShape(std::string_view op, std::string_view arg, int index, const Tensor& t,
                IntArrayRef sizes);

// `t` has the same sizes as `like` (kValue): "... expected shape [4, 8] (that of argument 'x'
// (#0)), got [4, 7]".
void CheckSameShape(std::string_view op, std::string_view arg, int index, const Tensor& t,
                    const NamedTensor& like);

// `dim` is a valid dimension of a tensor of rank `ndim` (kIndex); returns it wrapped to
// [0, ndim): "... expected a dimension in [-2, 1], got 5".
int64_t WrapDim(std::string_view op, std::string_view arg, int index, int64_t dim, int64_t ndim);

// An input a kernel reads in place, densely (the CUDA kernels, which cannot copy a strided CUDA
// tensor): kValue "expected a contiguous tensor (the CUDA kernel reads it in place; call
// contiguous() first), got strides [1, 64]". An undefined tensor passes (optional arguments).
void CheckContiguousInput(std::string_view op, std::string_view arg, int index, const Tensor& t);

// An out argument of an `.out` op: defined, of exactly `expected_sizes` and `expected_dtype`,
// on `device`, and contiguous (kernels write it densely; a strided out is refused, never
// silently mishandled). Messages: "expected shape [2, 3], got [3, 2]", "expected dtype f32, got
// f16" (kType), "expected device cpu, got meta", "expected a contiguous tensor, got strides
// [1, 2]".
void CheckOut(std::string_view op, std::string_view out_name, int index, const Tensor& out,
              IntArrayRef expected_sizes, DType expected_dtype, Device device);

// A tensor the op writes (an out, an in-place argument) has a layout its kernels can write
// (kValue): no overlapping elements (stride 0), and contiguous for CUDA kernels.
void CheckWrittenLayout(std::string_view op, std::string_view arg, int index, const Tensor& t,
                        Device device);

// True when an element of `a` and one of `b` share a byte: in the same storage, or at the same
// addresses of one device through two storages (one buffer imported twice). Views whose spans
// interleave without sharing an element (column slices of one row-major buffer) do not overlap.
// Exact for every layout whose search stays small (the views kernels are given); a layout too
// tangled to decide quickly counts as overlapping. Empty and meta tensors overlap nothing across
// storages.
bool MemoryOverlaps(const Tensor& a, const Tensor& b);

// The out argument does not overlap any of `inputs` (undefined inputs are skipped) (kValue):
//   "[opreg::add.out] argument 'out' (#3): expected a tensor that does not overlap argument
//    'self' (#0), got one that shares its memory".
// Also use it between the outs of a multi-output op (pass the earlier outs as `inputs`).
void CheckNoAlias(std::string_view op, std::string_view out_name, int index, const Tensor& out,
                  std::initializer_list<NamedTensor> inputs);

// NumPy/PyTorch broadcasting of two shapes (trailing dims aligned; sizes equal or one of them
// 1). kValue error naming both arguments when they do not broadcast:
//   "[opreg::add] argument 'other' (#1): expected a shape broadcastable with [4, 3] (argument
//    'self' (#0)), got [2]".
DimVector BroadcastShapes(std::string_view op, const NamedTensor& a, const NamedTensor& b);

}  // namespace opreg::ops
