// torch::Library and the TORCH_LIBRARY macros over opreg's registry: a libtorch-style binding
// file (`TORCH_LIBRARY(ns, m) { m.def("..."); m.impl("op", torch::kCUDA, &fn); }`) registers
// its ops and kernels with opreg's dispatcher, unchanged.
//
// Supported: def(schema), def(schema, tags), def(schema_or_name, fn), impl(name, fn),
// impl(name, key_or_device_type, fn), impl(name, torch::dispatch(key, fn)), TORCH_FN, fallback
// (in `_` IMPL blocks), set_python_module / impl_abstract_pystub (recorded nowhere: opreg has no
// Python fake kernels to find). Dispatch keys: CPU, CUDA, Meta, CompositeExplicitAutograd
// (and its NonFunctional form) and CompositeImplicitAutograd; TORCH_LIBRARY_IMPL with any other
// key fails to compile with a message naming the key, and impl() with one is a registration
// error naming op and key.
//
// Errors, ownership, thread safety: those of opreg::Library (library.h in opreg/dispatch): in
// a static block every def/impl stands alone, a failure is recorded with its file:line and the
// block goes on; OPREG_STRICT_REGISTRATION=1 makes the first failure fatal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "opreg/dispatch/library.h"
#include "opreg/torch_compat/device.h"
#include "opreg/torch_compat/kernel_traits.h"
#include "opreg/torch_compat/macros.h"

namespace c10 {

// The dispatch keys a kernel library names. Only the first five have opreg counterparts.
enum class DispatchKey : uint8_t {
  CPU,
  CUDA,
  Meta,
  CompositeExplicitAutograd,
  CompositeImplicitAutograd,
  CompositeExplicitAutogradNonFunctional,
  Autograd,
  AutogradCPU,
  AutogradCUDA,
  AutocastCPU,
  AutocastCUDA,
  BackendSelect,
  Python,
  FuncTorchBatched,
  PrivateUse1,
  HIP,
  XPU,
};

// "CPU", "CompositeExplicitAutograd", ...
const char* toString(DispatchKey key);
constexpr bool OpregSupportsDispatchKey(DispatchKey key) {
  return key == DispatchKey::CPU || key == DispatchKey::CUDA || key == DispatchKey::Meta ||
         key == DispatchKey::CompositeExplicitAutograd ||
         key == DispatchKey::CompositeImplicitAutograd ||
         key == DispatchKey::CompositeExplicitAutogradNonFunctional;
}
// opreg's key; nullopt for keys opreg does not have.
std::optional<::opreg::DispatchKey> ToOpregDispatchKey(DispatchKey key);
std::optional<::opreg::DispatchKey> ToOpregDispatchKey(DeviceType type);

}  // namespace c10

namespace at {

// torch's op tags (tags.yaml), passed to def() as `{at::Tag::needs_fixed_stride_order}`.
enum class Tag : uint8_t {
  core,
  cudagraph_unsafe,
  data_dependent_output,
  dynamic_output_shape,
  flexible_layout,
  generated,
  inplace_view,
  maybe_aliasing_or_mutating,
  needs_contiguous_strides,
  needs_exact_strides,
  needs_fixed_stride_order,
  nondeterministic_bitwise,
  nondeterministic_seeded,
  pointwise,
  pt2_compliant_tag,
  view_copy,
};
const char* toString(Tag tag);

}  // namespace at

namespace torch {

using ::c10::DispatchKey;

// A kernel bound to a key: torch::dispatch(torch::kCUDA, &fn).
template <class F>
struct DispatchedKernel {
  std::optional<::opreg::DispatchKey> key;
  const char* key_name;
  F fn;
};
template <class F>
DispatchedKernel<std::decay_t<F>> dispatch(::c10::DispatchKey key, F&& fn) {
  return {::c10::ToOpregDispatchKey(key), ::c10::toString(key), std::forward<F>(fn)};
}
template <class F>
DispatchedKernel<std::decay_t<F>> dispatch(::c10::DeviceType type, F&& fn) {
  return {::c10::ToOpregDispatchKey(type), "device type", std::forward<F>(fn)};
}

class Library {
 public:
  using Kind = ::opreg::Library::Kind;
  static constexpr Kind DEF = ::opreg::Library::DEF;
  static constexpr Kind FRAGMENT = ::opreg::Library::FRAGMENT;
  static constexpr Kind IMPL = ::opreg::Library::IMPL;

  explicit Library(::opreg::Library& lib) : lib_(lib) {}
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The opreg library underneath (for opreg-only registrations such as def_functional).
  ::opreg::Library& opreg() { return lib_; }

