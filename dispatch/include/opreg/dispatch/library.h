// Library and the OPREG_LIBRARY macros: how kernel libraries declare and implement ops.
//
//   OPREG_LIBRARY(mylib, m) {
//     m.def("rms_norm(Tensor input, Tensor weight, float eps) -> Tensor");
//     m.def("rms_norm.out(Tensor input, Tensor weight, float eps, *, Tensor(a!) out) ->
//     Tensor(a!)");
//   }
//   OPREG_LIBRARY_IMPL(mylib, CPU, m) { m.impl("rms_norm", &rms_norm_cpu); }
//
// One OPREG_LIBRARY (kind DEF) per namespace; any number of OPREG_LIBRARY_FRAGMENT (more defs)
// and OPREG_LIBRARY_IMPL (kernels for one key) blocks, in any translation unit. The blocks run
// during static initialization (when the shared library is loaded). A registration error there
// does not abort the process, and it costs nothing but itself: each def/impl/... call of a
// block stands alone, so a failed call is logged on the `opreg` logger, kept (with the call's
// file:line) in StaticRegistrationErrors(), and the block goes on with its next call. With
// OPREG_STRICT_REGISTRATION=1 in the environment the first such error is fatal instead: its
// message goes to stderr and the process aborts while the library loads.
//
// A Library used directly throws opreg::Error on a bad registration (PyTorch's wording, plus the
// block's location). Destroying a Library undoes everything it registered, in reverse order.
// Every registration records the file:line of the call that made it.
//
// Thread safety: a Library object is not synchronized (use one per thread); registering
// through different Library objects concurrently, and while other threads call ops, is safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "opreg/dispatch/dispatcher.h"
#include "opreg/dispatch/output_spec.h"

namespace opreg {

namespace detail {
class LibraryInit;
}  // namespace detail

class Library {
 public:
  enum Kind { DEF, FRAGMENT, IMPL };

  // `ns` "_" is the wildcard namespace of IMPL blocks that register fallbacks.
  // `macro` names the block's macro family in error messages ("TORCH_LIBRARY" for blocks of
  // opreg::torch_compat): "<macro>[_FRAGMENT|_IMPL] block at file:line". A string literal.
  Library(Kind kind, std::string ns, std::optional<DispatchKey> key, const char* file,
          uint32_t line, const char* macro = "OPREG_LIBRARY");
  Library(Library&&) = default;
  Library& operator=(Library&&) = delete;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library();

  // Defines an op from its schema (namespace optional; if given it must be this library's).
  Library& def(std::string_view schema, std::vector<std::string> tags = {},
               const char* file = __builtin_FILE(), int line = __builtin_LINE());
  // Defines an op and registers `fn` as its kernel (for this block's key, or every backend).
  // With a bare name, the schema is inferred from fn's C++ signature (`_0, _1, ...`).
  template <class F>
  Library& def(std::string_view schema_or_name, F&& fn, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) {
    KernelFunction k = MakeKernel(std::forward<F>(fn));
    return DefWithKernel(schema_or_name, std::move(k), SourceLocation{file, line});
  }

  // Registers a kernel for `name` (`op` or `op.overload`): a function pointer, a lambda, a
  // boxed function `void(const OperatorHandle&, Stack*)` or a KernelFunction. The key is this
  // block's, or none (every backend, CompositeImplicit) outside IMPL blocks.
  template <class F>
  Library& impl(std::string_view name, F&& fn, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) {
    return ImplKernel(name, std::nullopt, MakeKernel(std::forward<F>(fn)),
                      SourceLocation{file, line});
  }
  // As above, for an explicit key (`m.impl("rms_norm", kCUDA, &rms_norm_cuda)`). It must agree
  // with an IMPL block's key.
  template <class F>
  Library& impl(std::string_view name, DispatchKey key, F&& fn, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) {
    return ImplKernel(name, key, MakeKernel(std::forward<F>(fn)), SourceLocation{file, line});
  }
  // A boxed fallback for every op without a kernel for this block's key. Only in
  // OPREG_LIBRARY_IMPL(_, KEY, m) blocks.
  template <class F>
  Library& fallback(F&& fn, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return Fallback(MakeKernel(std::forward<F>(fn)), SourceLocation{file, line});
  }

