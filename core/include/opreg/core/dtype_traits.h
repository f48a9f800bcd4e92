// Compile-time mapping between C++ element types and DType, and a dispatch helper.
#pragma once

#include <cstdint>
#include <type_traits>

#include "opreg/core/dtype.h"
#include "opreg/core/half.h"

namespace opreg {

// X-macro over every dtype: _(cpp_type, DType enumerator), from dtype_table.h.
#define OPREG_DTYPE_CPP_TYPE_(_, e, short_name, torch, size, floating, dlpack, cpp_type) \
  _(cpp_type, k##e)
#define OPREG_FORALL_DTYPES(_) OPREG_DTYPE_TABLE(OPREG_DTYPE_CPP_TYPE_, _)

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
