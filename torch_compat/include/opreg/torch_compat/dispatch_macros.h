// AT_DISPATCH_*: libtorch's macros that run a lambda with `scalar_t` bound to the C++ element
// type of a runtime ScalarType. Only the listed types are instantiated (unlike opreg's
// VisitDType, which instantiates all twelve), so a kernel written for floating types compiles
// only for those.
//
// Errors: a ScalarType outside the listed cases throws opreg::Error (kNotImplemented):
// "\"<name>\" not implemented for '<type>'", torch's wording.
#pragma once

#include "opreg/torch_compat/macros.h"
#include "opreg/torch_compat/scalar_type.h"

namespace c10::detail {
inline ::c10::ScalarType scalar_type(::c10::ScalarType s) { return s; }
inline ::c10::ScalarType scalar_type(::c10::TypeMeta t) { return t.toScalarType(); }
}  // namespace c10::detail

#define AT_PRIVATE_CASE_TYPE_USING_HINT(enum_type, HINT, ...)                   \
  case enum_type: {                                                             \
    using HINT [[maybe_unused]] = ::c10::impl::ScalarTypeToCPPTypeT<enum_type>; \
    return __VA_ARGS__();                                                       \
  }

#define AT_DISPATCH_CASE(enum_type, ...) \
  AT_PRIVATE_CASE_TYPE_USING_HINT(enum_type, scalar_t, __VA_ARGS__)

#define AT_DISPATCH_SWITCH(TYPE, NAME, ...)                                                   \
  [&] {                                                                                       \
    const auto& the_type = TYPE;                                                              \
    constexpr const char* at_dispatch_name = NAME;                                            \
    const ::c10::ScalarType _st = ::c10::detail::scalar_type(the_type);                       \
    switch (_st) {                                                                            \
      __VA_ARGS__                                                                             \
      default:                                                                                \
        TORCH_CHECK_NOT_IMPLEMENTED(false, '"', at_dispatch_name, "\" not implemented for '", \
                                    ::c10::toString(_st), "'");                               \
    }                                                                                         \
  }()

#define AT_DISPATCH_CASE_FLOATING_TYPES(...)               \
  AT_DISPATCH_CASE(::c10::ScalarType::Double, __VA_ARGS__) \
  AT_DISPATCH_CASE(::c10::ScalarType::Float, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))

#define AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(...) \
  AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)        \
  AT_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(__VA_ARGS__))

#define AT_DISPATCH_CASE_REDUCED_FLOATING_TYPES(...)     \
  AT_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__) \
  AT_DISPATCH_CASE(::c10::ScalarType::BFloat16, __VA_ARGS__)
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_REDUCED_FLOATING_TYPES(__VA_ARGS__))

#define AT_DISPATCH_CASE_FLOATING_TYPES_AND(SCALARTYPE, ...) \
  AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)               \
  AT_DISPATCH_CASE(SCALARTYPE, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES_AND(SCALARTYPE, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND(SCALARTYPE, __VA_ARGS__))

#define AT_DISPATCH_CASE_FLOATING_TYPES_AND2(SCALARTYPE1, SCALARTYPE2, ...) \
  AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)                              \
  AT_DISPATCH_CASE(SCALARTYPE1, __VA_ARGS__)                                \
  AT_DISPATCH_CASE(SCALARTYPE2, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES_AND2(SCALARTYPE1, SCALARTYPE2, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME,                                                   \
                     AT_DISPATCH_CASE_FLOATING_TYPES_AND2(SCALARTYPE1, SCALARTYPE2, __VA_ARGS__))

#define AT_DISPATCH_CASE_INTEGRAL_TYPES(...)             \
  AT_DISPATCH_CASE(::c10::ScalarType::Byte, __VA_ARGS__) \
  AT_DISPATCH_CASE(::c10::ScalarType::Char, __VA_ARGS__) \
  AT_DISPATCH_CASE(::c10::ScalarType::Int, __VA_ARGS__)  \
  AT_DISPATCH_CASE(::c10::ScalarType::Long, __VA_ARGS__) \
  AT_DISPATCH_CASE(::c10::ScalarType::Short, __VA_ARGS__)
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES_AND(SCALARTYPE, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME,                                    \
                     AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__)   \
                         AT_DISPATCH_CASE(SCALARTYPE, __VA_ARGS__))

#define AT_DISPATCH_CASE_ALL_TYPES(...)        \
  AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) \
  AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND(SCALARTYPE, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME,                               \
                     AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__)   \
                         AT_DISPATCH_CASE(SCALARTYPE, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND2(SCALARTYPE1, SCALARTYPE2, TYPE, NAME, ...)  \
  AT_DISPATCH_SWITCH(TYPE, NAME,                                               \
                     AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE( \
                         SCALARTYPE1, __VA_ARGS__) AT_DISPATCH_CASE(SCALARTYPE2, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND3(SCALARTYPE1, SCALARTYPE2, SCALARTYPE3, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(                                                                      \
      TYPE, NAME,                                                                          \
      AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(SCALARTYPE1, __VA_ARGS__)   \
          AT_DISPATCH_CASE(SCALARTYPE2, __VA_ARGS__) AT_DISPATCH_CASE(SCALARTYPE3, __VA_ARGS__))
#define AT_DISPATCH_CASE_FLOAT8_TYPES(...)                      \
  AT_DISPATCH_CASE(::c10::ScalarType::Float8_e5m2, __VA_ARGS__) \
  AT_DISPATCH_CASE(::c10::ScalarType::Float8_e4m3fn, __VA_ARGS__)
#define AT_DISPATCH_FLOAT8_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOAT8_TYPES(__VA_ARGS__))
