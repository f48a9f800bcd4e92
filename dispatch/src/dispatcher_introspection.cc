// Lookups and reports: finding ops by name, listing them, dumping one, and the error for a
// missing kernel.
#include <algorithm>

#include "absl/strings/str_join.h"
#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {
namespace {

std::string KeyList(const OperatorEntry& entry, const std::list<KernelRegistration>& kernels) {
  std::vector<std::string> keys;
  for (const KernelRegistration& k : kernels) {
    std::string name(DispatchKeyName(k.EffectiveKey()));
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) keys.push_back(name);
  }
  return StrCat("[", absl::StrJoin(keys, ", "), "]");
}

}  // namespace

std::optional<OperatorHandle> Dispatcher::FindOp(std::string_view qualified_name) const {
  const OperatorEntry* e = FindEntry(qualified_name);
  if (e == nullptr || e->definition() == nullptr) return std::nullopt;
  return OperatorHandle(e);
}

absl::StatusOr<OperatorHandle> Dispatcher::FindOpOrError(std::string_view qualified_name) const {
  if (std::optional<OperatorHandle> op = FindOp(qualified_name)) return *op;
  std::lock_guard<std::mutex> lock(mu_);
  const std::string name(qualified_name);
  if (const OperatorEntry* e = FindEntry(qualified_name); e != nullptr && !e->kernels_.empty()) {
    std::vector<std::string> where;
    for (const KernelRegistration& k : e->kernels_) {
      where.push_back(
          StrCat(DispatchKeyName(k.EffectiveKey()), " ", "registered at ", k.where.str()));
    }
    return absl::NotFoundError(StrCat(
        "operator ", name, " has kernels (", absl::StrJoin(where, "; "),
        ") but was never defined: is the library with its def() (OPREG_LIBRARY block) linked "
        "and loaded?"));
  }
  // Other overloads of the same name help with a typo in the overload.
  std::vector<std::string> overloads;
  const std::string base = name.substr(0, name.find('.', name.find("::") + 2));
  for (const auto& [key, entry] : *ops_.load(std::memory_order_acquire)) {
    if (entry->definition() != nullptr && entry->name().name == base) overloads.push_back(key);
  }
  std::sort(overloads.begin(), overloads.end());
  return absl::NotFoundError(StrCat(
      "Could not find operator ", name,
      overloads.empty() ? ""
                        : StrCat(" (defined overloads: ", absl::StrJoin(overloads, ", "), ")")));
}

OperatorHandle Dispatcher::FindOpOrThrow(std::string_view qualified_name) const {
  absl::StatusOr<OperatorHandle> op = FindOpOrError(qualified_name);
  ThrowIfError(op.status());
  return *op;
}

std::vector<OperatorName> Dispatcher::ListOps() const {
  std::vector<OperatorName> names;
  for (const auto& [key, entry] : *ops_.load(std::memory_order_acquire)) {
    if (entry->definition() != nullptr) names.push_back(entry->name());
  }
  std::sort(names.begin(), names.end(),
            [](const OperatorName& a, const OperatorName& b) { return a.str() < b.str(); });
  return names;
}

absl::StatusOr<KernelOrigin> Dispatcher::KernelOriginOf(std::string_view qualified_name,
                                                         DispatchKey key) const {
  if (!IsRuntimeKey(key)) {
    return absl::InvalidArgumentError(StrCat("KernelOriginOf(", qualified_name, "): ",
                                             DispatchKeyName(key),
                                             " is not a runtime key (expected CPU, CUDA or Meta)"));
  }
  absl::StatusOr<OperatorHandle> op = FindOpOrError(qualified_name);
  if (!op.ok()) return op.status();
  std::lock_guard<std::mutex> lock(mu_);
  return op->entry().table_origin_[static_cast<int>(key)];
}

absl::StatusOr<std::string> Dispatcher::DumpOp(std::string_view qualified_name) const {
  absl::StatusOr<OperatorHandle> op = FindOpOrError(qualified_name);
  if (!op.ok()) return op.status();
  std::lock_guard<std::mutex> lock(mu_);
  const OperatorEntry& e = op->entry();
  const OpDefinition& def = *e.owned_definition_;
  std::string out = StrCat(def.schema.str(), "\n  defined at ", def.where.str(),
                           def.alias_analysis == AliasAnalysisKind::kConservative
                               ? " (schema inferred from C++: alias analysis conservative)"
                               : "",
                           "\n");
  if (!def.tags.empty()) StrAppend(&out, "  tags: ", absl::StrJoin(def.tags, ", "), "\n");
  const std::vector<std::string> mutated = def.schema.MutatedArgumentNames();
  StrAppend(&out, "  mutates: ", mutated.empty() ? "nothing" : absl::StrJoin(mutated, ", "), "\n");
  StrAppend(&out, "  kernels:", e.kernels_.empty() ? " none" : "", "\n");
  for (const KernelRegistration& k : e.kernels_) {
    StrAppend(&out, "    ", DispatchKeyName(k.EffectiveKey()), ": registered at ", k.where.str(),
              k.kernel.cpp_signature() ? StrCat(" [unboxed ", k.kernel.cpp_signature()->name(), "]")
                                       : std::string(" [boxed]"),
              "\n");
  }
  StrAppend(&out, "  dispatch table:\n");
  for (int i = 0; i < kNumRuntimeKeys; ++i) {
    StrAppend(&out, "    ", DispatchKeyName(static_cast<DispatchKey>(i)), ": ",
              e.table_source_[i].empty() ? "missing" : e.table_source_[i], "\n");
  }
  if (e.out_variant_) {
    const OutVariantLink& l = e.out_variant_->link;
    StrAppend(&out, "  out variant: ", l.out.str(),
              " (outs: ", absl::StrJoin(l.out_argument_names, ", "), "; ",
              e.out_variant_->where.file.empty()
                  ? std::string("linked by name")
                  : StrCat("linked explicitly at ", e.out_variant_->where.str()),
              ")\n");
  }
  if (e.functional_of_) StrAppend(&out, "  out variant of: ", e.functional_of_->str(), "\n");
  const char* kRequirement[] = {"required", "accepted"};
  for (int r = 0; r < 2; ++r) {
    if (const auto& s = e.symm_mem_args_[r]) {
      StrAppend(&out, "  symmetric-memory arguments (", kRequirement[r],
                "): ", absl::StrJoin(s->names, ", "), " (registered at ", s->where.str(), ")\n");
    }
  }
  return out;
}

void OperatorEntry::ThrowMissingKernel(DispatchKey key) const {
  std::string available;
  std::string table;
  {
    std::lock_guard<std::mutex> lock(Dispatcher::Get().mu_);
    available = KeyList(*this, kernels_);
    for (const KernelRegistration& k : kernels_) {
      StrAppend(&table, "\n", DispatchKeyName(k.EffectiveKey()), ": registered at ", k.where.str());
    }
  }
  OPREG_THROW(kNotImplemented, "Could not run '", name_.str(), "' with arguments from the '",
              DispatchKeyName(key),
              "' backend. This could be because the operator doesn't exist for this backend. '",
              name_.str(), "' is only available for these backends: ", available, ".", table);
}

}  // namespace opreg
