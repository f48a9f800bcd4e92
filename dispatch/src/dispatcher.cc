// Registration: definitions, kernels, fallbacks, libraries, classes, out-variant links and
// symmetric-memory arguments. Everything here runs under mu_; calls (operator_handle.cc) read
// only the atomics this file publishes.
#include "opreg/dispatch/dispatcher.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"
#include "opreg/core/string_util.h"
#include "opreg/core/string_view.h"
#include "opreg/dispatch/out_resolution.h"
#include "opreg/dispatch/run_meta_function.h"

namespace opreg {
namespace {

// PyTorch's dispatcher keeps a 64-bit mask of dispatch arguments; so does its limit.
constexpr size_t kMaxArguments = 64;

std::string Loc(const SourceLocation& where) { return "registered at " + where.str(); }

// Calls `f` on every class type named in `type`.
template <class F>
void ForEachClassType(const Type& type, F&& f) {
  if (type.kind() == TypeKind::kClass) f(type.name());
  for (const TypePtr& t : type.contained()) ForEachClassType(*t, f);
}

absl::Status SignatureMismatch(const OperatorEntry& entry, const OpDefinition& def,
                               const KernelRegistration& k, const std::string& reason) {
  return absl::InvalidArgumentError(StrCat(
      "Inferred operator schema for a C++ kernel function doesn't match the expected function "
      "schema.\n  operator: ",
      entry.name().str(), "\n  expected schema: ", def.schema.str(), "\n    ", Loc(def.where),
      "\n  inferred schema: ", k.kernel.inferred_signature()->str(), "\n    ", Loc(k.where),
      "\n  reason: ", reason));
}

}  // namespace

Dispatcher& Dispatcher::Get() {
  static Dispatcher* const dispatcher = new Dispatcher();
  return *dispatcher;
}

Dispatcher::Dispatcher() {
  auto map = std::make_unique<const OpMap>();
  ops_.store(map.get(), std::memory_order_release);
  retired_maps_.push_back(std::move(map));
}

OperatorEntry* Dispatcher::FindEntryLocked(const OperatorName& name) const {
  const OpMap& map = *ops_.load(std::memory_order_relaxed);
  auto it = map.find(name.str());
  return it == map.end() ? nullptr : it->second;
}

const OperatorEntry* Dispatcher::FindEntry(std::string_view qualified_name) const {
  const OpMap& map = *ops_.load(std::memory_order_acquire);
  auto it = map.find(ToAbsl(qualified_name));
  return it == map.end() ? nullptr : it->second;
}

OperatorEntry& Dispatcher::EntryLocked(const OperatorName& name) {
  if (OperatorEntry* e = FindEntryLocked(name)) return *e;
  entries_.push_back(std::make_unique<OperatorEntry>(name));
  OperatorEntry* entry = entries_.back().get();
  // Copy on write: readers keep using the old map, which is retired rather than freed.
  auto map = std::make_unique<OpMap>(*ops_.load(std::memory_order_relaxed));
  map->emplace(name.str(), entry);
  ops_.store(map.get(), std::memory_order_release);
  retired_maps_.push_back(std::move(map));
  return *entry;
}

absl::Status Dispatcher::CheckKernelFitsLocked(const OperatorEntry& entry,
                                               const KernelRegistration& k) const {
  const OpDefinition* def = entry.owned_definition_.get();
  const InferredSignature* inferred = k.kernel.inferred_signature();
  if (def == nullptr || inferred == nullptr) return absl::OkStatus();
  const FunctionSchema& s = def->schema;
  if (inferred->arguments.size() != s.arguments().size()) {
    return SignatureMismatch(entry, *def, k,
                             StrCat("The number of arguments is different. ",
                                    inferred->arguments.size(), " vs ", s.arguments().size(), "."));
  }
  if (inferred->returns.size() != s.returns().size()) {
    return SignatureMismatch(entry, *def, k,
                             StrCat("The number of returns is different. ",
                                    inferred->returns.size(), " vs ", s.returns().size(), "."));
  }
  for (size_t i = 0; i < s.arguments().size(); ++i) {
    if (!InferredTypeMatches(*inferred->arguments[i], *s.arguments()[i].type())) {
      return SignatureMismatch(
          entry, *def, k,
          StrCat("Type mismatch in argument ", i + 1, ": ", inferred->arguments[i]->str(), " vs. ",
                 s.arguments()[i].type()->str()));
    }
  }
  for (size_t i = 0; i < s.returns().size(); ++i) {
    if (!InferredTypeMatches(*inferred->returns[i], *s.returns()[i].type())) {
      return SignatureMismatch(
          entry, *def, k,
          StrCat("Type mismatch in return ", i + 1, ": ", inferred->returns[i]->str(), " vs. ",
                 s.returns()[i].type()->str()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RegistrationHandle> Dispatcher::Define(FunctionSchema schema,
                                                      DefineOptions options) {
  absl::StatusOr<RegistrationHandle> handle =
      DefineUnnotified(std::move(schema), std::move(options));
  if (!handle.ok()) return handle;
  DeliverEvents();  // the op event stream's kDefined, queued by DefineUnnotified
  return handle;
}

void Dispatcher::AddDefineListener(DefineListener listener) {
  // A subscriber of the op event stream that hears definitions only.
  Subscribe(
      [listener = std::move(listener)](OpEvent kind, const OperatorName& name) {
        if (kind == OpEvent::kDefined) listener(name);
      },
      /*replay=*/false);
}

absl::StatusOr<RegistrationHandle> Dispatcher::DefineUnnotified(FunctionSchema schema,
                                                                DefineOptions options) {
  const OperatorName name = schema.operator_name();
  if (name.ns().empty()) {
    return absl::InvalidArgumentError(StrCat(
        "cannot define '", name.str(), "': an operator needs a namespace (ns::", name.str(), ")"));
  }
  if (schema.arguments().size() > kMaxArguments) {
    return absl::InvalidArgumentError(
        StrCat("The function schema of ", name.str(), " has ", schema.arguments().size(),
               " arguments but opreg supports at most ", kMaxArguments));
  }
  if (absl::Status s = CheckAliasingRule(schema); !s.ok()) return s;
  if (absl::Status s = ValidateTags(options.tags); !s.ok()) return s;

  std::lock_guard<std::mutex> lock(mu_);
  std::string unknown_class;
  auto check_class = [&](const std::string& cls) {
    if (unknown_class.empty() && !classes_.contains(cls)) unknown_class = cls;
  };
  for (const Argument& a : schema.arguments()) ForEachClassType(*a.type(), check_class);
  for (const Argument& a : schema.returns()) ForEachClassType(*a.type(), check_class);
  if (!unknown_class.empty()) {
    return absl::InvalidArgumentError(StrCat(
        "[", name.str(), "] Unknown custom class type ", unknown_class,
        ". Please ensure it is registered (Library::register_class) before the op is defined."));
  }

  OperatorEntry& entry = EntryLocked(name);
  if (entry.owned_definition_ != nullptr) {
    return absl::AlreadyExistsError(StrCat(
        "Tried to register an operator (", schema.str(),
        ") with the same name and overload name multiple times. Each overload's schema should "
        "only be registered with a single call to def(). Duplicate registration: ",
        Loc(options.where), ". Original registration: ", Loc(entry.owned_definition_->where)));
  }

  auto def = std::make_unique<OpDefinition>(OpDefinition{std::move(schema),
                                                         std::move(options.where),
                                                         std::move(options.tags),
                                                         options.alias_analysis,
                                                         {},
                                                         {},
                                                         {}});
  const auto& args = def->schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (IsTensorLike(*args[i].type())) def->tensor_arguments.push_back(static_cast<uint16_t>(i));
    if (args[i].is_write() && args[i].type()->kind() == TypeKind::kTensor) {
      def->written_tensor_arguments.push_back(static_cast<uint16_t>(i));
    }
    if (StripOptional(args[i].type())->kind() == TypeKind::kDevice) {
      def->device_arguments.push_back(static_cast<uint16_t>(i));
    }
    for (size_t j = 0; j < i; ++j) {
      if (args[j].name() == args[i].name()) {
        Logger().warn(
            "{}: argument name '{}' is used twice (#{} and #{}); keyword calls bind "
            "to the first",
            name.str(), args[i].name(), j, i);
      }
    }
  }
  // Kernels registered before the definition must fit it.
  entry.owned_definition_ = std::move(def);
  for (const KernelRegistration& k : entry.kernels_) {
    if (absl::Status s = CheckKernelFitsLocked(entry, k); !s.ok()) {
      entry.owned_definition_.reset();
      return s;
    }
  }
  entry.definition_.store(entry.owned_definition_.get(), std::memory_order_release);
  AutoLinkOutVariantsLocked(entry);
  QueueEventLocked(OpEvent::kDefined, name);
  return RegistrationHandle([this, e = &entry] {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (e->owned_definition_ != nullptr) QueueEventLocked(OpEvent::kUndefined, e->name());
      UndefineLocked(*e);
    }
    DeliverEvents();
  });
}

void Dispatcher::UndefineLocked(OperatorEntry& entry) {
  entry.definition_.store(nullptr, std::memory_order_release);
  if (entry.owned_definition_) {
    entry.retired_definitions_.push_back(std::move(entry.owned_definition_));
  }
  // Links in either direction go with the definition.
  if (entry.out_variant_) {
    if (OperatorEntry* out = FindEntryLocked(entry.out_variant_->link.out)) {
      out->functional_of_.reset();
    }
    SetOutVariantLocked(entry, std::nullopt);
  }
  if (entry.functional_of_) {
    if (OperatorEntry* f = FindEntryLocked(*entry.functional_of_)) {
      SetOutVariantLocked(*f, std::nullopt);
    }
    entry.functional_of_.reset();
  }
  entry.symm_mem_args_[0].reset();
  entry.symm_mem_args_[1].reset();
}

void Dispatcher::AutoLinkOutVariantsLocked(OperatorEntry& entry) {
  auto try_link = [&](OperatorEntry& functional, OperatorEntry& out) {
    const OpDefinition* f = functional.owned_definition_.get();
    const OpDefinition* o = out.owned_definition_.get();
    if (f == nullptr || o == nullptr) return;
    if (functional.out_variant_ && !functional.out_variant_->where.file.empty()) return;
    absl::StatusOr<OutVariantLink> link = MatchOutVariant(f->schema, o->schema);
    if (!link.ok()) {
      Logger().warn("{} and {} are named as functional op and out variant, but do not link: {}",
                    functional.name().str(), out.name().str(),
                    std::string(link.status().message()));
      return;
    }
    out.functional_of_ = functional.name();
    SetOutVariantLocked(functional, OutVariantInfo{*std::move(link), {}});
  };
  const FunctionSchema& s = entry.owned_definition_->schema;
  // As the functional op: its expected out overload.
  if (std::optional<std::string> overload = ExpectedOutOverloadName(s)) {
    if (OperatorEntry* out = FindEntryLocked(OperatorName(s.name(), *overload))) {
      try_link(entry, *out);
    }
  }
  // As an out variant: `out` belongs to the default overload, `<x>_out` to `<x>`.
  const std::string& overload = s.overload_name();
  std::optional<std::string> functional_overload;
  if (overload == "out") {
    functional_overload = "";
  } else if (overload.size() > 4 && overload.compare(overload.size() - 4, 4, "_out") == 0) {
    functional_overload = overload.substr(0, overload.size() - 4);
  }
  if (functional_overload) {
    if (OperatorEntry* f = FindEntryLocked(OperatorName(s.name(), *functional_overload))) {
      try_link(*f, entry);
    }
  }
}

void Dispatcher::SetOutVariantLocked(OperatorEntry& functional,
                                     std::optional<OutVariantInfo> info) {
  functional.out_resolution_ = nullptr;
  const OperatorEntry* out = info ? FindEntryLocked(info->link.out) : nullptr;
  // Ops whose output sizes depend on their data cannot be sized by a meta function up front.
  if (out != nullptr && functional.owned_definition_ != nullptr &&
      !HasDataDependentOutput(*functional.owned_definition_)) {
    functional.out_resolution_kernels_.push_back(
        MakeOutResolutionKernel(&functional, out, info->link));
    functional.out_resolution_ = &functional.out_resolution_kernels_.back();
  }
  functional.out_variant_ = std::move(info);
  RecomputeTableLocked(functional);
}

void Dispatcher::RecomputeTableLocked(OperatorEntry& entry) {
  auto newest = [&](DispatchKey key) -> const KernelRegistration* {
    for (auto it = entry.kernels_.rbegin(); it != entry.kernels_.rend(); ++it) {
      if (it->EffectiveKey() == key) return &*it;
    }
    return nullptr;
  };
  for (int i = 0; i < kNumRuntimeKeys; ++i) {
    const auto key = static_cast<DispatchKey>(i);
    const KernelRegistration* chosen = newest(key);
    // A functional op linked to an out variant runs through it on keys it has no kernel for
    // (never on Meta: the meta function is what sizes the outputs).
    if (chosen == nullptr && key != DispatchKey::kMeta && entry.out_resolution_ != nullptr) {
      entry.table_source_[i] = StrCat("through out variant ", entry.out_variant_->link.out.str(),
                                      " (meta function, then out kernel)");
      entry.table_origin_[i] = KernelOrigin::kOutVariant;
      entry.table_[i].store(entry.out_resolution_, std::memory_order_release);
      continue;
    }
    std::string source;
    KernelOrigin origin = KernelOrigin::kOwnKey;
    if (chosen == nullptr) {
      chosen = newest(DispatchKey::kCompositeExplicit);
      origin = KernelOrigin::kCompositeExplicit;
    }
    if (chosen == nullptr) {
      chosen = newest(DispatchKey::kCompositeImplicit);
      origin = chosen != nullptr && !chosen->key ? KernelOrigin::kCatchAll
                                                 : KernelOrigin::kCompositeImplicit;
    }
    if (chosen != nullptr) {
      source = StrCat(DispatchKeyName(chosen->EffectiveKey()), " kernel ", Loc(chosen->where));
    } else if (!fallbacks_[i].empty()) {
      chosen = &fallbacks_[i].back();
      source = StrCat("fallback ", Loc(chosen->where));
      origin = KernelOrigin::kFallback;
    } else {
      origin = KernelOrigin::kNone;
    }
    entry.table_source_[i] = std::move(source);
    entry.table_origin_[i] = origin;
    entry.table_[i].store(chosen != nullptr ? &chosen->kernel : nullptr, std::memory_order_release);
  }
}

absl::StatusOr<RegistrationHandle> Dispatcher::RegisterKernel(const OperatorName& op,
                                                              std::optional<DispatchKey> key,
                                                              KernelFunction kernel,
                                                              SourceLocation where) {
  if (!kernel.valid()) {
    return absl::InvalidArgumentError(
        StrCat("[", op.str(), "] cannot register an empty kernel (", Loc(where), ")"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  OperatorEntry& entry = EntryLocked(op);
  KernelRegistration reg{next_registration_id_++, key, std::move(kernel), std::move(where)};
  if (absl::Status s = CheckKernelFitsLocked(entry, reg); !s.ok()) return s;

  if (const std::optional<CppSignature>& sig = reg.kernel.cpp_signature()) {
    if (entry.cpp_signature_ && *entry.cpp_signature_ != *sig) {
      const KernelRegistration* first = nullptr;
      for (const KernelRegistration& k : entry.kernels_) {
        if (k.kernel.cpp_signature()) {
          first = &k;
          break;
        }
      }
      const OpDefinition* def = entry.owned_definition_.get();
      return absl::InvalidArgumentError(StrCat(
          "Mismatch in kernel C++ signatures\n  operator: ", def ? def->schema.str() : op.str(),
          "\n    ", def ? Loc(def->where) : "not defined yet",
          "\n  kernel 1: ", entry.cpp_signature_->name(),
          "\n    dispatch key: ", first ? DispatchKeyName(first->EffectiveKey()) : "?", "\n    ",
          Loc(entry.cpp_signature_where_), "\n  kernel 2: ", sig->name(),
          "\n    dispatch key: ", DispatchKeyName(reg.EffectiveKey()), "\n    ", Loc(reg.where)));
    }
    if (!entry.cpp_signature_) {
      entry.cpp_signature_ = *sig;
      entry.cpp_signature_where_ = reg.where;
    }
  }
  for (const KernelRegistration& k : entry.kernels_) {
    if (k.EffectiveKey() == reg.EffectiveKey()) {
      Logger().warn(
          "Overriding a previously registered kernel for the same operator and the same "
          "dispatch key\n  operator: {}\n  dispatch key: {}\n  previous kernel: {}\n  new "
          "kernel: {}",
          op.str(), DispatchKeyName(reg.EffectiveKey()), Loc(k.where), Loc(reg.where));
      break;
    }
  }
  const uint64_t id = reg.id;
  entry.kernels_.push_back(std::move(reg));
  RecomputeTableLocked(entry);
  return RegistrationHandle([this, e = &entry, id] {
    std::lock_guard<std::mutex> l(mu_);
    auto it = std::find_if(e->kernels_.begin(), e->kernels_.end(),
                           [&](const KernelRegistration& k) { return k.id == id; });
    if (it == e->kernels_.end()) return;
    // Retire, not free: a call in another thread may be running this kernel right now.
    e->retired_kernels_.splice(e->retired_kernels_.end(), e->kernels_, it);
    const bool any_unboxed =
        std::any_of(e->kernels_.begin(), e->kernels_.end(),
                    [](const KernelRegistration& k) { return k.kernel.cpp_signature(); });
    if (!any_unboxed) e->cpp_signature_.reset();
    RecomputeTableLocked(*e);
  });
}

absl::StatusOr<RegistrationHandle> Dispatcher::RegisterFallback(DispatchKey key,
                                                                KernelFunction kernel,
                                                                SourceLocation where) {
  if (!IsRuntimeKey(key)) {
    return absl::InvalidArgumentError(StrCat(
        "fallbacks are registered per runtime key (CPU, CUDA, Meta), not ", DispatchKeyName(key)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& list = fallbacks_[static_cast<int>(key)];
  if (!list.empty()) {
    return absl::AlreadyExistsError(
        StrCat("Tried to register multiple backend fallbacks for the same dispatch key ",
               DispatchKeyName(key), "; previous registration ", Loc(list.back().where),
               ", new registration ", Loc(where)));
  }
  const uint64_t id = next_registration_id_++;
  list.push_back(KernelRegistration{id, key, std::move(kernel), std::move(where)});
  for (auto& e : entries_) RecomputeTableLocked(*e);
  return RegistrationHandle([this, key, id] {
    std::lock_guard<std::mutex> l(mu_);
    auto& l2 = fallbacks_[static_cast<int>(key)];
    auto it =
        std::find_if(l2.begin(), l2.end(), [&](const KernelRegistration& k) { return k.id == id; });
    if (it == l2.end()) return;
    retired_fallbacks_.splice(retired_fallbacks_.end(), l2, it);
    for (auto& e : entries_) RecomputeTableLocked(*e);
  });
}

absl::StatusOr<RegistrationHandle> Dispatcher::RegisterLibrary(const std::string& ns,
                                                               SourceLocation where) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = libraries_.find(ns); it != libraries_.end()) {
    return absl::AlreadyExistsError(StrCat(
        "Only a single OPREG_LIBRARY can be used to register the namespace ", ns,
        "; please put all of your definitions in a single OPREG_LIBRARY block. If you were "
        "trying to specify implementations, consider using OPREG_LIBRARY_IMPL (which can be "
        "duplicated). If you really intended to define operators for a single namespace in a "
        "distributed way, you can use OPREG_LIBRARY_FRAGMENT to explicitly indicate this. "
        "Previous registration of OPREG_LIBRARY was ",
        Loc(it->second), "; latest registration was ", Loc(where)));
  }
  libraries_.emplace(ns, std::move(where));
  return RegistrationHandle([this, ns] {
    std::lock_guard<std::mutex> l(mu_);
    libraries_.erase(ns);
  });
}

absl::StatusOr<RegistrationHandle> Dispatcher::RegisterClass(const std::string& qualified_name,
                                                             SourceLocation where) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = classes_.find(qualified_name); it != classes_.end()) {
    return absl::AlreadyExistsError(StrCat("Tried to register the custom class ", qualified_name,
                                           " twice: first ", Loc(it->second), ", then ",
                                           Loc(where)));
  }
  classes_.emplace(qualified_name, std::move(where));
  return RegistrationHandle([this, qualified_name] {
    std::lock_guard<std::mutex> l(mu_);
    classes_.erase(qualified_name);
  });
}

bool Dispatcher::IsClassRegistered(const std::string& qualified_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return classes_.contains(qualified_name);
}

absl::StatusOr<RegistrationHandle> Dispatcher::LinkOutVariant(
    const OperatorName& functional, const OperatorName& out_op,
    const std::vector<std::string>& out_arguments, SourceLocation where, bool meta_only_arguments) {
  std::lock_guard<std::mutex> lock(mu_);
  OperatorEntry* f = FindEntryLocked(functional);
  OperatorEntry* o = FindEntryLocked(out_op);
  for (auto [e, n] : {std::pair{f, &functional}, std::pair{o, &out_op}}) {
    if (e == nullptr || e->owned_definition_ == nullptr) {
      return absl::NotFoundError(StrCat("link_out_variant(", functional.str(), ", ", out_op.str(),
                                        "): ", n->str(), " is not defined (def it first)"));
    }
  }
  if (f->out_variant_ && !f->out_variant_->where.file.empty()) {
    return absl::AlreadyExistsError(
        StrCat(functional.str(), " is already linked to the out variant ",
               f->out_variant_->link.out.str(), " (", Loc(f->out_variant_->where), ")"));
  }
  absl::StatusOr<OutVariantLink> link =
      ValidateExplicitOutLink(f->owned_definition_->schema, o->owned_definition_->schema,
                              out_arguments, meta_only_arguments);
  if (!link.ok()) return link.status();
  if (f->out_variant_) {  // an automatic link gives way to the explicit one
    if (OperatorEntry* old = FindEntryLocked(f->out_variant_->link.out))
      old->functional_of_.reset();
  }
  o->functional_of_ = functional;
  SetOutVariantLocked(*f, OutVariantInfo{*std::move(link), std::move(where)});
  return RegistrationHandle([this, f, o] {
    std::lock_guard<std::mutex> l(mu_);
    if (f->out_variant_ && f->out_variant_->link.out == o->name()) {
      SetOutVariantLocked(*f, std::nullopt);
      o->functional_of_.reset();
    }
    if (f->owned_definition_) AutoLinkOutVariantsLocked(*f);
  });
}

absl::StatusOr<RegistrationHandle> Dispatcher::RegisterSymmMemArgs(
    const OperatorName& op, const std::vector<std::string>& names, SymmMemRequirement requirement,
    SourceLocation where) {
  std::lock_guard<std::mutex> lock(mu_);
  OperatorEntry* e = FindEntryLocked(op);
  if (e == nullptr || e->owned_definition_ == nullptr) {
    return absl::NotFoundError(
        StrCat("register_symm_mem_args: ", op.str(), " is not defined (def it first)"));
  }
  absl::StatusOr<SymmMemArgsValidation> v =
      ValidateSymmMemArgs(e->owned_definition_->schema, names);
  if (!v.ok()) return v.status();
  for (const std::string& w : v->warnings) Logger().warn("{}", w);
  const int slot = static_cast<int>(requirement);
  const auto& other = e->symm_mem_args_[1 - slot];
  if (other) {
    for (const std::string& n : names) {
      if (std::find(other->names.begin(), other->names.end(), n) != other->names.end()) {
        return absl::InvalidArgumentError(
            StrCat("[", op.str(), "] symmetric-memory argument '", n, "' is already registered as ",
                   slot == 0 ? "accepted" : "required", " (", Loc(other->where),
                   "); an argument is either required or accepted"));
      }
    }
  }
  if (e->symm_mem_args_[slot]) {
    Logger().warn(
        "Symmetric-memory arguments of {} were registered before ({}); the new "
        "registration ({}) overwrites them",
        op.str(), Loc(e->symm_mem_args_[slot]->where), Loc(where));
  }
  e->symm_mem_args_[slot] = SymmMemArgsInfo{names, v->argument_indices, std::move(where)};
  return RegistrationHandle([this, e, slot, names] {
    std::lock_guard<std::mutex> l(mu_);
    if (e->symm_mem_args_[slot] && e->symm_mem_args_[slot]->names == names) {
      e->symm_mem_args_[slot].reset();
    }
  });
}

std::optional<OutVariantLink> Dispatcher::OutVariantOf(const OperatorName& functional) const {
  std::lock_guard<std::mutex> lock(mu_);
  const OperatorEntry* e = FindEntryLocked(functional);
  if (e == nullptr || !e->out_variant_) return std::nullopt;
  return e->out_variant_->link;
}

std::optional<SymmMemArgsInfo> Dispatcher::SymmMemArgsOf(const OperatorName& op,
                                                         SymmMemRequirement requirement) const {
  std::lock_guard<std::mutex> lock(mu_);
  const OperatorEntry* e = FindEntryLocked(op);
  if (e == nullptr) return std::nullopt;
  return e->symm_mem_args_[static_cast<int>(requirement)];
}

}  // namespace opreg
