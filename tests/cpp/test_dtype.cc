// DType table, names, torch codes, parsing; the 16/8-bit float conversions; ScalarType table.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "opreg/core/dtype.h"
#include "opreg/core/dtype_traits.h"
#include "opreg/core/dtype_visit.h"
#include "opreg/core/half.h"
#include "opreg/core/scalar_type.h"

using opreg::DType;

namespace {

struct Row {
  DType dtype;
  const char* name;
  const char* torch_name;
  size_t size;
  int torch_code;
  bool floating;
};

const Row kRows[] = {
    {DType::kFloat32, "f32", "float32", 4, 6, true},
    {DType::kFloat64, "f64", "float64", 8, 7, true},
    {DType::kFloat16, "f16", "float16", 2, 5, true},
    {DType::kBFloat16, "bf16", "bfloat16", 2, 15, true},
    {DType::kInt8, "i8", "int8", 1, 1, false},
    {DType::kUInt8, "u8", "uint8", 1, 0, false},
    {DType::kInt16, "i16", "int16", 2, 2, false},
    {DType::kInt32, "i32", "int32", 4, 3, false},
    {DType::kInt64, "i64", "int64", 8, 4, false},
    {DType::kBool, "bool", "bool", 1, 11, false},
    {DType::kFloat8E4M3FN, "f8e4m3fn", "float8_e4m3fn", 1, 24, true},
    {DType::kFloat8E5M2, "f8e5m2", "float8_e5m2", 1, 23, true},
    {DType::kUInt16, "u16", "uint16", 2, 27, false},
    {DType::kUInt32, "u32", "uint32", 4, 28, false},
    {DType::kUInt64, "u64", "uint64", 8, 29, false},
};

}  // namespace

TEST_CASE("dtype table: names, sizes, torch codes") {
  REQUIRE(std::size(kRows) == static_cast<size_t>(opreg::kNumDTypes));
  for (const Row& row : kRows) {
    INFO(row.name);
    CHECK(opreg::DTypeName(row.dtype) == row.name);
    CHECK(opreg::TorchDTypeName(row.dtype) == row.torch_name);
    CHECK(opreg::ItemSize(row.dtype) == row.size);
    CHECK(opreg::TorchScalarTypeCode(row.dtype) == row.torch_code);
    CHECK(opreg::IsFloatingPoint(row.dtype) == row.floating);
    CHECK(opreg::DTypeFromTorchScalarTypeCode(row.torch_code) == row.dtype);
    // Both spellings parse back to the same dtype.
    CHECK(opreg::ParseDType(row.name).value() == row.dtype);
    CHECK(opreg::ParseDType(row.torch_name).value() == row.dtype);
    CHECK(opreg::ParseDType(std::string("torch.") + row.torch_name).value() == row.dtype);
  }
  static_assert(opreg::ItemSize(DType::kBFloat16) == 2, "ItemSize is constexpr");
}

TEST_CASE("dtype: torch aliases and unknown names") {
  CHECK(opreg::ParseDType("half").value() == DType::kFloat16);
  CHECK(opreg::ParseDType("float").value() == DType::kFloat32);
  CHECK(opreg::ParseDType("double").value() == DType::kFloat64);
  CHECK(opreg::ParseDType("long").value() == DType::kInt64);
  CHECK(opreg::ParseDType("int").value() == DType::kInt32);
  CHECK(opreg::ParseDType("short").value() == DType::kInt16);
  auto bad = opreg::ParseDType("f33");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()),
             Catch::StartsWith("unknown dtype 'f33' (expected one of f32/float32, f64/float64,"));
  CHECK_FALSE(opreg::ParseDType("").ok());
  CHECK_FALSE(opreg::ParseDType("F32").ok());                       // Case-sensitive, as torch.
  CHECK_FALSE(opreg::DTypeFromTorchScalarTypeCode(9).has_value());  // ComplexFloat.
  CHECK_FALSE(opreg::DTypeFromTorchScalarTypeCode(-1).has_value());
}

