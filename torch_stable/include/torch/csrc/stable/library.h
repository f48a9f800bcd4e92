// opreg::torch_stable: <torch/csrc/stable/library.h>. STABLE_TORCH_LIBRARY(ns, m) /
// STABLE_TORCH_LIBRARY_FRAGMENT(ns, m) / STABLE_TORCH_LIBRARY_IMPL(ns, key, m) blocks with
// m.def(schema) and m.impl(name, TORCH_BOX(&kernel)). TORCH_BOX(&f) makes the boxed function
// `void(StableIValue* stack, uint64_t num_args, uint64_t num_outputs)` of a C++ kernel: it
// unboxes each argument by f's parameter type, calls f and boxes its result(s) into stack[0..].
//
// The blocks run while the library loads and register through the C shim; on opreg a failed
// registration is recorded (opreg::StaticRegistrationErrors, `opreg ops --load` prints it) and
// the block goes on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../headeronly/macros/Macros.h"
#include "../../headeronly/util/Exception.h"
#include "../../headeronly/util/HeaderOnlyArrayRef.h"
#include "../../headeronly/util/Metaprogramming.h"
#include "c/shim.h"
#include "macros.h"
#include "stableivalue_conversions.h"
#include "tensor.h"
#include "version.h"

namespace torch::stable::detail {

class StableLibrary final {
 public:
  enum class Kind { DEF, IMPL, FRAGMENT };

  StableLibrary(Kind kind, const char* ns, const char* k, const char* file, uint32_t line) {
    if (kind == Kind::IMPL) {
      aoti_torch_library_init_impl(ns, k, file, line, &lib_);
    } else if (kind == Kind::DEF) {
      aoti_torch_library_init_def(ns, file, line, &lib_);
    } else {
      aoti_torch_library_init_fragment(ns, file, line, &lib_);
    }
  }
  StableLibrary(const StableLibrary&) = delete;
  StableLibrary& operator=(const StableLibrary&) = delete;
  ~StableLibrary() { aoti_torch_delete_library_object(lib_); }

  StableLibrary& impl(const char* name, void (*fn)(StableIValue*, uint64_t, uint64_t)) {
    STABLE_TORCH_ERROR_CODE_CHECK(torch_library_impl(lib_, name, fn, TORCH_ABI_VERSION));
    return *this;
  }
  StableLibrary& def(const char* schema) {
    STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_library_def(lib_, schema));
    return *this;
  }

 private:
  TorchLibraryHandle lib_ = nullptr;
};

class StableTorchLibraryInit final {
 public:
  using InitFn = void(StableLibrary&);
  StableTorchLibraryInit(StableLibrary::Kind kind, InitFn* fn, const char* ns, const char* k,
                         const char* file, uint32_t line)
      : lib_(kind, ns, k, file, line) {
    fn(lib_);
  }

 private:
  StableLibrary lib_;
};

// What a parameter is unboxed as: views become owning values.
template <class T>
struct UnboxType {
  using type = T;
};
template <class T>
struct UnboxType<torch::headeronly::HeaderOnlyArrayRef<T>> {
  using type = std::vector<T>;
};
template <class T>
struct UnboxType<std::optional<torch::headeronly::HeaderOnlyArrayRef<T>>> {
  using type = std::optional<std::vector<T>>;
};
template <>
struct UnboxType<std::string_view> {
  using type = std::string;
};
template <class T>
using unbox_type_t = typename UnboxType<std::remove_cv_t<std::remove_reference_t<T>>>::type;

template <class... T, size_t... I>
std::tuple<T...> unbox_to_tuple_impl(StableIValue* stack, std::index_sequence<I...>) {
  return std::tuple<T...>(to<T>(stack[I])...);
}

template <class R, class Params, class F, F* func>
struct boxer_impl;

template <class R, class... P, class F, F* func>
struct boxer_impl<R, torch::headeronly::guts::typelist::typelist<P...>, F, func> {
  static void boxed_fn(StableIValue* stack, uint64_t num_args, uint64_t num_outputs) {
    STD_TORCH_CHECK(num_args == sizeof...(P), "Registered schema has ", num_args,
                    " args, but the kernel to box has ", sizeof...(P));
    std::tuple<unbox_type_t<P>...> args =
        unbox_to_tuple_impl<unbox_type_t<P>...>(stack, std::index_sequence_for<P...>());
    if constexpr (std::is_void_v<R>) {
      STD_TORCH_CHECK(num_outputs == 0, "Registered schema has ", num_outputs,
                      " outputs, but the kernel to box has 0");
      std::apply(func, args);
    } else if constexpr (IsTuple<R>::value) {
      STD_TORCH_CHECK(num_outputs == std::tuple_size_v<R>, "Registered schema has ", num_outputs,
                      " outputs, but the kernel to box has ", std::tuple_size_v<R>);
      R res = std::apply(func, args);
      BoxTuple(stack, res, std::make_index_sequence<std::tuple_size_v<R>>());
    } else {
      STD_TORCH_CHECK(num_outputs == 1, "Registered schema has ", num_outputs,
                      " outputs, but the kernel to box has 1");
      stack[0] = from(std::apply(func, args));
    }
  }

