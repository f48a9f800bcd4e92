// libtorch's error and portability macros for kernel code built against opreg::torch_compat:
// TORCH_CHECK and its kinds, TORCH_INTERNAL_ASSERT, TORCH_WARN, c10::str, the C10_* attributes.
//
// Errors: every failed check throws opreg::Error (c10::Error is the same type; the kinds below
// throw libtorch's subclasses c10::ValueError, TypeError, IndexError, NotImplementedError),
// whose kind maps to the Python exception torch raises for the same macro: TORCH_CHECK ->
// RuntimeError,
// TORCH_CHECK_VALUE -> ValueError, TORCH_CHECK_TYPE -> TypeError, TORCH_CHECK_INDEX ->
// IndexError, TORCH_CHECK_NOT_IMPLEMENTED -> NotImplementedError. The message is the
// concatenation of the arguments through operator<< (as c10::str), so anything printable
// (sizes, dtypes, devices) may be passed.
//
// Thread safety: all of it may be used from any thread.
#pragma once

#include <sstream>
#include <string>
#include <utility>

#include "opreg/core/error.h"

namespace c10 {

using Error = ::opreg::Error;

// libtorch's error subclasses, thrown by the TORCH_CHECK_* macros of their kind, so that a
// `catch (const c10::IndexError&)` written for libtorch works. Errors opreg itself raises (an
// op's argument checks) are plain c10::Error of the same kind.
#define OPREG_TORCH_ERROR_CLASS_(name, kind)                                            \
  class name : public Error {                                                           \
   public:                                                                              \
    explicit name(std::string message, const char* file = "", int line = 0)             \
        : Error(::opreg::ErrorKind::kind, std::move(message), file, line) {}            \
  };
OPREG_TORCH_ERROR_CLASS_(ValueError, kValue)
OPREG_TORCH_ERROR_CLASS_(TypeError, kType)
OPREG_TORCH_ERROR_CLASS_(IndexError, kIndex)
OPREG_TORCH_ERROR_CLASS_(NotImplementedError, kNotImplemented)
#undef OPREG_TORCH_ERROR_CLASS_

// The arguments printed one after another (torch's c10::str).
template <class... Args>
std::string str(const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return std::string();
  } else {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
  }
}

namespace detail {

// The message of a failed TORCH_CHECK: the user's text, or torch's default naming the condition.
template <class... Args>
std::string CheckMsg(const char* condition, const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return ::c10::str("Expected ", condition, " to be true, but got false.");
  } else {
    return ::c10::str(args...);
  }
}

[[noreturn]] inline void Fail(::opreg::ErrorKind kind, std::string message, const char* file,
                              int line) {
  switch (kind) {
    case ::opreg::ErrorKind::kValue:
      throw ValueError(std::move(message), file, line);
    case ::opreg::ErrorKind::kType:
      throw TypeError(std::move(message), file, line);
    case ::opreg::ErrorKind::kIndex:
      throw IndexError(std::move(message), file, line);
    case ::opreg::ErrorKind::kNotImplemented:
      throw NotImplementedError(std::move(message), file, line);
    default:
      throw ::opreg::Error(kind, std::move(message), file, line);
  }
}

// Logs a TORCH_WARN message on opreg's logger (out of line, so that kernel translation units do
// not compile spdlog and fmt: nvcc in C++20 mode rejects fmt's consteval format strings).
void Warn(const std::string& message, const char* file, int line);

}  // namespace detail
}  // namespace c10

#define C10_LIKELY(x) __builtin_expect(static_cast<bool>(x), 1)
#define C10_UNLIKELY(x) __builtin_expect(static_cast<bool>(x), 0)
#define C10_ALWAYS_INLINE inline __attribute__((__always_inline__))
#define C10_NOINLINE __attribute__((__noinline__))
#define C10_UNUSED __attribute__((__unused__))
#define C10_API
#define TORCH_API
#if defined(__CUDACC__) || defined(__HIPCC__)
#define C10_HOST_DEVICE __host__ __device__
#define C10_DEVICE __device__
#define C10_HOST __host__
#else
#define C10_HOST_DEVICE
#define C10_DEVICE
#define C10_HOST
#endif
#define C10_STRINGIZE_IMPL(x) #x
#define C10_STRINGIZE(x) C10_STRINGIZE_IMPL(x)
#define C10_CONCATENATE_IMPL(s1, s2) s1##s2
#define C10_CONCATENATE(s1, s2) C10_CONCATENATE_IMPL(s1, s2)
#define C10_UID __COUNTER__

