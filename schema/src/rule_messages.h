// Message helpers shared by the schema rules (schema_rules.cc, out_variant.cc,
// symm_mem_args.cc), so that every rule names ops and arguments the same way:
// `[mylib::f.out] argument 'eps' (#2): ...`. Internal to the registry component.
//
// Thread safety: all functions are pure.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "opreg/core/string_util.h"
#include "opreg/schema/function_schema.h"

namespace opreg::rules_internal {

// "[ns::op.overload]".
inline std::string OpLabel(const FunctionSchema& s) {
  return StrCat("[", s.operator_name().str(), "]");
}

// "'name' (#index)".
inline std::string ArgRef(const Argument& a, size_t index) {
  return StrCat("'", a.name(), "' (#", index, ")");
}

// The type of `a` with its alias annotation, as written (`Tensor(a!)`, `Tensor!`, `int[2]`),
// without name or default: what "got ..." shows when the type is what is wrong.
inline std::string TypeText(const Argument& a) {
  return Argument("", a.type(), a.N(), std::nullopt, a.kwarg_only(), a.alias_info()).str();
}

// A double as Python's repr writes it (`1e-06`, `0.5`, `1.0`): the shortest text that reads
// back to the same value. Schema printing uses PyTorch's 17 digits (`9.9999999999999995e-07`),
// which is canonical but not what the user wrote, so messages use this form instead.
inline std::string ShortDouble(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string out = buf;
  if (std::isfinite(v) && out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

// An argument as a message shows it: Argument::str(), with a float default in ShortDouble form
// (`float eps=1e-06`).
inline std::string ArgText(const Argument& a) {
  if (!a.default_value() || !a.default_value()->isDouble()) return a.str();
  return StrCat(
      Argument(a.name(), a.type(), a.N(), std::nullopt, a.kwarg_only(), a.alias_info()).str(), "=",
      ShortDouble(a.default_value()->toDouble()));
}

// Python's repr of a list of strings, `['a', 'b']`: the form PyTorch's messages print.
inline std::string PyList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    StrAppend(&out, "'", items[i], "'");
  }
  out += "]";
  return out;
}

// "1 value", "2 values".
inline std::string Count(size_t n, const char* noun) {
  return StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// The names of all arguments of `s`, in order.
inline std::vector<std::string> ArgumentNames(const FunctionSchema& s) {
  std::vector<std::string> names;
  names.reserve(s.arguments().size());
  for (const Argument& a : s.arguments()) names.push_back(a.name());
  return names;
}

}  // namespace opreg::rules_internal
