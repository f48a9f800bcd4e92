// The rules that bind a call's arguments to an op's schema, Python's, in one place for every
// caller that binds them (the boxed keyword call, opreg.ops from Python, the graph recorder):
// positional arguments first, at most the arguments before the first keyword-only one (any
// number for a vararg schema); then keyword arguments by name, each slot once; then each slot
// left takes its default, or the call is refused. Errors are kType and name the op and the
// argument, in Python's words ("takes 2 positional arguments but 3 were given", "got an
// unexpected keyword argument 'x'", "got multiple values for argument 'x' (#0)").
//
// A view of the schema: it must outlive the binding. Thread-compatible (const methods only).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "opreg/core/ivalue.h"
#include "opreg/schema/function_schema.h"

namespace opreg {

class ArgumentBinding {
 public:
  ArgumentBinding(const FunctionSchema& schema, std::string_view op);

  // How many arguments may be passed by position.
  size_t num_positional() const { return num_positional_; }
  // Throws when `n` positional arguments are more than the schema takes.
  void CheckPositionalCount(size_t n) const;
  // The slot of keyword argument `name`, given the slots filled so far (`filled(i)`); throws
  // for a name the schema lacks or a slot already filled.
  template <class Filled>
  size_t KeywordSlot(std::string_view name, Filled&& filled) const {
    const size_t i = SlotOfName(name);
    if (filled(i)) ThrowMultipleValues(name, i);
    return i;
  }
  // The default of slot `i`, for a call that left it empty; throws naming the argument when it
  // has none.
  const IValue& DefaultOf(size_t i) const;

 private:
  size_t SlotOfName(std::string_view name) const;  // throws for an unknown name
  [[noreturn]] void ThrowMultipleValues(std::string_view name, size_t i) const;

  const FunctionSchema& schema_;
  std::string_view op_;
  size_t num_positional_;
};

}  // namespace opreg
