// The dispatcher: the process-wide table of operators, their definitions and kernels, and the
// two ways to call them.
//
//   OperatorHandle op = Dispatcher::Get().FindOpOrThrow("mylib::rms_norm");
//   Tensor y = op.typed<Tensor(const Tensor&, const Tensor&, double)>().call(x, w, 1e-6);
//   Stack out = op.CallBoxed({IValue(x), IValue(w)}, {{"eps", IValue(1e-6)}});
//
// Registration functions return absl::Status errors (PyTorch's wording where it has one) and,
// on success, a RegistrationHandle that undoes the registration when destroyed; most users
// register through Library and the OPREG_LIBRARY macros (library.h) instead.
//
// Thread safety: lookups and calls never lock: they read atomics that point at immutable data.
// Registrations take a mutex and may run while other threads call ops; a kernel deregistered
// during a call in another thread stays valid (it is retired, not freed, until exit).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "opreg/dispatch/call_interceptor.h"
#include "opreg/dispatch/operator_entry.h"

namespace opreg {

// Undoes one registration when destroyed (or Release()d). Move-only.
class RegistrationHandle {
 public:
  RegistrationHandle() = default;
  explicit RegistrationHandle(std::function<void()> release) : release_(std::move(release)) {}
  RegistrationHandle(RegistrationHandle&& o) noexcept : release_(std::move(o.release_)) {
    o.release_ = nullptr;
  }
  RegistrationHandle& operator=(RegistrationHandle&& o) noexcept {
    if (this != &o) {
      Release();
      release_ = std::move(o.release_);
      o.release_ = nullptr;
    }
    return *this;
  }
  RegistrationHandle(const RegistrationHandle&) = delete;
  RegistrationHandle& operator=(const RegistrationHandle&) = delete;
  ~RegistrationHandle() { Release(); }
  void Release() {
    if (release_) {
      auto f = std::move(release_);
      release_ = nullptr;
      f();
    }
  }

 private:
  std::function<void()> release_;
};

template <class Sig>
class TypedOperatorHandle;

namespace detail {
// A boxed kernel that calls OperatorHandle::CallBoxed: how a typed call reaches an interceptor.
const KernelFunction& RedirectToCallBoxed();
// Rethrows an error a kernel of `op` threw with the op's name in front ("[ns::op] ..."), as
// opreg's own argument errors read, unless its message already starts with an op's name (one
// thrown by opreg's checks, or by an op the kernel called).
[[noreturn]] void RethrowNamingOp(const OperatorName& op, const Error& error);
// A typed call's argument as a tensor for the written-argument check: the tensor, or nullptr.
inline const Tensor* TensorOrNull(const Tensor& t) { return &t; }
template <class T>
const Tensor* TensorOrNull(const T&) {
  return nullptr;
}
}  // namespace detail

// Whether `v` is a value of `arg`'s schema type, as a boxed call checks its arguments,
// converting the few values that have one unambiguous schema form (an int for a float, a
// device's name for a Device, a Tensor[] for a Tensor?[], an undefined tensor for None).
// For bindings checking values that no call checks, such as a kernel's returns. Thread-safe.
bool CheckAndCoerceValue(const Argument& arg, IValue* v);

// A cheap, copyable reference to an operator. Valid for the life of the process.
class OperatorHandle {
 public:
  explicit OperatorHandle(const OperatorEntry* entry) : entry_(entry) {}

  const OperatorName& operator_name() const { return entry_->name(); }
  // The op's schema. Throws kKey if the op's definition has since been removed.
  const FunctionSchema& schema() const { return definition().schema; }
  const OpDefinition& definition() const;
  const OperatorEntry& entry() const { return *entry_; }

