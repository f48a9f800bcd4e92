// The one implementation of argument binding (argument_binding.h).
#include "opreg/dispatch/argument_binding.h"

#include <algorithm>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"

namespace opreg {

ArgumentBinding::ArgumentBinding(const FunctionSchema& schema, std::string_view op)
    : schema_(schema), op_(op) {
  const auto& args = schema.arguments();
  num_positional_ = static_cast<size_t>(
      std::find_if(args.begin(), args.end(), [](const Argument& a) { return a.kwarg_only(); }) -
      args.begin());
}

void ArgumentBinding::CheckPositionalCount(size_t n) const {
  if (n > num_positional_ && !schema_.is_vararg()) {
    OPREG_THROW(kType, "[", op_, "] takes ", num_positional_, " positional arguments but ", n,
                " were given");
  }
}

size_t ArgumentBinding::SlotOfName(std::string_view name) const {
  std::optional<size_t> i = schema_.ArgumentIndex(name);
  if (!i) OPREG_THROW(kType, "[", op_, "] got an unexpected keyword argument '", name, "'");
  return *i;
}

void ArgumentBinding::ThrowMultipleValues(std::string_view name, size_t i) const {
  OPREG_THROW(kType, "[", op_, "] got multiple values for argument '", name, "' (#", i, ")");
}

const IValue& ArgumentBinding::DefaultOf(size_t i) const {
  const auto& args = schema_.arguments();
  if (i >= args.size() || !args[i].default_value()) {
    const std::string name = i < args.size() ? args[i].name() : StrCat("#", i);
    OPREG_THROW(kType, ArgErrorMessage(op_, name, static_cast<int>(i), "a value",
                                       "nothing (the argument is missing and has no default)"));
  }
  return *args[i].default_value();
}

}  // namespace opreg
