// KernelFunction: one registered kernel, callable boxed (through a Stack) and, when it was
// registered from a C++ function, unboxed (a direct call through a function pointer).
//
// Every kernel is callable boxed: an unboxed kernel gets a generated wrapper that converts the
// Stack's IValues into its parameters and pushes its results. A typed call whose C++ signature
// is exactly the kernel's takes the unboxed path; any other call is boxed.
//
// Ownership: a KernelFunction owns its functor (lambda, std::function) through a shared_ptr;
// copies share it. Thread safety: calling is safe from any thread if the functor is.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "opreg/core/ivalue.h"
#include "opreg/dispatch/kernel_traits.h"
#include "opreg/dispatch/output_spec.h"

namespace opreg {

class OperatorHandle;

// The exact C++ function type of an unboxed kernel (or of a typed call), by identity.
class CppSignature {
 public:
  template <class F>
  static CppSignature Of() {
    return CppSignature(&Tag<F>::id, &Name<F>);
  }
  bool operator==(const CppSignature& o) const { return id_ == o.id_; }
  bool operator!=(const CppSignature& o) const { return id_ != o.id_; }
  const void* id() const { return id_; }
  // The demangled function type: "opreg::Tensor (opreg::Tensor const&, long)".
  std::string name() const { return name_(); }

 private:
  template <class F>
  struct Tag {
    static constexpr char id = 0;
  };
  template <class F>
  static std::string Name();
  CppSignature(const void* id, std::string (*name)()) : id_(id), name_(name) {}

