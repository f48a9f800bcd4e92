// The tags by which each built-in op's meta function vouches for its `.out` kernels' checks
// (opreg/dispatch/checked_once.h). Private to the ops library: no other meta function can vouch
// for these kernels.
#pragma once

#include <tuple>

#include "opreg/core/tensor.h"
#include "opreg/dispatch/checked_once.h"

namespace opreg::ops::internal {

// The built-in functional ops that resolve to a `.out` variant.
enum class CheckedOp {
  kAdd,
  kMul,
  kSplitAdd,
  kRmsNorm,
  kSiluAndMul,
  kPerTokenQuant,
  kTopk,
  kSoftmax,
  kLinear,
  kCount,
};

// One byte per op: its address is the tag (an inline variable has one address in the program).
inline constexpr char kCheckedOnceTags[static_cast<int>(CheckedOp::kCount)] = {};

inline const void* TagOf(CheckedOp op) { return &kCheckedOnceTags[static_cast<int>(op)]; }

// A meta function's result, vouched for: `inputs` are the tensors it validated.
inline Tensor Vouched(CheckedOp op, std::initializer_list<const Tensor*> inputs, Tensor result) {
  CheckedOnce::Vouch(TagOf(op), inputs, {&result});
  return result;
}
inline std::tuple<Tensor, Tensor> Vouched(CheckedOp op, std::initializer_list<const Tensor*> inputs,
                                          std::tuple<Tensor, Tensor> result) {
  CheckedOnce::Vouch(TagOf(op), inputs, {&std::get<0>(result), &std::get<1>(result)});
  return result;
}

// For the `.out` checks: true when the call's inputs and outs were checked by the meta function.
inline bool CheckedByMeta(CheckedOp op, std::initializer_list<const Tensor*> tensors) {
  return CheckedOnce::Take(TagOf(op), tensors);
}

}  // namespace opreg::ops::internal
