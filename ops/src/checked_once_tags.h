// The pairs (functional op, `.out` op) for which each built-in op's meta function vouches for its
// `.out` kernels' checks (opreg/dispatch/checked_once.h). Private to the ops library: no other
// meta function can vouch for these kernels.
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

// The pairs, in CheckedOp's order (an inline variable: one object in the program).
inline CheckedOnce::Pair kCheckedPairs[static_cast<int>(CheckedOp::kCount)] = {
    {"opreg::add", "opreg::add.out"},
    {"opreg::mul", "opreg::mul.out"},
    {"opreg::split_add", "opreg::split_add.out"},
    {"opreg::rms_norm", "opreg::rms_norm.out"},
    {"opreg::silu_and_mul", "opreg::silu_and_mul.out"},
    {"opreg::per_token_quant", "opreg::per_token_quant.out"},
    {"opreg::topk", "opreg::topk.out"},
    {"opreg::softmax", "opreg::softmax.out"},
    {"opreg::linear", "opreg::linear.out"},
};

inline const CheckedOnce::Pair& PairOf(CheckedOp op) { return kCheckedPairs[static_cast<int>(op)]; }

// A meta function's result, vouched for: `inputs` are the tensors it validated.
inline Tensor Vouched(CheckedOp op, std::initializer_list<const Tensor*> inputs, Tensor result) {
  CheckedOnce::Vouch(PairOf(op), inputs, {&result});
  return result;
}
inline std::tuple<Tensor, Tensor> Vouched(CheckedOp op, std::initializer_list<const Tensor*> inputs,
                                          std::tuple<Tensor, Tensor> result) {
  CheckedOnce::Vouch(PairOf(op), inputs, {&std::get<0>(result), &std::get<1>(result)});
  return result;
}

// For the `.out` checks: true when the call's inputs and outs were checked by the meta function.
inline bool CheckedByMeta(CheckedOp op, std::initializer_list<const Tensor*> tensors) {
  return CheckedOnce::Take(PairOf(op), tensors);
}

}  // namespace opreg::ops::internal
