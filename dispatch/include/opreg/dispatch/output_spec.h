// OutputSpec: the shape and dtype of one output of a functional op, said declaratively, so that
// linking an out op (vLLM-style `silu_and_mul_out(Tensor! out, Tensor input)`) to a functional
// form needs no hand-written Meta function:
//
//   m.def_functional("silu_and_mul(Tensor input) -> Tensor", "silu_and_mul_out", {"out"},
//                    {opreg::OutputSpec::Like("input").LastDimDividedBy(2)});
//
// The cases: like a tensor argument (optionally with the last dimension divided, multiplied or
// taken from an int argument, or another dtype); sizes from int / int[] arguments; one value per
// row of a tensor argument (its sizes with the last one 1). Arguments are named as in the
// functional op's schema and checked when the op is defined (Library::def_functional). Values:
// copyable, no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opreg/core/dtype.h"
#include "opreg/core/ivalue.h"
#include "opreg/core/tensor.h"
#include "opreg/schema/function_schema.h"

namespace opreg {

class OutputSpec {
 public:
  // The sizes and dtype of tensor argument `arg`.
  static OutputSpec Like(std::string arg);
  // Sizes from the int and int[] arguments `args`, in order; dtype `dtype`.
  static OutputSpec FromInts(std::vector<std::string> args, DType dtype);
  // One value per row of tensor argument `arg`: its sizes with the last set to 1; dtype `dtype`.
  static OutputSpec PerRow(std::string arg, DType dtype = DType::kFloat32);

  // The last dimension divided by `d` (it must divide evenly at call time) or multiplied by `m`.
  OutputSpec& LastDimDividedBy(int64_t d);
  OutputSpec& LastDimTimes(int64_t m);
  // The last dimension set to int argument `arg` (a top-k's k).
  OutputSpec& LastDimFrom(std::string arg);
  // Another dtype than the source argument's.
  OutputSpec& WithDType(DType dtype);

  // Throws kValue naming `op` when an argument named here is missing from `schema` or of a type
  // the spec cannot read.
  void Validate(const FunctionSchema& schema, std::string_view op) const;
  // The output for one call: a contiguous meta tensor. `args` are the functional op's arguments
  // in schema order. Throws kValue naming the op, the output and the argument on bad sizes.
  Tensor Compute(const FunctionSchema& schema, const Stack& args, size_t output) const;

  // What the spec says, for bindings that compute the same shapes elsewhere (symbolically):
  // Compute takes the sizes from the source (kind "like": argument_names()[0]'s sizes; "per_row":
  // them with the last set to 1; "from_ints": the int / int[] arguments in order), then divides
  // the last by divide_last() and multiplies it by multiply_last(), then sets it to argument
  // last_from() when there is one. dtype(): unset means the source argument's ("like" only).
  std::string_view kind_name() const;
  const std::vector<std::string>& argument_names() const { return args_; }
  const std::optional<DType>& dtype() const { return dtype_; }
  int64_t divide_last() const { return divide_last_; }
  int64_t multiply_last() const { return multiply_last_; }
  const std::optional<std::string>& last_from() const { return last_from_; }

 private:
  enum class Kind { kLike, kFromInts, kPerRow };
  OutputSpec(Kind kind, std::vector<std::string> args, std::optional<DType> dtype)
      : kind_(kind), args_(std::move(args)), dtype_(dtype) {}

  Kind kind_;
  std::vector<std::string> args_;
  std::optional<DType> dtype_;
  int64_t divide_last_ = 1;
  int64_t multiply_last_ = 1;
  std::optional<std::string> last_from_;
};

}  // namespace opreg
