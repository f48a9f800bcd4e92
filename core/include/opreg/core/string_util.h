// String helpers that bridge std::string_view and absl::string_view.
//
// Debian's Abseil (20220623) is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so
// absl::string_view is its own type and absl::StrCat / absl::SimpleAtoi / absl::StrSplit do not
// accept std::string_view. opreg's APIs use std::string_view; these helpers convert at the
// boundary (ToAbsl / FromAbsl come from string_view.h). opreg::StrCat is absl::StrCat that also
// takes std::string_view arguments.
//
// Thread safety: all functions are pure.
#pragma once

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "opreg/core/string_view.h"

namespace opreg {

namespace detail {
// Passes every absl::StrCat argument through unchanged, except std::string_view.
inline absl::string_view AsStrCatArg(std::string_view s) { return ToAbsl(s); }
template <class T>
const T& AsStrCatArg(const T& v) {
  return v;
}
}  // namespace detail

template <class... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(detail::AsStrCatArg(args)...);
}

template <class... Args>
void StrAppend(std::string* out, const Args&... args) {
  absl::StrAppend(out, detail::AsStrCatArg(args)...);
}

}  // namespace opreg
