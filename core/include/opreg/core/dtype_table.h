// opreg's dtypes, the one table of their facts: DType's enumerators and sizes (dtype.h), names
// and kinds (dtype.cc), C++ element types (dtype_traits.h's OPREG_FORALL_DTYPES), torch names
// and codes (looked up in torch_scalar_types.h by the ScalarType enumerator given here) and
// DLPack codes (dlpack.cc) are generated from it. Adding a dtype is one row here
// (docs/extending.md lists what else it touches).
//
// OPREG_DTYPE_TABLE(X, A) expands X(A, enumerator, short_name, torch_scalar_type, item_size,
// floating, dlpack_code, cpp_type) per dtype; A is passed through untouched (for adapters).
// `enumerator` becomes DType::k<enumerator>; `torch_scalar_type` is the c10::ScalarType
// enumerator of the same element type; `dlpack_code` a DLDataTypeCode (or opreg's constants for
// the codes DLPack 1.0 added, dlpack.h), with `item_size` * 8 bits and one lane. The order is
// DType's (enumerator values are stored: keep it, append new rows).
#pragma once

// clang-format off
#define OPREG_DTYPE_TABLE(X, A)                                                                  \
  X(A, Float32, "f32", Float, 4, true, kDLFloat, float)                                          \
  X(A, Float64, "f64", Double, 8, true, kDLFloat, double)                                        \
  X(A, Float16, "f16", Half, 2, true, kDLFloat, ::opreg::Half)                                   \
  X(A, BFloat16, "bf16", BFloat16, 2, true, kDLBfloat, ::opreg::BFloat16)                        \
  X(A, Int8, "i8", Char, 1, false, kDLInt, int8_t)                                               \
  X(A, UInt8, "u8", Byte, 1, false, kDLUInt, uint8_t)                                            \
  X(A, Int16, "i16", Short, 2, false, kDLInt, int16_t)                                           \
  X(A, Int32, "i32", Int, 4, false, kDLInt, int32_t)                                             \
  X(A, Int64, "i64", Long, 8, false, kDLInt, int64_t)                                            \
  X(A, Bool, "bool", Bool, 1, false, kDLPackBoolCode, bool)                                      \
  X(A, Float8E4M3FN, "f8e4m3fn", Float8_e4m3fn, 1, true, kDLPackFloat8E4M3FNCode,                \
    ::opreg::Float8E4M3FN)                                                                       \
  X(A, Float8E5M2, "f8e5m2", Float8_e5m2, 1, true, kDLPackFloat8E5M2Code, ::opreg::Float8E5M2)   \
  X(A, UInt16, "u16", UInt16, 2, false, kDLUInt, uint16_t)                                       \
  X(A, UInt32, "u32", UInt32, 4, false, kDLUInt, uint32_t)                                       \
  X(A, UInt64, "u64", UInt64, 8, false, kDLUInt, uint64_t)
// clang-format on