  // Boxed call. `stack` holds the arguments in schema order (trailing ones may be omitted when
  // they have defaults); they are type-checked against the schema, and replaced by the returns.
  // (A template so that `CallBoxed({})`, no arguments, picks the overload below.)
  template <class S, std::enable_if_t<std::is_same_v<S, Stack>, int> = 0>
  void CallBoxed(S* stack) const {
    CallBoxedInPlace(stack);
  }
  // The same as a plain function (for function pointers and other languages' bindings).
  void CallBoxedInPlace(Stack* stack) const;
  // CallBoxedInPlace for a binding that built `stack` itself from the schema: every argument
  // present, each value already of its argument's exact type (nothing to coerce), and every
  // tensor argument defined and on a device of type `device` (at least one tensor). It skips the
  // argument checks and the key computation, nothing else: an installed call interceptor still
  // gets the call (through CallBoxedInPlace), and a missing kernel or a wrong number of returns
  // throws as there. A stack that breaks the promise is undefined behaviour; when unsure, call
  // CallBoxedInPlace. Inline: a binding makes one such call per op call, and its common path
  // is a few loads around the kernel's call.
  void CallBoxedPrepared(Stack* stack, DeviceType device) const {
    const OpDefinition* def = entry_->definition();
    const KernelFunction* kernel = entry_->kernel(DispatchKeyFor(device));
    if (__builtin_expect(detail::AnyCallInterceptor() || def == nullptr || kernel == nullptr ||
                             !def->written_tensor_arguments.empty(),
                         0)) {
      return CallBoxedPreparedSlow(stack, device);
    }
    try {
      kernel->CallBoxed(*this, stack);
    } catch (const Error& e) {
      detail::RethrowNamingOp(entry_->name(), e);
    }
    const FunctionSchema& schema = def->schema;
    if (__builtin_expect(!schema.is_varret() && stack->size() != schema.returns().size(), 0)) {
      ThrowWrongReturnCount(DispatchKeyFor(device), stack->size(), schema.returns().size());
    }
  }
  // CallBoxedInPlace for a caller that allocated every tensor the op writes itself, just now
  // (fresh, dense, writable buffers that alias nothing: out resolution's outputs). It skips the
  // checks of written arguments (overlap with other arguments, read-only memory, layout), which
  // such buffers cannot fail; every other check stays.
  void CallBoxedWithFreshOuts(Stack* stack) const;
  // Both promises at once, for out resolution calling an out variant: CallBoxedPrepared's stack
  // (here: the arguments of a functional call that was itself checked, or prepared, against the
  // same types, so nothing is checked twice) whose written tensors are fresh buffers on `device`.
  // It checks nothing. `def` is the out variant's definition the caller's link was made from:
  // when the op has been redefined since, the call takes CallBoxedWithFreshOuts, which checks
  // the arguments against the current schema.
  void CallBoxedPreparedWithFreshOuts(Stack* stack, DeviceType device,
                                      const OpDefinition* def) const;
  // Boxed call with keyword arguments bound by name (Python's rules); returns the results.
  Stack CallBoxed(std::vector<IValue> args,
                  const std::vector<std::pair<std::string, IValue>>& kwargs = {}) const;

  // A handle for unboxed calls with C++ signature `Sig`, e.g. `Tensor(const Tensor&, int64_t)`.
  // Throws kType when Sig does not fit the schema, or differs from the signature of the op's
  // unboxed kernels.
  template <class Sig>
  TypedOperatorHandle<Sig> typed() const {
    CheckTypedSignature(CppSignature::Of<Sig>(), detail::UnboxedFactory<Sig>::Infer());
    return TypedOperatorHandle<Sig>(entry_);
  }

  // The runtime key of a boxed call's arguments (exposed for fallbacks and tests).
  DispatchKey ComputeDispatchKey(const Stack& stack, size_t first_argument) const;

  friend bool operator==(const OperatorHandle& a, const OperatorHandle& b) {
    return a.entry_ == b.entry_;
  }