 private:
  template <class T>
  struct IsTuple : std::false_type {};
  template <class... T>
  struct IsTuple<std::tuple<T...>> : std::true_type {};
  template <class Tup, size_t... I>
  static void BoxTuple(StableIValue* stack, const Tup& res, std::index_sequence<I...>) {
    ((stack[I] = from(std::get<I>(res))), ...);
  }
};

template <class F, F* func>
struct boxer {
  using Traits = torch::headeronly::guts::infer_function_traits_t<F>;
  static void boxed_fn(StableIValue* stack, uint64_t num_args, uint64_t num_outputs) {
    boxer_impl<typename Traits::return_type, typename Traits::parameter_types, F,
               func>::boxed_fn(stack, num_args, num_outputs);
  }
};

}  // namespace torch::stable::detail

#define TORCH_BOX(func)                                                                       \
  torch::stable::detail::boxer<std::remove_pointer_t<std::remove_reference_t<decltype(func)>>, \
                               (func)>::boxed_fn

#define STABLE_TORCH_LIBRARY(ns, m)                                                          \
  static void STABLE_TORCH_LIBRARY_init_##ns(torch::stable::detail::StableLibrary&);         \
  static const torch::stable::detail::StableTorchLibraryInit                                 \
      STABLE_TORCH_LIBRARY_static_init_##ns(torch::stable::detail::StableLibrary::Kind::DEF, \
                                            &STABLE_TORCH_LIBRARY_init_##ns,                 \
                                            C10_STRINGIZE(ns), nullptr, __FILE__, __LINE__);  \
  void STABLE_TORCH_LIBRARY_init_##ns(torch::stable::detail::StableLibrary& m)

#define STABLE_TORCH_LIBRARY_FRAGMENT(ns, m) _STABLE_TORCH_LIBRARY_FRAGMENT(ns, m, C10_UID)
#define _STABLE_TORCH_LIBRARY_FRAGMENT(ns, m, uid)                                          \
  static void C10_CONCATENATE(STABLE_TORCH_LIBRARY_FRAGMENT_init_##ns##_,                   \
                              uid)(torch::stable::detail::StableLibrary&);                  \
  static const torch::stable::detail::StableTorchLibraryInit C10_CONCATENATE(               \
      STABLE_TORCH_LIBRARY_FRAGMENT_static_init_##ns##_, uid)(                              \
      torch::stable::detail::StableLibrary::Kind::FRAGMENT,                                 \
      &C10_CONCATENATE(STABLE_TORCH_LIBRARY_FRAGMENT_init_##ns##_, uid), C10_STRINGIZE(ns), \
      nullptr, __FILE__, __LINE__);                                                         \
  void C10_CONCATENATE(STABLE_TORCH_LIBRARY_FRAGMENT_init_##ns##_,                          \
                       uid)(torch::stable::detail::StableLibrary & m)

#define STABLE_TORCH_LIBRARY_IMPL(ns, k, m) _STABLE_TORCH_LIBRARY_IMPL(ns, k, m, C10_UID)
#define _STABLE_TORCH_LIBRARY_IMPL(ns, k, m, uid)                                         \
  static void C10_CONCATENATE(STABLE_TORCH_LIBRARY_IMPL_init_##ns##_##k##_,               \
                              uid)(torch::stable::detail::StableLibrary&);                \
  static const torch::stable::detail::StableTorchLibraryInit C10_CONCATENATE(             \
      STABLE_TORCH_LIBRARY_IMPL_static_init_##ns##_##k##_, uid)(                          \
      torch::stable::detail::StableLibrary::Kind::IMPL,                                   \
      &C10_CONCATENATE(STABLE_TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid),                \
      C10_STRINGIZE(ns), C10_STRINGIZE(k), __FILE__, __LINE__);                           \
  void C10_CONCATENATE(STABLE_TORCH_LIBRARY_IMPL_init_##ns##_##k##_,                      \
                       uid)(torch::stable::detail::StableLibrary & m)
