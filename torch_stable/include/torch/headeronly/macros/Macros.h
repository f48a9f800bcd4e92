// opreg::torch_stable: <torch/headeronly/macros/Macros.h>, the macros stable-ABI code and
// torch's stable headers use (C10_CONCATENATE, C10_UID, C10_STRINGIZE, C10_LIKELY,
// HIDDEN_NAMESPACE_BEGIN/END, C10_HOST_DEVICE, ...). Header-only; no opreg symbol.
#pragma once

#define C10_CONCATENATE_IMPL(s1, s2) s1##s2
#define C10_CONCATENATE(s1, s2) C10_CONCATENATE_IMPL(s1, s2)
#define C10_MACRO_EXPAND(args) args
#define C10_STRINGIZE_IMPL(x) #x
#define C10_STRINGIZE(x) C10_STRINGIZE_IMPL(x)
#define C10_UID __COUNTER__
#define C10_ANONYMOUS_VARIABLE(str) C10_CONCATENATE(str, __COUNTER__)

#if defined(__GNUC__) || defined(__clang__)
#define C10_LIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 1))
#define C10_UNLIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 0))
#define C10_ALWAYS_INLINE inline __attribute__((__always_inline__))
#define C10_NOINLINE __attribute__((__noinline__))
#else
#define C10_LIKELY(expr) (expr)
#define C10_UNLIKELY(expr) (expr)
#define C10_ALWAYS_INLINE inline
#define C10_NOINLINE
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define C10_HOST_DEVICE __host__ __device__
#define C10_DEVICE __device__
#define C10_HOST __host__
#else
#define C10_HOST_DEVICE
#define C10_DEVICE
#define C10_HOST
#endif

#define C10_API
#define TORCH_API
#define C10_UNUSED [[maybe_unused]]
#define C10_NODISCARD [[nodiscard]]

// torch's stable headers put their names in inline namespaces hidden from the ABI; these
// expand to plain nested namespaces (the names are the same to a user).
#define HIDDEN_NAMESPACE_BEGIN(...) \
  C10_MACRO_EXPAND(C10_CONCATENATE(OPREG_HNS_BEGIN_, OPREG_HNS_COUNT(__VA_ARGS__))(__VA_ARGS__))
#define HIDDEN_NAMESPACE_END(...) \
  C10_MACRO_EXPAND(C10_CONCATENATE(OPREG_HNS_END_, OPREG_HNS_COUNT(__VA_ARGS__))(__VA_ARGS__))
#define OPREG_HNS_COUNT(...) OPREG_HNS_COUNT_(__VA_ARGS__, 4, 3, 2, 1)
#define OPREG_HNS_COUNT_(a, b, c, d, n, ...) n
#define OPREG_HNS_BEGIN_1(a) namespace a {
#define OPREG_HNS_BEGIN_2(a, b) namespace a::b {
#define OPREG_HNS_BEGIN_3(a, b, c) namespace a::b::c {
#define OPREG_HNS_BEGIN_4(a, b, c, d) namespace a::b::c::d {
#define OPREG_HNS_END_1(a) }
#define OPREG_HNS_END_2(a, b) }
#define OPREG_HNS_END_3(a, b, c) }
#define OPREG_HNS_END_4(a, b, c, d) }
