#include "opreg/dispatch/output_spec.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/core/tensor_factories.h"

namespace opreg {

OutputSpec OutputSpec::Like(std::string arg) {
  return OutputSpec(Kind::kLike, {std::move(arg)}, std::nullopt);
}

OutputSpec OutputSpec::FromInts(std::vector<std::string> args, DType dtype) {
  return OutputSpec(Kind::kFromInts, std::move(args), dtype);
}

OutputSpec OutputSpec::PerRow(std::string arg, DType dtype) {
  return OutputSpec(Kind::kPerRow, {std::move(arg)}, dtype);
}

OutputSpec& OutputSpec::LastDimDividedBy(int64_t d) {
  OPREG_CHECK_VALUE(d > 0, "OutputSpec::LastDimDividedBy: expected a positive divisor, got ", d);
  divide_last_ = d;
  return *this;
}

OutputSpec& OutputSpec::LastDimTimes(int64_t m) {
  OPREG_CHECK_VALUE(m > 0, "OutputSpec::LastDimTimes: expected a positive factor, got ", m);
  multiply_last_ = m;
  return *this;
}

OutputSpec& OutputSpec::LastDimFrom(std::string arg) {
  last_from_ = std::move(arg);
  return *this;
}

OutputSpec& OutputSpec::WithDType(DType dtype) {
  dtype_ = dtype;
  return *this;
}

void OutputSpec::Validate(const FunctionSchema& schema, std::string_view op) const {
  OPREG_CHECK_VALUE(!args_.empty(), "[", op, "] output spec names no argument");
  if (last_from_) {
    const std::optional<size_t> i = schema.ArgumentIndex(*last_from_);
    OPREG_CHECK_VALUE(i.has_value(), "[", op, "] output spec: no argument '", *last_from_, "'");
    const TypeKind k = schema.arguments()[*i].type()->kind();
    OPREG_CHECK_VALUE(k == TypeKind::kInt || k == TypeKind::kSymInt, "[", op,
                      "] output spec: argument '", *last_from_,
                      "' gives the last dimension, so it must be int; it is ",
                      schema.arguments()[*i].type()->str());
  }
  for (const std::string& name : args_) {
    const std::optional<size_t> i = schema.ArgumentIndex(name);
    OPREG_CHECK_VALUE(i.has_value(), "[", op, "] output spec: no argument '", name, "'");
    const Type& t = *schema.arguments()[*i].type();
    if (kind_ == Kind::kFromInts) {
      const bool ints = t.kind() == TypeKind::kInt || t.kind() == TypeKind::kSymInt ||
                        (t.kind() == TypeKind::kList && (t.element()->kind() == TypeKind::kInt ||
                                                         t.element()->kind() == TypeKind::kSymInt));
      OPREG_CHECK_VALUE(ints, "[", op, "] output spec: argument '", name,
                        "' gives sizes, so it must be int or int[]; it is ", t.str());
    } else {
      OPREG_CHECK_VALUE(t.kind() == TypeKind::kTensor, "[", op, "] output spec: argument '", name,
                        "' gives a shape, so it must be a Tensor; it is ", t.str());
    }
  }
}

std::string_view OutputSpec::kind_name() const {
  switch (kind_) {
    case Kind::kLike:
      return "like";
    case Kind::kFromInts:
      return "from_ints";
    case Kind::kPerRow:
      return "per_row";
  }
  return "like";
}

Tensor OutputSpec::Compute(const FunctionSchema& schema, const Stack& args, size_t output) const {
  const std::string op = schema.operator_name().str();
  auto arg = [&](const std::string& name) -> const IValue& {
    const size_t i = *schema.ArgumentIndex(name);  // checked by Validate
    OPREG_CHECK_VALUE(i < args.size(), "[", op, "] output #", output, ": argument '", name,
                      "' was not passed");
    return args[i];
  };
  std::vector<int64_t> sizes;
  DType dtype = dtype_.value_or(DType::kFloat32);
  if (kind_ == Kind::kFromInts) {
    for (const std::string& name : args_) {
      const IValue& v = arg(name);
      if (v.isInt()) {
        sizes.push_back(v.toInt());
      } else {
        for (int64_t s : v.toIntList()) sizes.push_back(s);
      }
    }
    for (int64_t s : sizes) {
      OPREG_CHECK_VALUE(s >= 0, "[", op, "] output #", output, ": negative size ", s,
                        " from arguments ", absl::StrJoin(args_, ", "));
    }
  } else {
    const IValue& v = arg(args_[0]);
    OPREG_CHECK_VALUE(v.isTensor() && v.toTensor().defined(), "[", op, "] output #", output,
                      ": argument '", args_[0], "' must be a defined tensor");
    const Tensor& t = v.toTensor();
    sizes.assign(t.sizes().begin(), t.sizes().end());
    if (kind_ == Kind::kLike) {
      dtype = dtype_.value_or(t.dtype());
    } else {
      OPREG_CHECK_VALUE(!sizes.empty(), "[", op, "] output #", output, ": argument '", args_[0],
                        "' has no rows (it is 0-d)");
      sizes.back() = 1;
    }
  }
  if (divide_last_ != 1 || multiply_last_ != 1) {
    OPREG_CHECK_VALUE(!sizes.empty(), "[", op, "] output #", output,
                      ": a 0-d output has no last dimension to scale");
    OPREG_CHECK_VALUE(sizes.back() % divide_last_ == 0, "[", op, "] output #", output,
                      ": the last dimension of argument '", args_[0], "' (", sizes.back(),
                      ") must be divisible by ", divide_last_);
    sizes.back() = sizes.back() / divide_last_ * multiply_last_;
  }
  if (last_from_) {
    OPREG_CHECK_VALUE(!sizes.empty(), "[", op, "] output #", output,
                      ": a 0-d output has no last dimension to set");
    sizes.back() = arg(*last_from_).toInt();
    OPREG_CHECK_VALUE(sizes.back() >= 0, "[", op, "] output #", output, ": argument '", *last_from_,
                      "' is negative (", sizes.back(), ")");
  }
  return empty(sizes, dtype, Device::meta());
}

}  // namespace opreg
