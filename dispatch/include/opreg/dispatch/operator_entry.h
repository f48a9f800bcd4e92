// OperatorEntry: everything the dispatcher knows about one operator (`ns::op.overload`): its
// definition, its kernels per key, the computed kernel table, its out-variant link and its
// symmetric-memory arguments.
//
// Thread safety: the fields a call reads (the definition and the kernel table) are atomics that
// point to objects that are never freed while the dispatcher lives (replaced ones are retired,
// not deleted), so calls never lock. Everything else is guarded by the Dispatcher's mutex.
#pragma once

#include <array>
#include <atomic>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opreg/core/source_location.h"
#include "opreg/dispatch/dispatch_key.h"
#include "opreg/dispatch/kernel_function.h"
#include "opreg/schema/function_schema.h"
#include "opreg/schema/schema_rules.h"

namespace opreg {

// How a def was made: with a written schema (FROM_SCHEMA) or inferred from a C++ function
// (CONSERVATIVE: names `_0, _1, ...`, no alias information), as in PyTorch.
enum class AliasAnalysisKind { kFromSchema, kConservative };

// The immutable definition of an op, read by calls without locking.
struct OpDefinition {
  FunctionSchema schema;
  SourceLocation where;
  std::vector<std::string> tags;
  AliasAnalysisKind alias_analysis = AliasAnalysisKind::kFromSchema;
  // Indices of the arguments that carry dispatch keys (Tensor, Tensor?, Tensor[], Tensor?[]).
  std::vector<uint16_t> tensor_arguments;
  // Indices of Device / Device? arguments (the key of calls without tensors).
  std::vector<uint16_t> device_arguments;
  // Indices of the Tensor arguments the op writes (`Tensor(a!)`), checked against partial
  // overlap with the other tensor arguments before each call.
  std::vector<uint16_t> written_tensor_arguments;
};

struct KernelRegistration {
  uint64_t id;
  // nullopt: registered without a key (serves every backend, like CompositeImplicit).
  std::optional<DispatchKey> key;
  KernelFunction kernel;
  SourceLocation where;
  DispatchKey EffectiveKey() const { return key.value_or(DispatchKey::kCompositeImplicit); }
};

struct OutVariantInfo {
  OutVariantLink link;
  SourceLocation where;  // empty for automatic links
};

struct SymmMemArgsInfo {
  std::vector<std::string> names;
  std::vector<size_t> indices;
  SourceLocation where;
};

// What serves one runtime key of an op's dispatch table (Dispatcher::KernelOriginOf).
enum class KernelOrigin : uint8_t {
  kNone,               // no kernel: calls throw kNotImplemented
  kOwnKey,             // a kernel registered for that very key
  kCompositeExplicit,  // a CompositeExplicit kernel (one kernel for every backend)
  kCompositeImplicit,  // a kernel registered for CompositeImplicit (written in terms of ops)
  kCatchAll,           // a kernel registered without a key
  kFallback,           // the key's fallback
  kOutVariant,         // the functional op runs through its linked out variant
};

class OperatorEntry {
 public:
  explicit OperatorEntry(OperatorName name) : name_(std::move(name)) {
    for (auto& slot : table_) slot.store(nullptr, std::memory_order_relaxed);
  }
  OperatorEntry(const OperatorEntry&) = delete;
  OperatorEntry& operator=(const OperatorEntry&) = delete;

  const OperatorName& name() const { return name_; }
  // The current definition; null while the op is not defined.
  const OpDefinition* definition() const { return definition_.load(std::memory_order_acquire); }
  // The kernel a call with this runtime key runs; null when there is none.
  const KernelFunction* kernel(DispatchKey key) const {
    return table_[static_cast<int>(key)].load(std::memory_order_acquire);
  }
  // The kernel for `key`, or throws kNotImplemented listing the keys that have one.
  const KernelFunction& KernelOrThrow(DispatchKey key) const {
    const KernelFunction* k = kernel(key);
    if (k == nullptr) ThrowMissingKernel(key);
    return *k;
  }

 private:
  friend class Dispatcher;
  friend class OperatorHandle;
  [[noreturn]] void ThrowMissingKernel(DispatchKey key) const;

  const OperatorName name_;
  std::atomic<const OpDefinition*> definition_{nullptr};
  std::array<std::atomic<const KernelFunction*>, kNumRuntimeKeys> table_;

  // ---- Guarded by Dispatcher::mu_ ----
  std::unique_ptr<OpDefinition> owned_definition_;
  std::vector<std::unique_ptr<OpDefinition>> retired_definitions_;
  // All kernel registrations, oldest first; the newest of a key wins.
  std::list<KernelRegistration> kernels_;
  // Deregistered kernels: kept, because a concurrent call may still be running one.
  std::list<KernelRegistration> retired_kernels_;
  // Where each table slot's kernel came from ("CPU kernel registered at f.cc:3", "fallback").
  std::array<std::string, kNumRuntimeKeys> table_source_;
  std::array<KernelOrigin, kNumRuntimeKeys> table_origin_{};
  // The C++ signature every unboxed kernel of this op shares, with the first registration.
  std::optional<CppSignature> cpp_signature_;
  SourceLocation cpp_signature_where_;
  std::optional<OutVariantInfo> out_variant_;  // as the functional op
  // The kernel that runs this op through its out variant (out_resolution.h), while linked.
  // Kernels of earlier links are kept, never freed, like retired kernels.
  const KernelFunction* out_resolution_ = nullptr;
  std::list<KernelFunction> out_resolution_kernels_;
  std::optional<OperatorName> functional_of_;        // as the out variant of another op
  std::optional<SymmMemArgsInfo> symm_mem_args_[2];  // indexed by SymmMemRequirement
};

}  // namespace opreg