 protected:
  void CheckTypedSignature(const CppSignature& sig, const InferredSignature& inferred) const;
  // Throws kValue naming the arguments on different devices; `devices` lists, per dispatch
  // argument, its position and device.
  [[noreturn]] void ThrowMixedDevices(const Stack& boxed_arguments) const;
  // Throws kValue naming both arguments when a written Tensor(a!) argument partially overlaps
  // another tensor argument (both contiguous; the very same memory is allowed).
  void CheckWrittenArguments(const OpDefinition& def, const Stack& stack) const;
  // The same over the arguments of a typed call: tensors[i] is argument i, or nullptr when it
  // is not a Tensor.
  void CheckWrittenTensors(const OpDefinition& def, const Tensor* const* tensors,
                           size_t n) const;
  // CallBoxedPrepared when an interceptor is installed, the op is undefined or has no kernel for
  // `device` (both throw), or it writes an argument (checked first).
  void CallBoxedPreparedSlow(Stack* stack, DeviceType device) const;
  // Throws kRuntime: the `key` kernel left `left` values on the stack, not `declared`.
  [[noreturn]] void ThrowWrongReturnCount(DispatchKey key, size_t left, size_t declared) const;
  // Runs the kernel for `key` on a checked stack and checks the number of returns. Inline,
  // defined in operator_handle.cc (its only callers' file).
  inline void RunKernel(DispatchKey key, const FunctionSchema& schema, Stack* stack) const;
  // CallBoxedInPlace's body; `check_written` false for CallBoxedWithFreshOuts.
  inline void CallBoxedChecked(Stack* stack, bool check_written) const;

  const OperatorEntry* entry_;
};

template <class R, class... Args>
class TypedOperatorHandle<R(Args...)> : public OperatorHandle {
 public:
  // The unboxed call: computes the key from the tensor arguments, finds the kernel in the op's
  // flat table and calls it directly (or boxed, for boxed kernels).
  R call(Args... args) const {
    if (__builtin_expect(detail::AnyCallInterceptor(), 0) && CurrentCallInterceptor() != nullptr) {
      // Captured: boxed, through CallBoxed (which checks the arguments and intercepts).
      return detail::RedirectToCallBoxed().template Call<R, Args...>(*this,
                                                                     std::forward<Args>(args)...);
    }
    detail::DeviceMask mask;
    (ArgTraits<std::decay_t<Args>>::AddDevices(args, mask), ...);
    if (__builtin_expect(mask.undefined_tensor, 0)) {
      // The boxed path's argument check names the op and argument (it throws).
      return detail::RedirectToCallBoxed().template Call<R, Args...>(*this,
                                                                     std::forward<Args>(args)...);
    }
    const DispatchKey key = KeyFromMask(mask, args...);
    if constexpr (sizeof...(Args) > 0) {
      // As the boxed calls do: a written Tensor(a!) argument must not partially overlap another
      // tensor argument (one test of an empty vector for ops that write nothing).
      const OpDefinition* def = entry_->definition();
      if (__builtin_expect(def != nullptr && !def->written_tensor_arguments.empty(), 0)) {
        const Tensor* tensors[] = {detail::TensorOrNull(args)...};
        CheckWrittenTensors(*def, tensors, sizeof...(Args));
      }
    }
    const KernelFunction& kernel = entry_->KernelOrThrow(key);
    try {
      return kernel.template Call<R, Args...>(*this, std::forward<Args>(args)...);
    } catch (const Error& e) {
      detail::RethrowNamingOp(entry_->name(), e);
    }
  }

 private:
  friend class OperatorHandle;
  explicit TypedOperatorHandle(const OperatorEntry* entry) : OperatorHandle(entry) {}

  DispatchKey KeyFromMask(const detail::DeviceMask& m, const Args&... args) const {
    const uint8_t t = m.tensors;
    if (t != 0 && (t & (t - 1)) == 0) {  // one device type: the common case
      return DispatchKeyFor(static_cast<DeviceType>(__builtin_ctz(t)));
    }
    if (t == 0) {
      const uint8_t d = m.device_args;
      return d != 0 && (d & (d - 1)) == 0
                 ? DispatchKeyFor(static_cast<DeviceType>(__builtin_ctz(d)))
                 : DispatchKey::kCPU;
    }
    Stack boxed;
    (boxed.push_back(ArgTraits<std::decay_t<Args>>::ToIValue(args)), ...);
    ThrowMixedDevices(boxed);
  }
};

class Dispatcher {
 public:
  // The process-wide dispatcher. Never destroyed, so that static Library objects can
  // deregister from it during exit in any order.
  static Dispatcher& Get();