  const void* id_;
  std::string (*name_)();
};

namespace detail {
std::string Demangle(const char* mangled);
}  // namespace detail

template <class F>
std::string CppSignature::Name() {
  return detail::Demangle(typeid(F).name());
}

namespace detail {

template <class F>
struct FunctionTraits : FunctionTraits<decltype(&F::operator())> {};
template <class R, class... Args>
struct FunctionTraits<R (*)(Args...)> {
  using Return = R;
  using Signature = R(Args...);
};
template <class R, class... Args>
struct FunctionTraits<R(Args...)> : FunctionTraits<R (*)(Args...)> {};
template <class C, class R, class... Args>
struct FunctionTraits<R (C::*)(Args...) const> : FunctionTraits<R (*)(Args...)> {};
template <class C, class R, class... Args>
struct FunctionTraits<R (C::*)(Args...)> : FunctionTraits<R (*)(Args...)> {};

// What a kernel's result is held as while the stack is popped: references become values.
template <class R>
struct ReturnValueOf {
  using type = std::decay_t<R>;
};
template <class... Ts>
struct ReturnValueOf<std::tuple<Ts...>> {
  using type = std::tuple<std::decay_t<Ts>...>;
};
template <class R>
using ReturnValue = typename ReturnValueOf<R>::type;

// Calls the kernel stored behind `functor` (a function pointer or a heap functor).
template <class F, bool kIsFnPtr, class R, class... Args>
R Invoke(void* functor, Args... args) {
  if constexpr (kIsFnPtr) {
    return reinterpret_cast<F>(functor)(std::forward<Args>(args)...);
  } else {
    return (*static_cast<F*>(functor))(std::forward<Args>(args)...);
  }
}

// The generated boxed wrapper: converts the last sizeof...(Args) stack entries, calls the
// kernel, replaces them with its results.
template <class F, bool kIsFnPtr, class R, class... Args, size_t... Is>
void CallUnboxedFromStack(void* functor, const OperatorHandle& op, Stack* stack,
                          std::index_sequence<Is...>) {
  constexpr size_t n = sizeof...(Args);
  const size_t first = stack->size() - n;
  std::tuple<typename ArgTraits<std::decay_t<Args>>::Storage...> storage(
      ArgTraits<std::decay_t<Args>>::FromIValue((*stack)[first + Is], ArgSite{&op, Is})...);
  if constexpr (std::is_void_v<R>) {
    Invoke<F, kIsFnPtr, R, Args...>(functor, std::get<Is>(storage)...);
    stack->resize(first);
  } else {
    // A value, not a reference: a returned Tensor& may refer into the stack popped below.
    ReturnValue<R> result = Invoke<F, kIsFnPtr, R, Args...>(functor, std::get<Is>(storage)...);
    stack->resize(first);
    ReturnTraits<ReturnValue<R>>::Push(std::move(result), stack);
  }
}

// Return types that are references (`Tensor&`, `std::tuple<Tensor&, Tensor&>`).
template <class R>
constexpr bool kIsTensorRef = std::is_same_v<R, Tensor&> || std::is_same_v<R, const Tensor&>;
template <class R>
struct ReturnsReferences : std::bool_constant<kIsTensorRef<R>> {};
template <class... Ts>
struct ReturnsReferences<std::tuple<Ts...>> : std::bool_constant<(kIsTensorRef<Ts> && ...)> {};
template <class R>
constexpr bool kReturnsReferences = ReturnsReferences<R>::value && !std::is_void_v<R>;

template <class A>
void CollectMutableTensor(A&& a, std::vector<Tensor*>* out) {
  if constexpr (std::is_same_v<A&&, Tensor&>) out->push_back(&a);
}

template <class R>
struct TieImpl;
template <>
struct TieImpl<Tensor&> {
  static Tensor& Get(const std::vector<Tensor*>& m) { return *m[0]; }
};
template <>
struct TieImpl<const Tensor&> {
  static const Tensor& Get(const std::vector<Tensor*>& m) { return *m[0]; }
};
template <class... Ts>
struct TieImpl<std::tuple<Ts...>> {
  static std::tuple<Ts...> Get(const std::vector<Tensor*>& m) {
    return Tie(m, std::index_sequence_for<Ts...>{});
  }
  template <size_t... Is>
  static std::tuple<Ts...> Tie(const std::vector<Tensor*>& m, std::index_sequence<Is...>) {
    return std::tuple<Ts...>(*m[Is]...);
  }
};
template <class R>
R TieReferences(const std::vector<Tensor*>& mutables) {
  return TieImpl<R>::Get(mutables);
}

// Checks that a boxed call left enough arguments on the stack for the wrapper (throws naming the
// op when not).
void CheckBoxedArgumentCount(const OperatorHandle& op, const Stack& stack, size_t expected);

template <class F, bool kIsFnPtr, class R, class... Args>
void BoxedWrapper(void* functor, const OperatorHandle& op, Stack* stack) {
  // The check inline, its error out of line: every boxed call of a typed kernel comes here.
  if (OPREG_UNLIKELY(stack->size() < sizeof...(Args))) {
    CheckBoxedArgumentCount(op, *stack, sizeof...(Args));
  }
  CallUnboxedFromStack<F, kIsFnPtr, R, Args...>(functor, op, stack,
                                                std::index_sequence_for<Args...>{});
}

template <class R, class... Args>
struct UnboxedFactory;
template <class R, class... Args>
struct UnboxedFactory<R(Args...)> {
  template <class F, bool kIsFnPtr>
  static void* Caller() {
    R (*fn)(void*, Args...) = &Invoke<F, kIsFnPtr, R, Args...>;
    return reinterpret_cast<void*>(fn);
  }
  template <class F, bool kIsFnPtr>
  static void (*Boxed())(void*, const OperatorHandle&, Stack*) {
    return &BoxedWrapper<F, kIsFnPtr, R, Args...>;
  }
  static InferredSignature Infer() { return InferSignature<R, Args...>(); }
};

}  // namespace detail

class KernelFunction {
 public:
  using BoxedFn = void (*)(const OperatorHandle&, Stack*);
  using BoxedFunctor = std::function<void(const OperatorHandle&, Stack*)>;

  // An invalid kernel (valid() is false).
  KernelFunction() = default;

  // A boxed kernel: pops the op's arguments from the stack and pushes its returns.
  static KernelFunction FromBoxed(BoxedFn fn);
  static KernelFunction FromBoxedFunctor(BoxedFunctor fn);

