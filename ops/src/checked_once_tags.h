// The pairs (functional op, `.out` op) for which each built-in op's meta function vouches for its
// `.out` kernels' checks (opreg/dispatch/checked_once.h). Private to the ops library: no other
// meta function can vouch for these kernels.
#pragma once

#include <tuple>

#include "opreg/core/dtype.h"
#include "opreg/core/scalar.h"
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

// The values the checks depend on, as words (CheckedOnce::Word; a Scalar as its kind and bits,
// a dtype as its enumerator).
inline uint64_t WordOf(int64_t v) { return CheckedOnce::Word(v); }
inline uint64_t WordOf(bool v) { return CheckedOnce::Word(v); }
inline uint64_t WordOf(double v) { return CheckedOnce::Word(v); }
inline uint64_t WordOf(DType v) { return static_cast<uint64_t>(v); }
inline uint64_t KindOf(const Scalar& v) {
  return v.isIntegral() ? 0 : v.isFloatingPoint() ? 1 : v.isBoolean() ? 2 : 3;
}
inline uint64_t WordOf(const Scalar& v) {  // a complex one (which no check accepts): its real part
  return v.isIntegral() ? CheckedOnce::Word(v.toInt())
         : v.isBoolean()
             ? CheckedOnce::Word(v.toBool())
             : CheckedOnce::Word(v.isFloatingPoint() ? v.toDouble() : v.toComplex().real());
}

// A meta function's result, vouched for: `inputs` and `values` are the arguments it validated.
inline Tensor Vouched(CheckedOp op, std::initializer_list<const Tensor*> inputs,
                      std::initializer_list<uint64_t> values, Tensor result) {
  CheckedOnce::Vouch(PairOf(op), inputs, values, {&result});
  return result;
}
inline std::tuple<Tensor, Tensor> Vouched(CheckedOp op, std::initializer_list<const Tensor*> inputs,
                                          std::initializer_list<uint64_t> values,
                                          std::tuple<Tensor, Tensor> result) {
  CheckedOnce::Vouch(PairOf(op), inputs, values, {&std::get<0>(result), &std::get<1>(result)});
  return result;
}

// For the `.out` checks: true when the call's inputs, values and outs were checked by the meta
// function.
inline bool CheckedByMeta(CheckedOp op, std::initializer_list<const Tensor*> tensors,
                          std::initializer_list<uint64_t> values = {}) {
  return CheckedOnce::Take(PairOf(op), tensors, values);
}

}  // namespace opreg::ops::internal
