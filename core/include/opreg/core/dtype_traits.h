// Compile-time mapping between C++ element types and DType, and a dispatch helper.
#pragma once

#include <cstdint>
#include <type_traits>

#include "opreg/core/dtype.h"
#include "opreg/core/half.h"

namespace opreg {

// X-macro over every dtype: _(cpp_type, DType enumerator).
#define OPREG_FORALL_DTYPES(_)            \
  _(float, kFloat32)                      \
  _(double, kFloat64)                     \
  _(::opreg::Half, kFloat16)              \
  _(::opreg::BFloat16, kBFloat16)         \
  _(int8_t, kInt8)                        \
  _(uint8_t, kUInt8)                      \
  _(int16_t, kInt16)                      \
  _(int32_t, kInt32)                      \
  _(int64_t, kInt64)                      \
  _(bool, kBool)                          \
  _(::opreg::Float8E4M3FN, kFloat8E4M3FN) \
  _(::opreg::Float8E5M2, kFloat8E5M2)    \
  _(uint16_t, kUInt16)                    \
  _(uint32_t, kUInt32)                    \
  _(uint64_t, kUInt64)

template <class T>
struct DTypeOf;  // Undefined for types that are not tensor element types.

#define OPREG_DEFINE_DTYPE_OF_(cpp_type, enumerator)  \
  template <>                                         \
  struct DTypeOf<cpp_type> {                          \
    static constexpr DType value = DType::enumerator; \
  };
OPREG_FORALL_DTYPES(OPREG_DEFINE_DTYPE_OF_)
#undef OPREG_DEFINE_DTYPE_OF_

// The DType of element type T (compile error for other types).
template <class T>
inline constexpr DType kDTypeOf = DTypeOf<std::remove_cv_t<T>>::value;

// Calls fn(T{}) with T the C++ type of `dtype` and returns its result; fn is a generic lambda.
template <class Fn>
decltype(auto) VisitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
#define OPREG_VISIT_CASE_(cpp_type, enumerator) \
  case DType::enumerator:                       \
    return fn(cpp_type{});
    OPREG_FORALL_DTYPES(OPREG_VISIT_CASE_)
#undef OPREG_VISIT_CASE_
  }
  return fn(float{});  // Unreachable for valid enumerators.
}

}  // namespace opreg
