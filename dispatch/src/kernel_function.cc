#include "opreg/dispatch/kernel_function.h"

#include "opreg/core/error.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {
namespace {

void CallBoxedFnPtr(void* functor, const OperatorHandle& op, Stack* stack) {
  reinterpret_cast<KernelFunction::BoxedFn>(functor)(op, stack);
}

void CallBoxedFunctor(void* functor, const OperatorHandle& op, Stack* stack) {
  (*static_cast<KernelFunction::BoxedFunctor*>(functor))(op, stack);
}

}  // namespace

KernelFunction KernelFunction::FromBoxed(BoxedFn fn) {
  OPREG_CHECK(fn != nullptr, "KernelFunction::FromBoxed: null function");
  KernelFunction k;
  k.functor_ = reinterpret_cast<void*>(fn);
  k.boxed_ = &CallBoxedFnPtr;
  return k;
}

KernelFunction KernelFunction::FromBoxedFunctor(BoxedFunctor fn) {
  OPREG_CHECK(static_cast<bool>(fn), "KernelFunction::FromBoxedFunctor: empty function");
  KernelFunction k;
  auto owned = std::make_shared<BoxedFunctor>(std::move(fn));
  k.functor_ = owned.get();
  k.owner_ = std::move(owned);
  k.boxed_ = &CallBoxedFunctor;
  return k;
}

void KernelFunction::CheckReturnCount(const OperatorHandle& op, const Stack& stack,
                                      size_t expected) {
  OPREG_CHECK(stack.size() == expected, "[", op.operator_name().str(), "] the kernel returned ",
              stack.size(), " values but the caller expects ", expected);
}

void KernelFunction::CheckReferenceReturns(const OperatorHandle& op, const Stack& stack,
                                           const std::vector<Tensor*>& mutables, size_t expected) {
  OPREG_CHECK(mutables.size() >= expected, "[", op.operator_name().str(),
              "] a typed call returning references needs ", expected,
              " mutable Tensor& arguments to refer to, but has ", mutables.size());
  OPREG_CHECK(stack.empty() || stack.size() == expected, "[", op.operator_name().str(),
              "] the kernel returned ", stack.size(), " values but the caller expects ", expected);
  for (size_t i = 0; i < stack.size(); ++i) {
    OPREG_CHECK(stack[i].isTensor() && stack[i].toTensor().is_alias_of(*mutables[i]), "[",
                op.operator_name().str(), "] return #", i,
                " is not the tensor of the caller's mutable argument it must refer to");
  }
}

}  // namespace opreg
