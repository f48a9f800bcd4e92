#include "opreg/dispatch/run_meta_function.h"

#include <algorithm>

#include "opreg/core/error.h"
#include "opreg/core/recycled_tensors.h"
#include "opreg/core/tensor_factories.h"

#include "checked_once_scope.h"

namespace opreg {
namespace {

// A meta tensor of `t`'s layout: from `scope`'s recycled objects when there is a scope.
Tensor MetaLike(const Tensor& t, RecycleScope* scope) {
  if (!t.defined() || t.device().type == DeviceType::kMeta) return t;
  if (scope != nullptr) {
    return scope->FromBlob(nullptr, t.sizes(), t.strides(), t.dtype(), Device::meta(), nullptr,
                           nullptr);
  }
  return empty_strided(t.sizes(), t.strides(), t.dtype(), Device::meta());
}

IValue ToMetaIn(const IValue& v, RecycleScope* scope) {
  switch (v.tag()) {
    case IValue::Tag::kTensor:
      return IValue(MetaLike(v.toTensor(), scope));
    case IValue::Tag::kTensorList: {
      std::vector<Tensor> out;
      for (const Tensor& t : v.toTensorList()) out.push_back(MetaLike(t, scope));
      return IValue(std::move(out));
    }
    case IValue::Tag::kOptionalTensorList: {
      std::vector<std::optional<Tensor>> out;
      for (const auto& t : v.toOptionalTensorList()) {
        out.push_back(t ? std::optional<Tensor>(MetaLike(*t, scope)) : std::nullopt);
      }
      return IValue(std::move(out));
    }
    default:
      return v;
  }
}

}  // namespace

IValue ToMeta(const IValue& v) { return ToMetaIn(v, nullptr); }

Stack RunMetaFunction(const OperatorHandle& op, const Stack& arguments) {
  return RunMetaFunction(op, arguments.data(), arguments.size());
}

Stack RunMetaFunction(const OperatorHandle& op, const IValue* arguments, size_t n) {
  return internal::RunMetaFunctionFor(op, arguments, n, nullptr);
}

namespace internal {

Stack RunMetaFunctionFor(const OperatorHandle& op, const IValue* arguments, size_t n,
                         CheckedOnceScope* once) {
  const KernelFunction* meta = op.entry().kernel(DispatchKey::kMeta);
  OPREG_CHECK_NOT_IMPLEMENTED(
      meta != nullptr, "[", op.operator_name().str(),
      "] has no meta function: register a Meta kernel for it (it computes the outputs' sizes and "
      "dtypes from meta tensors), so that its outputs can be allocated before it runs");
  // Declared before the stack: the meta copies go back to the cache after the stack is gone (a
  // copy the meta function returned, or kept, is not recycled).
  RecycleScope meta_copies(RecyclePool::kOwned);
  Stack stack;
  stack.reserve(n);
  for (size_t i = 0; i < n; ++i) stack.push_back(ToMetaIn(arguments[i], &meta_copies));
  if (once != nullptr) once->BeginMeta(stack.data(), stack.size());
  meta->CallBoxed(op, &stack);
  if (once != nullptr) once->EndMeta(stack.data(), stack.size());
  const FunctionSchema& schema = op.schema();
  OPREG_CHECK(stack.size() == schema.returns().size(), "[", op.operator_name().str(),
              "] the meta function returned ", stack.size(), " values but the schema declares ",
              schema.returns().size());
  for (size_t i = 0; i < stack.size(); ++i) {
    if (schema.returns()[i].type()->kind() == TypeKind::kTensor) {
      OPREG_CHECK(stack[i].isTensor() && stack[i].toTensor().defined(), "[",
                  op.operator_name().str(), "] the meta function's return #", i,
                  " is not a tensor");
    }
  }
  return stack;
}

}  // namespace internal

bool HasDataDependentOutput(const OpDefinition& def) {
  return std::any_of(def.tags.begin(), def.tags.end(), [](const std::string& t) {
    return t == "dynamic_output_shape" || t == "data_dependent_output";
  });
}

}  // namespace opreg