  // ---- Lookup (lock-free) ----
  // `ns::op` or `ns::op.overload`; nullopt unless the op is defined.
  std::optional<OperatorHandle> FindOp(std::string_view qualified_name) const;
  // As FindOp, with a NotFound error that says what is known about the name (kernels
  // registered for an op never defined, other overloads).
  absl::StatusOr<OperatorHandle> FindOpOrError(std::string_view qualified_name) const;
  // As FindOpOrError, throwing opreg::Error (kKey).
  OperatorHandle FindOpOrThrow(std::string_view qualified_name) const;
  // Every defined op, sorted by name.
  std::vector<OperatorName> ListOps() const;
  // A report of one op: schema, where it was defined, kernels per key with their locations,
  // the computed dispatch table, out-variant link and symmetric-memory arguments.
  absl::StatusOr<std::string> DumpOp(std::string_view qualified_name) const;
  // What serves calls of a defined op with runtime key `key` (a kernel registered for it, a
  // composite or catch-all kernel, a fallback, ...): lets a caller tell whether the Meta key
  // runs code written for meta tensors. NotFound for an unknown op; InvalidArgument for a key
  // that is not a runtime key.
  absl::StatusOr<KernelOrigin> KernelOriginOf(std::string_view qualified_name,
                                              DispatchKey key) const;

  // ---- Registration ----
  struct DefineOptions {
    SourceLocation where;
    std::vector<std::string> tags;
    AliasAnalysisKind alias_analysis = AliasAnalysisKind::kFromSchema;
  };
  // Defines an op. The schema must be namespaced. Refuses duplicates (naming both locations),
  // schemas that break the aliasing rule, unknown tags, unregistered custom classes, and
  // schemas that existing kernels' C++ signatures do not fit. Links out variants by PyTorch's
  // rule (schema_rules.h) with the op's overloads already defined.
  absl::StatusOr<RegistrationHandle> Define(FunctionSchema schema, DefineOptions options);
  // Registers a kernel. The op may be defined later (dangling kernels are allowed until it is
  // looked up). A kernel for a key that already has one overrides it with a warning; removing
  // it restores the previous one. `key` nullopt serves every backend (CompositeImplicit).
  absl::StatusOr<RegistrationHandle> RegisterKernel(const OperatorName& op,
                                                    std::optional<DispatchKey> key,
                                                    KernelFunction kernel, SourceLocation where);
  // A boxed kernel run for every op that has no kernel of its own for a runtime `key`.
  absl::StatusOr<RegistrationHandle> RegisterFallback(DispatchKey key, KernelFunction kernel,
                                                      SourceLocation where);
  // Claims a namespace for its one OPREG_LIBRARY (DEF) block.
  absl::StatusOr<RegistrationHandle> RegisterLibrary(const std::string& ns, SourceLocation where);
  // A custom class type, by qualified name (`mylib.Handle`), that schemas may then mention.
  absl::StatusOr<RegistrationHandle> RegisterClass(const std::string& qualified_name,
                                                   SourceLocation where);
  // Links a functional op to an out op whose out arguments are named explicitly (vLLM style).
  // `meta_only_arguments`: the out op's inputs are matched by name and the functional may have
  // more (see ValidateExplicitOutLink).
  absl::StatusOr<RegistrationHandle> LinkOutVariant(const OperatorName& functional,
                                                    const OperatorName& out_op,
                                                    const std::vector<std::string>& out_arguments,
                                                    SourceLocation where,
                                                    bool meta_only_arguments = false);
  // Symmetric-memory arguments of a defined op (validated by ValidateSymmMemArgs); warnings
  // are logged. Registering again replaces the previous set with a warning.
  absl::StatusOr<RegistrationHandle> RegisterSymmMemArgs(const OperatorName& op,
                                                         const std::vector<std::string>& names,
                                                         SymmMemRequirement requirement,
                                                         SourceLocation where);

  // ---- Listening ----
  // What is told of each op defined from now on: its name, once Define() succeeded and before
  // it returns (unless Define runs inside a subscriber: then after that subscriber returns),
  // with no dispatcher lock held (it may look ops up). A subscriber of the op event stream below
  // that hears definitions only, with no replay. A listener must be thread-safe (ops can be
  // defined from several threads) and must not throw: an exception is logged and dropped, the
  // definition stands. Listeners live for the process (there is no removal). Thread-safe.
  using DefineListener = std::function<void(const OperatorName&)>;
  void AddDefineListener(DefineListener listener);