  // An unboxed kernel from a function pointer, a lambda or a functor object. Its C++
  // signature is recorded for typed calls and its schema types for checking against the op.
  template <class F>
  static KernelFunction FromUnboxed(F&& f) {
    using D = std::decay_t<F>;
    using Sig = typename detail::FunctionTraits<D>::Signature;
    constexpr bool kIsFnPtr = std::is_pointer_v<D>;
    KernelFunction k;
    if constexpr (kIsFnPtr) {
      k.functor_ = reinterpret_cast<void*>(f);
    } else {
      auto owned = std::make_shared<D>(std::forward<F>(f));
      k.functor_ = owned.get();
      k.owner_ = std::move(owned);
    }
    k.boxed_ = detail::UnboxedFactory<Sig>::template Boxed<D, kIsFnPtr>();
    k.unboxed_ = detail::UnboxedFactory<Sig>::template Caller<D, kIsFnPtr>();
    k.signature_ = CppSignature::Of<Sig>();
    k.inferred_ = std::make_shared<const InferredSignature>(detail::UnboxedFactory<Sig>::Infer());
    return k;
  }

  bool valid() const { return boxed_ != nullptr; }
  bool has_unboxed() const { return unboxed_ != nullptr; }
  // The C++ signature of an unboxed kernel; nullopt for boxed ones.
  const std::optional<CppSignature>& cpp_signature() const { return signature_; }
  // The schema types inferred from an unboxed kernel's signature; null for boxed ones.
  const InferredSignature* inferred_signature() const { return inferred_.get(); }

  void CallBoxed(const OperatorHandle& op, Stack* stack) const { boxed_(functor_, op, stack); }

  // The output specs a Meta kernel computes its shapes from (Library::def_functional), for
  // bindings that compute the same shapes elsewhere (opreg.torch's symbolic torch fakes); null
  // for every other kernel. Shared, immutable once set.
  const std::vector<OutputSpec>* output_specs() const { return output_specs_.get(); }
  KernelFunction& WithOutputSpecs(std::vector<OutputSpec> specs) {
    output_specs_ = std::make_shared<const std::vector<OutputSpec>>(std::move(specs));
    return *this;
  }

  // A typed call: unboxed when the kernel's signature is exactly R(Args...), else boxed.
  template <class R, class... Args>
  R Call(const OperatorHandle& op, Args&&... args) const {
    if (unboxed_ != nullptr && signature_->id() == CppSignature::Of<R(Args...)>().id()) {
      return reinterpret_cast<R (*)(void*, Args...)>(unboxed_)(functor_,
                                                               std::forward<Args>(args)...);
    }
    return CallBoxedFromTyped<R, Args...>(op, std::forward<Args>(args)...);
  }

 private:
  template <class R, class... Args>
  R CallBoxedFromTyped(const OperatorHandle& op, Args&&... args) const {
    Stack stack;
    stack.reserve(sizeof...(Args));
    (stack.push_back(ArgTraits<std::decay_t<Args>>::ToIValue(args)), ...);
    CallBoxed(op, &stack);
    if constexpr (detail::kReturnsReferences<R>) {
      // PyTorch's rule for out and in-place kernels: returned references are the caller's
      // mutable Tensor& arguments, in order (checked against what the kernel returned).
      std::vector<Tensor*> mutables;
      (detail::CollectMutableTensor(std::forward<Args>(args), &mutables), ...);
      CheckReferenceReturns(op, stack, mutables, ReturnTraits<R>::kCount);
      return detail::TieReferences<R>(mutables);
    } else if constexpr (!std::is_void_v<R>) {
      CheckReturnCount(op, stack, ReturnTraits<R>::kCount);
      return ReturnTraits<R>::Pop(&op, &stack, 0);
    }
  }
  static void CheckReferenceReturns(const OperatorHandle& op, const Stack& stack,
                                    const std::vector<Tensor*>& mutables, size_t expected);
  static void CheckReturnCount(const OperatorHandle& op, const Stack& stack, size_t expected);

  void* functor_ = nullptr;      // a function pointer, or the object owned by owner_
  std::shared_ptr<void> owner_;  // owns lambdas and std::functions
  void (*boxed_)(void*, const OperatorHandle&, Stack*) = nullptr;
  void* unboxed_ = nullptr;  // R (*)(void* functor, Args...)
  std::optional<CppSignature> signature_;
  std::shared_ptr<const InferredSignature> inferred_;
  std::shared_ptr<const std::vector<OutputSpec>> output_specs_;
};

}  // namespace opreg