  // Registers a custom class type `ns.Name` (also known as __torch__.torch.classes.ns.Name)
  // that schemas may mention; its C++ objects derive from CustomClassHolder.
  Library& register_class(std::string_view name, const char* file = __builtin_FILE(),
                          int line = __builtin_LINE());
  // Declares the arguments of an op that live in symmetric memory (see schema_rules.h).
  Library& register_symm_mem_args(std::string_view op, std::vector<std::string> names,
                                  SymmMemRequirement requirement = SymmMemRequirement::kRequired,
                                  const char* file = __builtin_FILE(), int line = __builtin_LINE());
  // Links `functional` to `out_op`, whose out arguments are named (vLLM's positional Tensor!).
  Library& link_out_variant(std::string_view functional, std::string_view out_op,
                            std::vector<std::string> out_arguments,
                            const char* file = __builtin_FILE(), int line = __builtin_LINE());
  // Defines the functional op of an out variant (`f.out` -> `f`) and registers `meta_fn`, which
  // computes its outputs' shapes and dtypes, as its Meta kernel.
  template <class F>
  Library& synthesize_functional(std::string_view out_op, F&& meta_fn,
                                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return SynthesizeFunctional(out_op, MakeKernel(std::forward<F>(meta_fn)),
                                SourceLocation{file, line});
  }

  // A functional form of out op `out_op` in three lines' worth: defines `functional_schema`,
  // links it to `out_op` (whose written tensors `out_arguments` become its returns, in order),
  // and registers a Meta kernel computing each return from `outputs` (one OutputSpec per
  // return), so no Meta function is written by hand. Throws (or, in a static block, records)
  // kValue when an output spec names a missing argument or one of the wrong type, or the
  // count of specs differs from the returns. The out op's inputs are matched to the
  // functional's arguments by name, so the functional may take arguments only its outputs'
  // shapes use (the `topk` of `topk_softmax(Tensor gating_output, int topk, ...)`, whose out
  // op reads k from its outputs).
  Library& def_functional(std::string_view functional_schema, std::string_view out_op,
                          std::vector<std::string> out_arguments, std::vector<OutputSpec> outputs,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE());

  // A registration error found by code layered on Library (a compatibility surface that
  // cannot map a request): thrown like any other (kValue, with this block's context), or in a
  // static block recorded with file:line while the block goes on.
  Library& fail(std::string_view message, const char* file = __builtin_FILE(),
                int line = __builtin_LINE());

  // Makes this library behave as a static block's (OPREG_LIBRARY*): each later registration
  // call that fails is recorded in StaticRegistrationErrors() (or is fatal with
  // OPREG_STRICT_REGISTRATION=1) instead of thrown. For compatibility surfaces whose static
  // blocks reach opreg through a C ABI (opreg::torch_stable's STABLE_TORCH_LIBRARY).
  void RecordErrorsAsStaticBlock() { record_errors_ = true; }

  Kind kind() const { return kind_; }
  const std::string& ns() const { return ns_; }
  std::optional<DispatchKey> key() const { return key_; }
  const SourceLocation& where() const { return where_; }

 private:
  template <class F>
  static KernelFunction MakeKernel(F&& f) {
    using D = std::decay_t<F>;
    if constexpr (std::is_same_v<D, KernelFunction>) {
      return std::forward<F>(f);
    } else if constexpr (std::is_convertible_v<D, KernelFunction::BoxedFn>) {
      return KernelFunction::FromBoxed(f);
    } else if constexpr (std::is_invocable_r_v<void, D, const OperatorHandle&, Stack*> &&
                         !std::is_pointer_v<D>) {
      return KernelFunction::FromBoxedFunctor(std::forward<F>(f));
    } else {
      return KernelFunction::FromUnboxed(std::forward<F>(f));
    }
  }

  Library& DefWithKernel(std::string_view schema_or_name, KernelFunction kernel,
                         SourceLocation where);
  Library& ImplKernel(std::string_view name, std::optional<DispatchKey> key, KernelFunction kernel,
                      SourceLocation where);
  Library& Fallback(KernelFunction kernel, SourceLocation where);
  Library& SynthesizeFunctional(std::string_view out_op, KernelFunction meta, SourceLocation where);

  friend class detail::LibraryInit;
  // Runs one registration call. In a static block (record_errors_) its error is recorded with
  // `where` and the block goes on; elsewhere it propagates. Nested calls run bare, so one
  // mistake is one error.
  template <class Body>
  Library& Registration(const SourceLocation& where, Body&& body);

