#include "opreg/schema/function_schema.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace opreg {

FunctionSchema::FunctionSchema(OperatorName name, std::vector<Argument> arguments,
                               std::vector<Argument> returns, bool is_vararg, bool is_varret)
    : name_(std::move(name)),
      arguments_(std::move(arguments)),
      returns_(std::move(returns)),
      is_vararg_(is_vararg),
      is_varret_(is_varret) {}

bool FunctionSchema::is_mutable() const {
  for (const Argument& a : arguments_) {
    if (a.is_write()) return true;
  }
  return false;
}

std::vector<std::string> FunctionSchema::MutatedArgumentNames() const {
  std::vector<std::string> names;
  for (const Argument& a : arguments_) {
    if (a.is_write()) names.push_back(a.name());
  }
  return names;
}

std::optional<size_t> FunctionSchema::ArgumentIndex(std::string_view name) const {
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (arguments_[i].name() == name) return i;
  }
  return std::nullopt;
}

std::optional<size_t> FunctionSchema::ReturnedArgumentIndex(size_t r) const {
  if (r >= returns_.size()) return std::nullopt;
  const Argument& ret = returns_[r];
  if (!ret.is_write() || ret.alias_info()->before_sets().empty()) return std::nullopt;
  const std::string& set = ret.alias_info()->before_sets()[0];
  for (size_t i = 0; i < arguments_.size(); ++i) {
    const Argument& a = arguments_[i];
    if (!a.is_write()) continue;
    const std::vector<std::string>& sets = a.alias_info()->before_sets();
    if (std::find(sets.begin(), sets.end(), set) != sets.end()) return i;
  }
  return std::nullopt;
}

std::string FunctionSchema::str() const {
  std::string out = name_.str();
  out.push_back('(');
  bool seen_kwarg_only = false;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (i > 0) out += ", ";
    if (arguments_[i].kwarg_only() && !seen_kwarg_only) {
      out += "*, ";
      seen_kwarg_only = true;
    }
    out += arguments_[i].str();
  }
  if (is_vararg_) out += arguments_.empty() ? "..." : ", ...";
  out += ") -> ";

  // No parentheses for exactly one return (unless its text starts with `(`, a tuple type that
  // would otherwise read as a return list) or for a bare `...`.
  bool need_paren = !((returns_.size() == 1 && !is_varret_) || (returns_.empty() && is_varret_));
  std::string single;
  if (returns_.size() == 1 && !need_paren) {
    single = returns_[0].str();
    if (!single.empty() && single.front() == '(') need_paren = true;
  }
  if (need_paren) out.push_back('(');
  if (!single.empty()) {
    out += single;
  } else {
    for (size_t i = 0; i < returns_.size(); ++i) {
      if (i > 0) out += ", ";
      out += returns_[i].str();
    }
  }
  if (is_varret_) out += returns_.empty() ? "..." : ", ...";
  if (need_paren) out.push_back(')');
  return out;
}

bool operator==(const FunctionSchema& a, const FunctionSchema& b) {
  return a.name_ == b.name_ && a.arguments_ == b.arguments_ && a.returns_ == b.returns_ &&
         a.is_vararg_ == b.is_vararg_ && a.is_varret_ == b.is_varret_;
}

std::ostream& operator<<(std::ostream& os, const FunctionSchema& schema) {
  return os << schema.str();
}

}  // namespace opreg
