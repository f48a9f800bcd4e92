// PyTorch's c10::ScalarType enumerators, the one table opreg keeps of them: the schema parser's
// name table (scalar_type.cc), opreg's dtypes' torch names and codes (dtype_table.h) and
// opreg::torch_compat's c10::ScalarType enum are generated from it. (torch_stable's header-only
// copy cannot include opreg headers; a test checks it against this table.)
//
// X(enumerator, code, name, legacy_name): c10/core/ScalarType.h's enumerator and code
// (AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS, codes are positions), and the names
// torch.dtype / c10::getStringToDtypeMap know it by (`legacy_name` "" when none), as of
// PyTorch 2.7 (unchanged through 2.15).
#pragma once

#define OPREG_FORALL_TORCH_SCALAR_TYPES(X)            \
  X(Byte, 0, "uint8", "")                             \
  X(Char, 1, "int8", "")                              \
  X(Short, 2, "int16", "short")                       \
  X(Int, 3, "int32", "int")                           \
  X(Long, 4, "int64", "long")                         \
  X(Half, 5, "float16", "half")                       \
  X(Float, 6, "float32", "float")                     \
  X(Double, 7, "float64", "double")                   \
  X(ComplexHalf, 8, "complex32", "chalf")             \
  X(ComplexFloat, 9, "complex64", "cfloat")           \
  X(ComplexDouble, 10, "complex128", "cdouble")       \
  X(Bool, 11, "bool", "")                             \
  X(QInt8, 12, "qint8", "")                           \
  X(QUInt8, 13, "quint8", "")                         \
  X(QInt32, 14, "qint32", "")                         \
  X(BFloat16, 15, "bfloat16", "")                     \
  X(QUInt4x2, 16, "quint4x2", "")                     \
  X(QUInt2x4, 17, "quint2x4", "")                     \
  X(Bits1x8, 18, "bits1x8", "")                       \
  X(Bits2x4, 19, "bits2x4", "")                       \
  X(Bits4x2, 20, "bits4x2", "")                       \
  X(Bits8, 21, "bits8", "")                           \
  X(Bits16, 22, "bits16", "")                         \
  X(Float8_e5m2, 23, "float8_e5m2", "")               \
  X(Float8_e4m3fn, 24, "float8_e4m3fn", "")           \
  X(Float8_e5m2fnuz, 25, "float8_e5m2fnuz", "")       \
  X(Float8_e4m3fnuz, 26, "float8_e4m3fnuz", "")       \
  X(UInt16, 27, "uint16", "")                         \
  X(UInt32, 28, "uint32", "")                         \
  X(UInt64, 29, "uint64", "")                         \
  X(UInt1, 30, "uint1", "")                           \
  X(UInt2, 31, "uint2", "")                           \
  X(UInt3, 32, "uint3", "")                           \
  X(UInt4, 33, "uint4", "")                           \
  X(UInt5, 34, "uint5", "")                           \
  X(UInt6, 35, "uint6", "")                           \
  X(UInt7, 36, "uint7", "")                           \
  X(Int1, 37, "int1", "")                             \
  X(Int2, 38, "int2", "")                             \
  X(Int3, 39, "int3", "")                             \
  X(Int4, 40, "int4", "")                             \
  X(Int5, 41, "int5", "")                             \
  X(Int6, 42, "int6", "")                             \
  X(Int7, 43, "int7", "")                             \
  X(Float8_e8m0fnu, 44, "float8_e8m0fnu", "")         \
  X(Float4_e2m1fn_x2, 45, "float4_e2m1fn_x2", "")