TEST_CASE("dtype: every torch code with no opreg dtype, and codes past torch's, give none") {
  int found = 0;
  for (int64_t code : {int64_t{-129}, int64_t{-1}, int64_t{46}, int64_t{127}, int64_t{255},
                       int64_t{256}, int64_t{1} << 40, std::numeric_limits<int64_t>::min()}) {
    INFO(code);
    CHECK_FALSE(opreg::DTypeFromTorchScalarTypeCode(code).has_value());
  }
  for (int64_t code = 0; code < 256; ++code) {
    const std::optional<DType> d = opreg::DTypeFromTorchScalarTypeCode(code);
    if (!d) continue;
    ++found;
    CHECK(opreg::TorchScalarTypeCode(*d) == code);
  }
  CHECK(found == opreg::kNumDTypes);  // Each dtype is found at its own code and nowhere else.
}

TEST_CASE("dtype traits map C++ types") {
  static_assert(opreg::kDTypeOf<float> == DType::kFloat32);
  static_assert(opreg::kDTypeOf<const opreg::BFloat16> == DType::kBFloat16);
  static_assert(opreg::kDTypeOf<bool> == DType::kBool);
  for (const Row& row : kRows) {
    const size_t size = opreg::VisitDType(row.dtype, [](auto tag) { return sizeof(tag); });
    CHECK(size == row.size);
  }
}

TEST_CASE("torch ScalarType table") {
  auto table = opreg::TorchScalarTypeTable();
  REQUIRE(table.size() == 46);
  CHECK(table[15].enum_name == "BFloat16");
  CHECK(opreg::TorchScalarTypeFromName("bfloat16") == 15);
  const std::pair<const char*, int64_t> names[] = {
      {"float32", 6},
      {"float", 6},
      {"float64", 7},
      {"double", 7},
      {"float16", 5},
      {"half", 5},
      {"int8", 1},
      {"uint8", 0},
      {"int16", 2},
      {"short", 2},
      {"int32", 3},
      {"int", 3},
      {"int64", 4},
      {"long", 4},
      {"bool", 11},
      {"complex32", 8},
      {"chalf", 8},
      {"complex64", 9},
      {"cfloat", 9},
      {"complex128", 10},
      {"cdouble", 10},
      {"qint8", 12},
      {"quint8", 13},
      {"qint32", 14},
      {"quint4x2", 16},
      {"quint2x4", 17},
      {"bits1x8", 18},
      {"bits2x4", 19},
      {"bits4x2", 20},
      {"bits8", 21},
      {"bits16", 22},
      {"float8_e5m2", 23},
      {"float8_e4m3fn", 24},
      {"float8_e5m2fnuz", 25},
      {"float8_e4m3fnuz", 26},
      {"uint16", 27},
      {"uint32", 28},
      {"uint64", 29},
      {"float8_e8m0fnu", 44},
      {"torch.long", 4},
  };
  for (const auto& [name, code] : names) {
    INFO(name);
    CHECK(opreg::TorchScalarTypeFromName(name) == code);
  }
  CHECK_FALSE(opreg::TorchScalarTypeFromName("Float").has_value());
  CHECK_FALSE(opreg::TorchScalarTypeFromName("").has_value());
  CHECK_FALSE(opreg::TorchScalarTypeFromName("bfloat").has_value());
  REQUIRE(opreg::TorchScalarTypeFromCode(24) != nullptr);
  CHECK(opreg::TorchScalarTypeFromCode(24)->name == "float8_e4m3fn");
  CHECK(opreg::TorchScalarTypeFromCode(46) == nullptr);
  // Every dtype's torch code agrees with the table.
  for (const Row& row : kRows) CHECK(table[row.torch_code].name == row.torch_name);
}

namespace {

template <class T>
uint32_t Bits(float f) {
  return T(f).x;
}
template <class T>
float Value(uint32_t bits) {
  using Raw = decltype(T{}.x);
  return static_cast<float>(T(static_cast<Raw>(bits), opreg::kFromBits));
}

}  // namespace

