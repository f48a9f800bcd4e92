#include "opreg/schema/operator_name.h"

#include "absl/strings/str_cat.h"
#include "opreg/core/string_view.h"

namespace opreg {

std::string_view OperatorName::ns() const {
  const size_t pos = name.find("::");
  return pos == std::string::npos ? std::string_view() : std::string_view(name).substr(0, pos);
}

std::string_view OperatorName::base_name() const {
  const size_t pos = name.find("::");
  return pos == std::string::npos ? std::string_view(name) : std::string_view(name).substr(pos + 2);
}

bool OperatorName::SetNamespaceIfNotSet(std::string_view ns) {
  if (name.find("::") != std::string::npos) return false;
  name = absl::StrCat(ToAbsl(ns), "::", name);
  return true;
}

std::string OperatorName::str() const {
  return overload_name.empty() ? name : absl::StrCat(name, ".", overload_name);
}

}  // namespace opreg
