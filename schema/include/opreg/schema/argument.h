// One argument or return of a FunctionSchema.
//
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "opreg/core/ivalue.h"
#include "opreg/schema/alias_info.h"
#include "opreg/schema/type.h"

namespace opreg {

class Argument {
 public:
  Argument(std::string name, TypePtr type, std::optional<int32_t> N,
           std::optional<IValue> default_value, bool kwarg_only,
           std::optional<AliasInfo> alias_info);

  // Empty for unnamed returns.
  const std::string& name() const { return name_; }
  // The type as written ("real" type): prints back as written.
  const TypePtr& type() const { return type_; }
  // The kernel-facing type: SymInt, ScalarType, Layout and MemoryFormat are int.
  const TypePtr& fake_type() const { return fake_type_; }
  // The size of a fixed-size list argument (`int[2]`).
  const std::optional<int32_t>& N() const { return N_; }
  const std::optional<IValue>& default_value() const { return default_value_; }
  bool kwarg_only() const { return kwarg_only_; }
  const std::optional<AliasInfo>& alias_info() const { return alias_info_; }

  // Written by the op (`Tensor(a!)`, `Tensor!`, `Tensor(a!)[]`).
  bool is_write() const { return alias_info_ && alias_info_->is_write(); }
  // An out argument: keyword-only and written (PyTorch's `Argument::is_out`).
  bool is_out() const { return kwarg_only_ && is_write(); }

  // Canonical text, PyTorch's `operator<<(Argument)`: `Tensor(a!)? name=default`.
  std::string str() const;

  friend bool operator==(const Argument& a, const Argument& b);
  friend bool operator!=(const Argument& a, const Argument& b) { return !(a == b); }

 private:
  std::string name_;
  TypePtr type_;
  TypePtr fake_type_;
  std::optional<int32_t> N_;
  std::optional<IValue> default_value_;
  bool kwarg_only_;
  std::optional<AliasInfo> alias_info_;
};

// Writes a string as PyTorch's printQuotedString does: double quotes, C escapes, octal for
// other non-printable bytes.
std::string QuoteString(std::string_view s);

}  // namespace opreg