// An `if` statement, as libtorch's: code that omits the `;` after TORCH_CHECK(...) compiles.
#define OPREG_TORCH_CHECK_KIND_(kind, cond, ...)                                                 \
  if (C10_UNLIKELY(!(cond))) {                                                                   \
    ::c10::detail::Fail(::opreg::ErrorKind::kind, ::c10::detail::CheckMsg(#cond, ##__VA_ARGS__), \
                        __FILE__, __LINE__);                                                     \
  }

#define TORCH_CHECK(cond, ...) OPREG_TORCH_CHECK_KIND_(kRuntime, cond, ##__VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) OPREG_TORCH_CHECK_KIND_(kValue, cond, ##__VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) OPREG_TORCH_CHECK_KIND_(kType, cond, ##__VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) OPREG_TORCH_CHECK_KIND_(kIndex, cond, ##__VA_ARGS__)
#define TORCH_CHECK_LINALG(cond, ...) OPREG_TORCH_CHECK_KIND_(kRuntime, cond, ##__VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) \
  OPREG_TORCH_CHECK_KIND_(kNotImplemented, cond, ##__VA_ARGS__)
#define TORCH_CHECK_ARG(cond, argN, ...) \
  TORCH_CHECK(cond, "invalid argument ", argN, ": ", ##__VA_ARGS__)

// Comparison checks (glog style in libtorch, where they abort): here they throw, printing both
// values.
#define OPREG_TORCH_CHECK_OP_(a, b, op)                                                            \
  do {                                                                                             \
    const auto& opreg_lhs_ = (a);                                                                  \
    const auto& opreg_rhs_ = (b);                                                                  \
    if (C10_UNLIKELY(!(opreg_lhs_ op opreg_rhs_))) {                                               \
      ::c10::detail::Fail(::opreg::ErrorKind::kRuntime,                                            \
                          ::c10::str("Check failed: " #a " " #op " " #b " (", opreg_lhs_, " vs. ", \
                                     opreg_rhs_, ")"),                                             \
                          __FILE__, __LINE__);                                                     \
    }                                                                                              \
  } while (false)
#define TORCH_CHECK_EQ(a, b) OPREG_TORCH_CHECK_OP_(a, b, ==)
#define TORCH_CHECK_NE(a, b) OPREG_TORCH_CHECK_OP_(a, b, !=)
#define TORCH_CHECK_LE(a, b) OPREG_TORCH_CHECK_OP_(a, b, <=)
#define TORCH_CHECK_LT(a, b) OPREG_TORCH_CHECK_OP_(a, b, <)
#define TORCH_CHECK_GE(a, b) OPREG_TORCH_CHECK_OP_(a, b, >=)
#define TORCH_CHECK_GT(a, b) OPREG_TORCH_CHECK_OP_(a, b, >)

// c10/util/Logging.h's glog-style CHECK(cond): libtorch logs and aborts the process when it
// fails; here it raises RuntimeError "Check failed: cond" (a kernel's failure stays the
// caller's). Defined only when nothing else (glog, a test framework) has defined CHECK.
#ifndef CHECK
#define CHECK(condition) TORCH_CHECK(condition, "Check failed: " #condition " ")
#endif

#define TORCH_INTERNAL_ASSERT(cond, ...)                                                        \
  do {                                                                                          \
    if (C10_UNLIKELY(!(cond))) {                                                                \
      ::c10::detail::Fail(::opreg::ErrorKind::kRuntime,                                         \
                          ::c10::str("INTERNAL ASSERT FAILED at \"", __FILE__, "\":", __LINE__, \
                                     ", please report a bug to the kernel library. "            \
                                     "Expected " #cond " to be true, but got false. ",          \
                                     ##__VA_ARGS__),                                            \
                          __FILE__, __LINE__);                                                  \
    }                                                                                           \
  } while (false)
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) \
  do {                                              \
  } while (false)

#define TORCH_WARN(...) ::c10::detail::Warn(::c10::str(__VA_ARGS__), __FILE__, __LINE__)
#define TORCH_WARN_ONCE(...)                                            \
  do {                                                                  \
    static const bool opreg_warned_ = [&] {                             \
      ::c10::detail::Warn(::c10::str(__VA_ARGS__), __FILE__, __LINE__); \
      return true;                                                      \
    }();                                                                \
    (void)opreg_warned_;                                                \
  } while (false)
// The older spelling of an unconditional error (deprecated in libtorch, still common).
#define AT_ERROR(...) TORCH_CHECK(false, ##__VA_ARGS__)
// torch/headeronly's check (libtorch >= 2.9), which stable-ABI code uses.
#define STD_TORCH_CHECK(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)

#define TORCH_SELECTIVE_SCHEMA(schema) schema
#define TORCH_SELECTIVE_NAME(name) name