TEST_CASE("Half conversions") {
  using opreg::Half;
  CHECK(Bits<Half>(0.0f) == 0x0000);
  CHECK(Bits<Half>(-0.0f) == 0x8000);
  CHECK(Bits<Half>(1.0f) == 0x3c00);
  CHECK(Bits<Half>(-2.0f) == 0xc000);
  CHECK(Bits<Half>(65504.0f) == 0x7bff);
  CHECK(Bits<Half>(65519.0f) == 0x7bff);  // Below the halfway point to 65536.
  CHECK(Bits<Half>(65520.0f) == 0x7c00);  // Halfway rounds to even: infinity.
  CHECK(Bits<Half>(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(Bits<Half>(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(Bits<Half>(std::ldexp(1.0f, -24)) == 0x0001);  // Smallest subnormal.
  CHECK(Bits<Half>(std::ldexp(1.0f, -25)) == 0x0000);  // Halfway to it: ties to even (0).
  CHECK(Bits<Half>(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(Bits<Half>(std::ldexp(1.0f, -14)) == 0x0400);  // Smallest normal.
  CHECK(Bits<Half>(0.1f) == 0x2e66);
  CHECK(Bits<Half>(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // Tie -> even mantissa 0.
  CHECK(Bits<Half>(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // Tie -> even mantissa 2.
  CHECK((Bits<Half>(std::nanf("")) & 0x7c00) == 0x7c00);
  CHECK((Bits<Half>(std::nanf("")) & 0x03ff) != 0);
  CHECK(Value<Half>(0x3c00) == 1.0f);
  CHECK(Value<Half>(0x7bff) == 65504.0f);
  CHECK(Value<Half>(0x0001) == std::ldexp(1.0f, -24));
  CHECK(Value<Half>(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(std::isinf(Value<Half>(0xfc00)));
  CHECK(std::isnan(Value<Half>(0x7e00)));
  CHECK(std::signbit(Value<Half>(0x8000)));
  // Every finite half round-trips exactly.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7c00) == 0x7c00) continue;
    if (Bits<Half>(Value<Half>(b)) != b) FAIL("half round trip failed for bits " << b);
  }
}

TEST_CASE("BFloat16 conversions") {
  using opreg::BFloat16;
  CHECK(Bits<BFloat16>(1.0f) == 0x3f80);
  CHECK(Bits<BFloat16>(-1.0f) == 0xbf80);
  CHECK(Bits<BFloat16>(3.140625f) == 0x4049);
  CHECK(Bits<BFloat16>(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);        // Tie -> even.
  CHECK(Bits<BFloat16>(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);    // Tie -> even (up).
  CHECK(Bits<BFloat16>(std::numeric_limits<float>::max()) == 0x7f80);  // Rounds to inf.
  CHECK(Bits<BFloat16>(std::nanf("")) == 0x7fc0);
  CHECK(Value<BFloat16>(0x4049) == 3.140625f);
  CHECK(std::isnan(Value<BFloat16>(0x7fc1)));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7f80) == 0x7f80) continue;
    if (Bits<BFloat16>(Value<BFloat16>(b)) != b) FAIL("bf16 round trip failed for bits " << b);
  }
}

TEST_CASE("Float8E4M3FN conversions saturate") {
  using opreg::Float8E4M3FN;
  CHECK(Bits<Float8E4M3FN>(1.0f) == 0x38);
  CHECK(Bits<Float8E4M3FN>(-1.0f) == 0xb8);
  CHECK(Bits<Float8E4M3FN>(448.0f) == 0x7e);
  CHECK(Bits<Float8E4M3FN>(464.0f) == 0x7e);  // Would round up past the max: saturates.
  CHECK(Bits<Float8E4M3FN>(1e6f) == 0x7e);
  CHECK(Bits<Float8E4M3FN>(-1e6f) == 0xfe);
  CHECK(Bits<Float8E4M3FN>(std::numeric_limits<float>::infinity()) == 0x7e);
  CHECK(Bits<Float8E4M3FN>(std::nanf("")) == 0x7f);
  CHECK(Bits<Float8E4M3FN>(-std::nanf("")) == 0xff);
  CHECK(Bits<Float8E4M3FN>(std::ldexp(1.0f, -9)) == 0x01);   // Smallest subnormal.
  CHECK(Bits<Float8E4M3FN>(std::ldexp(1.0f, -10)) == 0x00);  // Tie -> even (0).
  CHECK(Bits<Float8E4M3FN>(0.3f) == 0x2a);                   // 1.2 * 2^-2 rounds to 1.25 * 2^-2.
  CHECK(Value<Float8E4M3FN>(0x2a) == 0.3125f);
  CHECK(Value<Float8E4M3FN>(0x7e) == 448.0f);
  CHECK(Value<Float8E4M3FN>(0x78) == 256.0f);  // Exponent 15 is a normal binade.
  CHECK(std::isnan(Value<Float8E4M3FN>(0x7f)));
  CHECK(std::isnan(Value<Float8E4M3FN>(0xff)));
  CHECK(Value<Float8E4M3FN>(0x01) == std::ldexp(1.0f, -9));
  for (uint32_t b = 0; b < 0x100; ++b) {
    if ((b & 0x7f) == 0x7f) continue;
    if (Bits<Float8E4M3FN>(Value<Float8E4M3FN>(b)) != b) FAIL("e4m3fn round trip: " << b);
  }
}

TEST_CASE("Float8E5M2 conversions") {
  using opreg::Float8E5M2;
  CHECK(Bits<Float8E5M2>(1.0f) == 0x3c);
  CHECK(Bits<Float8E5M2>(57344.0f) == 0x7b);
  CHECK(Bits<Float8E5M2>(61440.0f) == 0x7c);  // Halfway past the max: ties to even = inf.
  CHECK(Bits<Float8E5M2>(-std::numeric_limits<float>::infinity()) == 0xfc);
  CHECK(Bits<Float8E5M2>(std::ldexp(1.0f, -16)) == 0x01);
  CHECK((Bits<Float8E5M2>(std::nanf("")) & 0x7f) > 0x7c);
  CHECK(Value<Float8E5M2>(0x7b) == 57344.0f);
  CHECK(std::isinf(Value<Float8E5M2>(0x7c)));
  CHECK(std::isnan(Value<Float8E5M2>(0x7d)));
  for (uint32_t b = 0; b < 0x100; ++b) {
    if ((b & 0x7c) == 0x7c) continue;
    if (Bits<Float8E5M2>(Value<Float8E5M2>(b)) != b) FAIL("e5m2 round trip: " << b);
  }
}

TEST_CASE("VisitDTypeIn visits the types of its set and rejects the others", "[dtype]") {
  using opreg::DType;
  CHECK(opreg::FloatingDTypes::Contains(DType::kBFloat16));
  CHECK_FALSE(opreg::FloatingDTypes::Contains(DType::kFloat64));
  CHECK(opreg::FloatingDTypes::Names() == "f32, f16 or bf16");
  CHECK(opreg::VisitFloatingDType(DType::kFloat16, [](auto tag) { return sizeof(tag); }) == 2);
  CHECK(std::is_same_v<opreg::CppType<DType::kBFloat16>, opreg::BFloat16>);
  CHECK_THROWS_WITH(opreg::VisitFloatingDType(DType::kInt32, [](auto) {}),
                    Catch::Contains("unsupported dtype i32 (expected f32, f16 or bf16)"));
  // The caller's own error wins over the default one.
  CHECK_THROWS_WITH(
      opreg::VisitFloatingDType(
          DType::kFloat64, [](auto) {},
          [](DType d) { OPREG_THROW(kType, "mine: ", opreg::DTypeName(d)); }),
      Catch::Contains("mine: f64"));
  using IntTypes = opreg::DTypeSet<DType::kInt32, DType::kInt64>;
  CHECK(opreg::VisitDTypeIn<IntTypes>(DType::kInt64, [](auto tag) { return sizeof(tag); }) == 8);
  CHECK_THROWS_WITH(opreg::VisitDTypeIn<IntTypes>(DType::kFloat32, [](auto) {}),
                    Catch::Contains("(expected i32 or i64)"));
}
