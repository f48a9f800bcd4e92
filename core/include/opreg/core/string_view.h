// Bridges std::string_view (opreg's public APIs) and absl::string_view.
//
// Debian's abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so absl::string_view is a
// distinct type there and absl::StrCat and friends do not take a std::string_view directly.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace opreg {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view FromAbsl(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace opreg