  // The op event stream: each definition (kDefined) and undefinition (kUndefined, its
  // RegistrationHandle released) of an op, delivered to every subscriber once, in the order
  // they happened, on a thread that made one of them, with no dispatcher lock held (a
  // subscriber may look ops up, define ops or subscribe; events it causes are delivered after
  // it returns). With `replay`, a new subscriber is first told kDefined for every op defined at
  // that moment, and then only of later events: it sees each op's history exactly once.
  // Subscribers must be thread-safe and must not throw (an exception is logged and dropped).
  // Returns an id for Unsubscribe. Thread-safe.
  enum class OpEvent { kDefined, kUndefined };
  using OpListener = std::function<void(OpEvent, const OperatorName&)>;
  uint64_t Subscribe(OpListener listener, bool replay);
  // Stops the events to subscriber `id` (after the one being delivered, if any). Unknown ids
  // are ignored. Thread-safe.
  void Unsubscribe(uint64_t id);

  // ---- Queries ----
  // The out variant linked to a functional op, if any.
  std::optional<OutVariantLink> OutVariantOf(const OperatorName& functional) const;
  // The registered symmetric-memory arguments of an op.
  std::optional<SymmMemArgsInfo> SymmMemArgsOf(const OperatorName& op,
                                               SymmMemRequirement requirement) const;
  bool IsClassRegistered(const std::string& qualified_name) const;

 private:
  friend class OperatorHandle;
  friend class OperatorEntry;
  Dispatcher();
  using OpMap = absl::flat_hash_map<std::string, OperatorEntry*>;

  // Both require mu_.
  OperatorEntry& EntryLocked(const OperatorName& name);
  OperatorEntry* FindEntryLocked(const OperatorName& name) const;
  const OperatorEntry* FindEntry(std::string_view qualified_name) const;
  void RecomputeTableLocked(OperatorEntry& entry);
  void AutoLinkOutVariantsLocked(OperatorEntry& entry);
  // Sets (or clears) a functional op's out-variant link, its resolution kernel and its table.
  void SetOutVariantLocked(OperatorEntry& functional, std::optional<OutVariantInfo> info);
  absl::Status CheckKernelFitsLocked(const OperatorEntry& entry, const KernelRegistration& k) const;
  void UndefineLocked(OperatorEntry& entry);
  absl::StatusOr<RegistrationHandle> DefineUnnotified(FunctionSchema schema, DefineOptions options);

  mutable std::mutex mu_;
  // The name -> entry map is copied on write and published atomically; old maps are retired.
  std::atomic<const OpMap*> ops_;
  std::vector<std::unique_ptr<const OpMap>> retired_maps_;
  std::vector<std::unique_ptr<OperatorEntry>> entries_;
  std::list<KernelRegistration> fallbacks_[kNumRuntimeKeys];
  std::list<KernelRegistration> retired_fallbacks_;
  absl::flat_hash_map<std::string, SourceLocation> libraries_;
  absl::flat_hash_map<std::string, SourceLocation> classes_;
  uint64_t next_registration_id_ = 1;

  // The op event stream (op_events.cc). Events are queued under mu_, in order, by the
  // definition or undefinition itself, and delivered by DeliverEvents under events_mu_.
  struct QueuedEvent {
    uint64_t seq;
    OpEvent kind;
    OperatorName name;
  };
  struct Subscriber {
    uint64_t id;
    uint64_t after_seq;  // events up to this one were in its replay (or came before it)
    std::shared_ptr<const OpListener> listener;
  };
  void QueueEventLocked(OpEvent kind, const OperatorName& name);  // requires mu_
  void DeliverEvents();  // call with no lock held
  std::deque<QueuedEvent> events_;  // under mu_
  uint64_t event_seq_ = 0;          // under mu_
  std::recursive_mutex events_mu_;  // held while delivering or subscribing
  std::vector<Subscriber> subscribers_;  // under events_mu_
  uint64_t next_subscriber_id_ = 1;      // under events_mu_
};

}  // namespace opreg
