// The name of an operator: `ns::name` plus an optional overload name (`add.out`).
//
// Value type; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace opreg {

struct OperatorName {
  OperatorName() = default;
  OperatorName(std::string qualified_name, std::string overload)
      : name(std::move(qualified_name)), overload_name(std::move(overload)) {}

  // "ns::op" or "op" when no namespace was given.
  std::string name;
  // Empty for the default overload.
  std::string overload_name;

  // The part before "::", empty if there is none.
  std::string_view ns() const;
  // The part after "::" (or the whole name).
  std::string_view base_name() const;
  // Prepends "ns::" when the name has no namespace yet; returns false if it already had one.
  bool SetNamespaceIfNotSet(std::string_view ns);
  // "ns::op.overload" (or "ns::op").
  std::string str() const;

  friend bool operator==(const OperatorName& a, const OperatorName& b) {
    return a.name == b.name && a.overload_name == b.overload_name;
  }
  friend bool operator!=(const OperatorName& a, const OperatorName& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const OperatorName& n) {
    return H::combine(std::move(h), n.name, n.overload_name);
  }
};

}  // namespace opreg
