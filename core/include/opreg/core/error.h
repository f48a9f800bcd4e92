// opreg's exception type and the OPREG_CHECK family of macros, plus conversions to and from
// absl::Status.
//
// Convention (docs/design.md "Errors"): parsing, registration and lookup return absl::Status /
// StatusOr; kernel-argument and tensor-API errors throw opreg::Error through OPREG_CHECK*. The
// ErrorKind of an Error selects the Python exception it maps to (ValueError, TypeError, ...).
//
// Thread safety: everything here is stateless and safe to use from any thread.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "opreg/core/macros.h"
#include "opreg/core/string_util.h"

namespace opreg {

// What went wrong, in the vocabulary of Python's built-in exceptions.
enum class ErrorKind {
  kRuntime,         // RuntimeError: an operation failed or a precondition did not hold.
  kValue,           // ValueError: an argument has the right type but a bad value.
  kType,            // TypeError: an argument or IValue has the wrong type.
  kIndex,           // IndexError: a dimension or index is out of range.
  kKey,             // KeyError: a name was not found.
  kNotImplemented,  // NotImplementedError: valid request that this build cannot serve.
};

// "RuntimeError", "ValueError", ... (the Python exception name).
std::string_view ErrorKindName(ErrorKind kind);

// The exception thrown by OPREG_CHECK*. `what()` and `message()` are the human text alone (what
// users, Python included, see); `file()`/`line()` tell where it was raised, for debugging.
class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message, const char* file = "", int line = 0);

  ErrorKind kind() const noexcept { return kind_; }
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const noexcept { return message_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  ErrorKind kind_;
  std::string message_;
  const char* file_;  // A string literal (__FILE__): never owned.
  int line_;
};

// The canonical kernel-argument error text, e.g.
//   ArgErrorMessage("mylib::rms_norm", "weight", 2, "dtype bf16", "f32") ==
//   "[mylib::rms_norm] argument 'weight' (#2): expected dtype bf16, got f32"
std::string ArgErrorMessage(std::string_view op, std::string_view arg, int index,
                            std::string_view expected, std::string_view got);

// Throws an opreg::Error for a non-OK status (no-op for OK). Mapping: InvalidArgument -> kValue,
// NotFound -> kKey, Unimplemented -> kNotImplemented, OutOfRange -> kIndex, everything else
// (FailedPrecondition, AlreadyExists, Internal, ...) -> kRuntime. The message is the status
// message.
// A status carrying the kErrorKindPayloadUrl payload (see ToStatus) maps to that kind instead.
void ThrowIfError(const absl::Status& status);

// Status payload type URL under which ToStatus records the ErrorKind name ("TypeError", ...).
inline constexpr std::string_view kErrorKindPayloadUrl = "opreg/ErrorKind";

// The inverse mapping: kValue and kType -> InvalidArgument, kKey -> NotFound, kNotImplemented
// -> Unimplemented, kIndex -> OutOfRange, kRuntime -> Internal. The status message is
// error.message() (no location); the exact kind travels as a payload under kErrorKindPayloadUrl,
// so ThrowIfError(ToStatus(e)) rethrows the same kind (kType included).
absl::Status ToStatus(const Error& error);

namespace detail {

// Builds the message of a failed check: StrCat of the user's arguments (absl::StrCat, also
// accepting std::string_view), or the default text naming the condition when there are none.
inline std::string CheckMessage(const char* condition) {
  return ::opreg::StrCat("Expected ", condition, " to be true, but got false.");
}
template <class... Args>
std::string CheckMessage(const char* /*condition*/, const Args&... args) {
  return ::opreg::StrCat(args...);
}

[[noreturn]] void ThrowError(ErrorKind kind, std::string message, const char* file, int line);

}  // namespace detail
}  // namespace opreg

// Throws opreg::Error of `kind` (an ErrorKind enumerator name such as kValue) with message
// StrCat(args...) (absl::StrCat that also accepts std::string_view).
#define OPREG_THROW(kind, ...)                                                                  \
  ::opreg::detail::ThrowError(::opreg::ErrorKind::kind, ::opreg::StrCat(__VA_ARGS__), __FILE__, \
                              __LINE__)

// OPREG_CHECK(cond, args...): if `cond` is false, throws opreg::Error with message
// StrCat(args...) (absl::StrCat that also accepts std::string_view) or, with no args, "Expected
// <cond> to be true, but got false.". The condition is evaluated exactly once; the message
// arguments only when the check fails.
#define OPREG_CHECK_WITH_KIND_(kind, cond, ...)                                                  \
  do {                                                                                           \
    if (OPREG_UNLIKELY(!(cond))) {                                                               \
      ::opreg::detail::ThrowError(::opreg::ErrorKind::kind,                                      \
                                  ::opreg::detail::CheckMessage(#cond, ##__VA_ARGS__), __FILE__, \
                                  __LINE__);                                                     \
    }                                                                                            \
  } while (false)

#define OPREG_CHECK(cond, ...) OPREG_CHECK_WITH_KIND_(kRuntime, cond, ##__VA_ARGS__)
#define OPREG_CHECK_VALUE(cond, ...) OPREG_CHECK_WITH_KIND_(kValue, cond, ##__VA_ARGS__)
#define OPREG_CHECK_TYPE(cond, ...) OPREG_CHECK_WITH_KIND_(kType, cond, ##__VA_ARGS__)
#define OPREG_CHECK_INDEX(cond, ...) OPREG_CHECK_WITH_KIND_(kIndex, cond, ##__VA_ARGS__)
#define OPREG_CHECK_NOT_IMPLEMENTED(cond, ...) \
  OPREG_CHECK_WITH_KIND_(kNotImplemented, cond, ##__VA_ARGS__)
