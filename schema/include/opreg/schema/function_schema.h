// The model of an operator schema (PyTorch's c10::FunctionSchema): name, overload, arguments,
// returns, `...` markers, and its canonical text.
//
// Value type; thread-compatible. Parse one with ParseSchema (schema_parser.h).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "opreg/schema/argument.h"
#include "opreg/schema/operator_name.h"

namespace opreg {

class FunctionSchema {
 public:
  FunctionSchema(OperatorName name, std::vector<Argument> arguments, std::vector<Argument> returns,
                 bool is_vararg = false, bool is_varret = false);

  const OperatorName& operator_name() const { return name_; }
  // "ns::op" (no overload).
  const std::string& name() const { return name_.name; }
  const std::string& overload_name() const { return name_.overload_name; }
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  bool is_vararg() const { return is_vararg_; }
  bool is_varret() const { return is_varret_; }

  // Any argument is written (`Tensor(a!)`, `Tensor!`).
  bool is_mutable() const;
  // The names of the written arguments, in schema order (torch.library's `mutates_args`).
  std::vector<std::string> MutatedArgumentNames() const;
  // Index of the argument with this name (the first one if names repeat).
  std::optional<size_t> ArgumentIndex(std::string_view name) const;
  // The written argument that return `r` is: a `Tensor(a!)` return and the first written
  // argument of its alias set (out variants' outs, in-place ops' self); nullopt otherwise.
  std::optional<size_t> ReturnedArgumentIndex(size_t r) const;

  // Prefixes "ns::" when the name has none.
  void SetNamespaceIfNotSet(std::string_view ns) { name_.SetNamespaceIfNotSet(ns); }

  // The canonical text, byte-identical to PyTorch's `str(schema)` except that the `!` shorthand
  // prints as `!` (PyTorch prints an unparseable `($0! -> )`).
  std::string str() const;

  friend bool operator==(const FunctionSchema& a, const FunctionSchema& b);
  friend bool operator!=(const FunctionSchema& a, const FunctionSchema& b) { return !(a == b); }

 private:
  OperatorName name_;
  std::vector<Argument> arguments_;
  std::vector<Argument> returns_;
  bool is_vararg_;
  bool is_varret_;
};

std::ostream& operator<<(std::ostream& os, const FunctionSchema& schema);

}  // namespace opreg
