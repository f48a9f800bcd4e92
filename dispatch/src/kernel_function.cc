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

}  // namespace opreg