  Library& def(const char* schema, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) {
    lib_.def(schema, {}, file, line);
    return *this;
  }
  Library& def(const std::string& schema, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) {
    return def(schema.c_str(), file, line);
  }
  Library& def(const char* schema, const std::vector<at::Tag>& tags,
               const char* file = __builtin_FILE(), int line = __builtin_LINE());
  template <class F,
            std::enable_if_t<!std::is_same_v<std::decay_t<F>, std::vector<at::Tag>>, int> = 0>
  Library& def(const char* schema_or_name, F&& fn, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) {
    lib_.def(schema_or_name, std::forward<F>(fn), file, line);
    return *this;
  }

  template <class F>
  Library& impl(const char* name, F&& fn, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) {
    lib_.impl(name, std::forward<F>(fn), file, line);
    return *this;
  }
  template <class F>
  Library& impl(const char* name, DispatchedKernel<F> kernel, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) {
    return ImplFor(name, kernel.key, kernel.key_name, std::move(kernel.fn), file, line);
  }
  template <class F>
  Library& impl(const char* name, ::c10::DispatchKey key, F&& fn,
                const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return ImplFor(name, ::c10::ToOpregDispatchKey(key), ::c10::toString(key), std::forward<F>(fn),
                   file, line);
  }
  template <class F>
  Library& impl(const char* name, ::c10::DeviceType type, F&& fn,
                const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return ImplFor(name, ::c10::ToOpregDispatchKey(type), "device type", std::forward<F>(fn), file,
                   line);
  }
  template <class F>
  Library& fallback(F&& fn, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    lib_.fallback(std::forward<F>(fn), file, line);
    return *this;
  }
  // Where torch would import Python fake kernels from; opreg has none to import.
  Library& set_python_module(const char* /*module*/, const char* /*file*/ = nullptr) {
    return *this;
  }
  Library& impl_abstract_pystub(const char* /*module*/, const char* /*file*/ = nullptr) {
    return *this;
  }

  template <class CurClass, class... OpregArgs>
  Library& class_(OpregArgs&&...) {
    static_assert(::c10::OpregTorchCompatUnsupported<CurClass, OpregArgs...>::value,
                  "torch::Library::class_ (TorchScript custom classes) is outside opreg's "
                  "torch_compat subset (see docs/torch_compat.md); use opreg::Library::"
                  "register_class and opreg::CustomClassHolder");
    return *this;
  }

 private:
  template <class F>
  Library& ImplFor(const char* name, std::optional<::opreg::DispatchKey> key, const char* key_name,
                   F&& fn, const char* file, int line) {
    if (!key) {
      RecordUnsupportedKey(name, key_name, file, line);
      return *this;
    }
    lib_.impl(name, *key, std::forward<F>(fn), file, line);
    return *this;
  }
  void RecordUnsupportedKey(const char* name, const char* key_name, const char* file, int line);

  ::opreg::Library& lib_;
};

namespace detail {
// Runs a TORCH_LIBRARY* block body on the opreg library of its static registration.
template <void (*kBody)(::torch::Library&)>
void RunBlock(::opreg::Library& lib) {
  ::torch::Library m(lib);
  kBody(m);
}
}  // namespace detail

}  // namespace torch

// TORCH_FN(f): libtorch's compile-time function pointer; a plain pointer here.
#define TORCH_FN(func) (&(func))

#define OPREG_TORCH_LIBRARY_BLOCK_(kind, ns, key, m, uid)                                         \
  static void C10_CONCATENATE(TORCH_LIBRARY_body_, uid)(::torch::Library&);                       \
  static const ::opreg::detail::LibraryInit C10_CONCATENATE(TORCH_LIBRARY_static_init_, uid)(     \
      ::opreg::Library::kind,                                                                     \
      &::torch::detail::RunBlock<&C10_CONCATENATE(TORCH_LIBRARY_body_, uid)>, #ns, key, __FILE__, \
      __LINE__, "TORCH_LIBRARY");                                                                 \
  void C10_CONCATENATE(TORCH_LIBRARY_body_, uid)(::torch::Library & m)

// The one block that defines the ops of namespace `ns`.
#define TORCH_LIBRARY(ns, m) OPREG_TORCH_LIBRARY_BLOCK_(DEF, ns, std::nullopt, m, __COUNTER__)
// More definitions for namespace `ns`.
#define TORCH_LIBRARY_FRAGMENT(ns, m) \
  OPREG_TORCH_LIBRARY_BLOCK_(FRAGMENT, ns, std::nullopt, m, __COUNTER__)
// Kernels of namespace `ns` (`_`: fallbacks) for dispatch key `k`.
#define TORCH_LIBRARY_IMPL(ns, k, m)                                                        \
  static_assert(::c10::OpregSupportsDispatchKey(::c10::DispatchKey::k),                     \
                "TORCH_LIBRARY_IMPL: dispatch key " #k                                      \
                " has no opreg counterpart (opreg has "                                     \
                "CPU, CUDA, Meta, CompositeExplicitAutograd, CompositeImplicitAutograd)");  \
  OPREG_TORCH_LIBRARY_BLOCK_(IMPL, ns, ::c10::ToOpregDispatchKey(::c10::DispatchKey::k), m, \
                             __COUNTER__)
