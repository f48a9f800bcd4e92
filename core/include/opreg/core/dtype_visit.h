// Dispatch from a runtime DType to a generic lambda over a chosen set of dtypes: the one place
// that turns "the dtypes this kernel supports" into a switch, so kernels and collectives do not
// each hand-write one (VisitDType in dtype_traits.h visits all dtypes; this visits a subset and
// rejects the rest).
//
//   VisitFloatingDType(
//       x.dtype(),
//       [&](auto tag) {
//         using T = decltype(tag);  // float, opreg::Half or opreg::BFloat16
//         Kernel(x.data<T>(), ...);
//       },
//       [&](DType d) { OPREG_THROW(kType, "MyKernel: unsupported dtype ", DTypeName(d)); });
//
// fn is called as fn(T{}) with T the core element type of the dtype, CppType<D> (float, double,
// opreg::Half, opreg::BFloat16, int8_t, ...); CUDA code maps Half and BFloat16 to __half and
// __nv_bfloat16 itself (this header includes no CUDA headers and is host code only, compiled by
// nvcc as well). Every instantiation of fn must return the same type, which the visit returns.
// Other sets than FloatingDTypes: VisitDTypeIn<DTypeSet<DType::kInt32, DType::kInt64>>(dtype, fn).
//
// Errors: for a dtype outside the set, on_unsupported(dtype) is called; it should throw, so each
// caller keeps its own wording. If it returns, or when none is given, the visit throws
// opreg::Error (kType) "unsupported dtype f64 (expected f32, f16 or bf16)" (the set's names).
//
// Thread safety: stateless; safe from any thread (as far as fn and on_unsupported are).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include "opreg/core/dtype.h"
#include "opreg/core/dtype_traits.h"
#include "opreg/core/error.h"

namespace opreg {

// The core element type of a DType (the inverse of DTypeOf): CppType<DType::kFloat16> is Half.
template <DType D>
struct CppTypeOf;

#define OPREG_DEFINE_CPP_TYPE_OF_(cpp_type, enumerator) \
  template <>                                           \
  struct CppTypeOf<DType::enumerator> {                 \
    using type = cpp_type;                              \
  };
OPREG_FORALL_DTYPES(OPREG_DEFINE_CPP_TYPE_OF_)
#undef OPREG_DEFINE_CPP_TYPE_OF_

template <DType D>
using CppType = typename CppTypeOf<D>::type;

namespace detail {

// "f32", "f32 or f16", "f32, f16 or bf16": the dtypes of a set, for error messages.
inline std::string JoinDTypeNames(std::initializer_list<DType> dtypes) {
  std::string names;
  size_t i = 0;
  for (DType dtype : dtypes) {
    if (i > 0) names += i + 1 == dtypes.size() ? " or " : ", ";
    names += DTypeName(dtype);
    ++i;
  }
  return names;
}

}  // namespace detail

// A compile-time set of dtypes, in the order the visit tests them.
template <DType... kDTypes>
struct DTypeSet {
  static_assert(sizeof...(kDTypes) > 0, "a DTypeSet needs at least one dtype");

  // Whether `dtype` is in the set.
  static constexpr bool Contains(DType dtype) { return ((dtype == kDTypes) || ...); }

  // The short names of the set's dtypes, e.g. "f32, f16 or bf16".
  static std::string Names() { return detail::JoinDTypeNames({kDTypes...}); }
};

// The floating dtypes that opreg's kernels and collectives compute in (in f32).
using FloatingDTypes = DTypeSet<DType::kFloat32, DType::kFloat16, DType::kBFloat16>;

namespace detail {

template <class Set>
[[noreturn]] void ThrowUnsupportedDType(DType dtype) {
  OPREG_THROW(kType, "unsupported dtype ", DTypeName(dtype), " (expected ", Set::Names(), ")");
}

template <class Set, DType kFirst, DType... kRest, class Fn, class OnUnsupported>
decltype(auto) VisitDTypeOf(DType dtype, Fn& fn, OnUnsupported& on_unsupported) {
  if (dtype == kFirst) return fn(CppType<kFirst>{});
  if constexpr (sizeof...(kRest) > 0) {
    return VisitDTypeOf<Set, kRest...>(dtype, fn, on_unsupported);
  } else {
    on_unsupported(dtype);
    ThrowUnsupportedDType<Set>(dtype);
  }
}

template <class Set>
struct DTypeSetVisitor;  // Undefined: Set must be a DTypeSet.

template <DType... kDTypes>
struct DTypeSetVisitor<DTypeSet<kDTypes...>> {
  template <class Fn, class OnUnsupported>
  static decltype(auto) Visit(DType dtype, Fn& fn, OnUnsupported& on_unsupported) {
    return VisitDTypeOf<DTypeSet<kDTypes...>, kDTypes...>(dtype, fn, on_unsupported);
  }
};

}  // namespace detail

// Calls fn(CppType<D>{}) for the dtype D == `dtype` of Set (a DTypeSet) and returns its result;
// for any other dtype calls on_unsupported(dtype), which should throw (see the errors above).
template <class Set, class Fn, class OnUnsupported>
decltype(auto) VisitDTypeIn(DType dtype, Fn&& fn, OnUnsupported&& on_unsupported) {
  return detail::DTypeSetVisitor<Set>::Visit(dtype, fn, on_unsupported);
}

// As above; dtypes outside Set throw the default kType error.
template <class Set, class Fn>
decltype(auto) VisitDTypeIn(DType dtype, Fn&& fn) {
  auto on_unsupported = [](DType) {};
  return detail::DTypeSetVisitor<Set>::Visit(dtype, fn, on_unsupported);
}

// VisitDTypeIn over FloatingDTypes: fn(float{}), fn(Half{}) or fn(BFloat16{}) for f32, f16, bf16.
template <class Fn, class OnUnsupported>
decltype(auto) VisitFloatingDType(DType dtype, Fn&& fn, OnUnsupported&& on_unsupported) {
  return VisitDTypeIn<FloatingDTypes>(dtype, fn, on_unsupported);
}

// As above; other dtypes throw "unsupported dtype X (expected f32, f16 or bf16)" (kType).
template <class Fn>
decltype(auto) VisitFloatingDType(DType dtype, Fn&& fn) {
  return VisitDTypeIn<FloatingDTypes>(dtype, fn);
}

}  // namespace opreg