  // Throws the error with this block's context appended.
  void Check(const absl::Status& status) const;
  void Keep(absl::StatusOr<RegistrationHandle> handle);
  // `name` (`op`, `op.overload` or `ns::op...`) in this library's namespace.
  OperatorName QualifiedName(std::string_view name) const;
  std::string BlockDescription() const;

  Kind kind_;
  const char* macro_;  // a string literal
  std::string ns_;
  std::optional<DispatchKey> key_;
  SourceLocation where_;
  std::vector<RegistrationHandle> handles_;
  bool record_errors_ = false;  // a static block's: errors are recorded, not thrown
  bool in_registration_ = false;
};

namespace detail {

// Runs one OPREG_LIBRARY* block at static initialization and keeps its Library alive.
class LibraryInit {
 public:
  LibraryInit(Library::Kind kind, void (*init)(Library&), const char* ns,
              std::optional<DispatchKey> key, const char* file, uint32_t line,
              const char* macro = "OPREG_LIBRARY");

 private:
  std::optional<Library> library_;
};

// Records an error of a static block (see StaticRegistrationErrors), or with
// OPREG_STRICT_REGISTRATION=1 prints it and aborts.
void RecordStaticError(std::string message);

}  // namespace detail

// The errors of OPREG_LIBRARY* block calls that failed during static initialization, in order,
// each ending with " (registration at file:line)" for the call that failed.
std::vector<std::string> StaticRegistrationErrors();

}  // namespace opreg

#define OPREG_INTERNAL_CONCAT_(a, b) a##b
#define OPREG_INTERNAL_CONCAT(a, b) OPREG_INTERNAL_CONCAT_(a, b)

// The one block that defines the ops of namespace `ns`.
#define OPREG_LIBRARY(ns, m)                                                                   \
  static void OPREG_LIBRARY_init_##ns(::opreg::Library&);                                      \
  static const ::opreg::detail::LibraryInit OPREG_LIBRARY_static_init_##ns(                    \
      ::opreg::Library::DEF, &OPREG_LIBRARY_init_##ns, #ns, std::nullopt, __FILE__, __LINE__); \
  void OPREG_LIBRARY_init_##ns(::opreg::Library& m)

// More definitions for namespace `ns`; any number of blocks.
#define OPREG_LIBRARY_FRAGMENT(ns, m) OPREG_INTERNAL_LIBRARY_FRAGMENT(ns, m, __COUNTER__)
#define OPREG_INTERNAL_LIBRARY_FRAGMENT(ns, m, uid)                                               \
  static void OPREG_INTERNAL_CONCAT(OPREG_LIBRARY_FRAGMENT_init_##ns##_, uid)(::opreg::Library&); \
  static const ::opreg::detail::LibraryInit OPREG_INTERNAL_CONCAT(                                \
      OPREG_LIBRARY_FRAGMENT_static_init_##ns##_, uid)(                                           \
      ::opreg::Library::FRAGMENT,                                                                 \
      &OPREG_INTERNAL_CONCAT(OPREG_LIBRARY_FRAGMENT_init_##ns##_, uid), #ns, std::nullopt,        \
      __FILE__, __LINE__);                                                                        \
  void OPREG_INTERNAL_CONCAT(OPREG_LIBRARY_FRAGMENT_init_##ns##_, uid)(::opreg::Library & m)

// Kernels of namespace `ns` (`_`: fallbacks) for one key: CPU, CUDA, Meta, CompositeExplicit
// or CompositeImplicit; any number of blocks.
#define OPREG_LIBRARY_IMPL(ns, key, m) OPREG_INTERNAL_LIBRARY_IMPL(ns, key, m, __COUNTER__)
#define OPREG_INTERNAL_LIBRARY_IMPL(ns, key, m, uid)                             \
  static void OPREG_INTERNAL_CONCAT(OPREG_LIBRARY_IMPL_init_##ns##_##key##_,     \
                                    uid)(::opreg::Library&);                     \
  static const ::opreg::detail::LibraryInit OPREG_INTERNAL_CONCAT(               \
      OPREG_LIBRARY_IMPL_static_init_##ns##_##key##_, uid)(                      \
      ::opreg::Library::IMPL,                                                    \
      &OPREG_INTERNAL_CONCAT(OPREG_LIBRARY_IMPL_init_##ns##_##key##_, uid), #ns, \
      std::make_optional(::opreg::DispatchKey::k##key), __FILE__, __LINE__);     \
  void OPREG_INTERNAL_CONCAT(OPREG_LIBRARY_IMPL_init_##ns##_##key##_, uid)(::opreg::Library & m)
