// IValue: every tag, accessors and their errors, equality, cheap copies/moves, printing.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "opreg/core/ivalue.h"
#include "opreg/core/tensor_factories.h"

using opreg::Device;
using opreg::DType;
using opreg::IValue;
using opreg::Tensor;
using Tag = IValue::Tag;

namespace {

std::string Str(const IValue& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

class Widget : public opreg::CustomClassHolder {
 public:
  std::string_view class_name() const override { return "__torch__.torch.classes.test.Widget"; }
};

class Gadget : public opreg::CustomClassHolder {
 public:
  std::string_view class_name() const override { return "Gadget"; }
};

}  // namespace

TEST_CASE("every tag from its constructor") {
  Tensor t = opreg::zeros({2}, DType::kFloat32);
  auto w = opreg::make_intrusive<Widget>();
  const std::pair<IValue, Tag> cases[] = {
      {IValue(), Tag::kNone},
      {IValue(std::nullopt), Tag::kNone},
      {IValue(t), Tag::kTensor},
      {IValue(int64_t{5}), Tag::kInt},
      {IValue(5), Tag::kInt},
      {IValue(2.5), Tag::kDouble},
      {IValue(2.5f), Tag::kDouble},
      {IValue(std::complex<double>(1, 2)), Tag::kComplex},
      {IValue(true), Tag::kBool},
      {IValue("text"), Tag::kString},  // const char* must not become bool.
      {IValue(std::string("s")), Tag::kString},
      {IValue(std::string_view("sv")), Tag::kString},
      {IValue(Device::cuda(0)), Tag::kDevice},
      {IValue(std::vector<int64_t>{1, 2}), Tag::kIntList},
      {IValue(std::vector<double>{1.5}), Tag::kDoubleList},
      {IValue(std::vector<bool>{true, false}), Tag::kBoolList},
      {IValue(std::vector<std::complex<double>>{{1, 1}}), Tag::kComplexList},
      {IValue(std::vector<std::string>{"a"}), Tag::kStringList},
      {IValue(std::vector<Tensor>{t}), Tag::kTensorList},
      {IValue(std::vector<std::optional<Tensor>>{t, std::nullopt}), Tag::kOptionalTensorList},
      {IValue::GenericList({IValue(1), IValue("x")}), Tag::kGenericList},
      {IValue::Tuple({IValue(1)}), Tag::kTuple},
      {IValue(w), Tag::kObject},
      {IValue(std::optional<int64_t>()), Tag::kNone},
      {IValue(std::optional<int64_t>(3)), Tag::kInt},
      {IValue(std::optional<Tensor>(t)), Tag::kTensor},
  };
  for (const auto& [value, tag] : cases) {
    INFO(IValue::TagName(tag));
    CHECK(value.tag() == tag);
  }
  CHECK(IValue(t).isTensor());
  CHECK(IValue(1).isScalar());
  CHECK(IValue(1.0).isScalar());
  CHECK(IValue(false).isScalar());
  CHECK(IValue(std::complex<double>()).isScalar());
  CHECK_FALSE(IValue("1").isScalar());
  CHECK(IValue(std::vector<int64_t>{}).isList());
  CHECK_FALSE(IValue::Tuple({}).isList());
  CHECK(IValue(opreg::intrusive_ptr<opreg::CustomClassHolder>()).isNone());
}

TEST_CASE("accessors return values and reject other tags") {
  CHECK(IValue(7).toInt() == 7);
  CHECK(IValue(0.5).toDouble() == 0.5);
  CHECK(IValue(std::complex<double>(1, -2)).toComplex() == std::complex<double>(1, -2));
  CHECK(IValue(true).toBool());
  CHECK(IValue("abc").toStringRef() == "abc");
  CHECK(IValue("abc").toStringView() == "abc");
  CHECK(IValue(Device::cuda(1)).toDevice() == Device::cuda(1));
  CHECK(IValue(std::vector<int64_t>{1, 2}).toIntList() == std::vector<int64_t>{1, 2});
  CHECK(IValue(std::vector<double>{0.5}).toDoubleList() == std::vector<double>{0.5});
  CHECK(IValue(std::vector<bool>{true}).toBoolList() == std::vector<bool>{true});
  CHECK(IValue(std::vector<std::string>{"a", "b"}).toStringList()[1] == "b");
  CHECK(IValue::GenericList({IValue(1)}).toGenericList()[0].toInt() == 1);
  CHECK(IValue::Tuple({IValue(1), IValue(2)}).toTuple().size() == 2);
  CHECK(IValue(2).toScalarDouble() == 2.0);
  CHECK(IValue(true).toScalarDouble() == 1.0);

  REQUIRE_THROWS_WITH(IValue(1.5).toInt(), Catch::StartsWith("expected Int but got Double"));
  try {
    IValue(1.5).toInt();
    FAIL("expected an error");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kType);
    CHECK(e.message() == "expected Int but got Double");
  }
  REQUIRE_THROWS_WITH(IValue().toTensor(), Catch::StartsWith("expected Tensor but got None"));
  REQUIRE_THROWS_WITH(IValue(1).toStringRef(), Catch::StartsWith("expected String but got Int"));
  REQUIRE_THROWS_WITH(IValue(1).toBool(), Catch::StartsWith("expected Bool but got Int"));
  REQUIRE_THROWS_WITH(IValue(true).toInt(), Catch::StartsWith("expected Int but got Bool"));
  REQUIRE_THROWS_WITH(IValue::Tuple({}).toGenericList(),
                      Catch::StartsWith("expected GenericList but got Tuple"));
  REQUIRE_THROWS_WITH(IValue(std::vector<int64_t>{}).toDoubleList(),
                      Catch::StartsWith("expected DoubleList but got IntList"));
  REQUIRE_THROWS_WITH(
      IValue("s").toScalarDouble(),
      Catch::StartsWith("expected a real Scalar (Int, Double or Bool) but got String"));

  auto w = opreg::make_intrusive<Widget>();
  IValue obj(w);
  CHECK(obj.toCustomClass<Widget>().get() == w.get());
  REQUIRE_THROWS_WITH(obj.toCustomClass<Gadget>(),
                      Catch::StartsWith("expected custom class object of another type but got "
                                        "__torch__.torch.classes.test.Widget"));
}

TEST_CASE("copies share, moves steal: tensors are never copied") {
  Tensor t = opreg::zeros({2}, DType::kFloat32);
  CHECK(t.use_count() == 1);
  IValue a(t);
  CHECK(t.use_count() == 2);
  IValue b(std::move(a));
  CHECK(t.use_count() == 2);  // Moved, not copied.
  CHECK(a.isNone());          // NOLINT: moved-from IValues are None.
  IValue c = b;
  CHECK(t.use_count() == 3);
  c = IValue();
  CHECK(t.use_count() == 2);
  Tensor out = std::move(b).toTensor();
  CHECK(t.use_count() == 2);  // b's reference moved into out.
  CHECK(b.isNone());          // NOLINT
  out = Tensor();
  CHECK(t.use_count() == 1);

  IValue list(std::vector<Tensor>{t, t});
  CHECK(t.use_count() == 3);
  IValue list2 = list;  // Shares the payload: no tensor copies.
  CHECK(t.use_count() == 3);
  CHECK(&list2.toTensorList() == &list.toTensorList());
  opreg::Stack stack;
  stack.push_back(std::move(list));
  stack.emplace_back(t);
  CHECK(t.use_count() == 4);
  stack.clear();
  list2 = IValue();
  CHECK(t.use_count() == 1);
  static_assert(std::is_nothrow_move_constructible_v<IValue>);
}

TEST_CASE("equality is structural; tensors by identity") {
  Tensor t = opreg::zeros({1}, DType::kFloat32);
  Tensor u = opreg::zeros({1}, DType::kFloat32);
  CHECK(IValue() == IValue());
  CHECK(IValue(1) == IValue(int64_t{1}));
  CHECK(IValue(1) != IValue(1.0));  // Different tags.
  CHECK(IValue(t) == IValue(t));
  CHECK(IValue(t) != IValue(u));
  CHECK(IValue("a") == IValue(std::string("a")));
  CHECK(IValue(std::vector<int64_t>{1, 2}) == IValue(std::vector<int64_t>{1, 2}));
  CHECK(IValue(std::vector<int64_t>{1, 2}) != IValue(std::vector<int64_t>{1}));
  CHECK(IValue::GenericList({IValue(1), IValue("x")}) ==
        IValue::GenericList({IValue(1), IValue("x")}));
  CHECK(IValue::GenericList({IValue(1)}) != IValue::Tuple({IValue(1)}));
  CHECK(IValue(std::vector<std::optional<Tensor>>{t, std::nullopt}) ==
        IValue(std::vector<std::optional<Tensor>>{t, std::nullopt}));
  CHECK(IValue(std::vector<std::optional<Tensor>>{t}) !=
        IValue(std::vector<std::optional<Tensor>>{u}));
  CHECK(IValue(std::nan("")) != IValue(std::nan("")));
  CHECK(IValue(Device::cuda(0)) != IValue(Device::cuda(1)));
}

TEST_CASE("FormatDoubleTorch follows PyTorch's schema printing") {
  using opreg::FormatDoubleTorch;
  CHECK(FormatDoubleTorch(1.0) == "1.");
  CHECK(FormatDoubleTorch(0.0) == "0.");
  CHECK(FormatDoubleTorch(-0.0) == "0.");
  CHECK(FormatDoubleTorch(-3.0) == "-3.");
  CHECK(FormatDoubleTorch(10.0) == "10.");
  CHECK(FormatDoubleTorch(1e-05) == "1.0000000000000001e-05");
  CHECK(FormatDoubleTorch(1e-06) == "9.9999999999999995e-07");
  CHECK(FormatDoubleTorch(1e-08) == "1e-08");
  CHECK(FormatDoubleTorch(1e-15) == "1.0000000000000001e-15");
  CHECK(FormatDoubleTorch(0.1) == "0.10000000000000001");
  CHECK(FormatDoubleTorch(0.125) == "0.125");
  CHECK(FormatDoubleTorch(1.0 / 3.0) == "0.33333333333333331");
  CHECK(FormatDoubleTorch(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(FormatDoubleTorch(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(FormatDoubleTorch(std::nan("")) == "nan");
  CHECK(FormatDoubleTorch(1e20) == "1e+20");  // Integral but beyond int64.
  CHECK(FormatDoubleTorch(-9223372036854775808.0) == "-9223372036854775808.");
  CHECK(FormatDoubleTorch(4.9406564584124654e-324) == "4.9406564584124654e-324");  // Subnormal.
}

TEST_CASE("IValue printing") {
  Tensor t = opreg::zeros({2, 3}, DType::kFloat32);
  CHECK(Str(IValue()) == "None");
  CHECK(Str(IValue(true)) == "True");
  CHECK(Str(IValue(false)) == "False");
  CHECK(Str(IValue(-12)) == "-12");
  CHECK(Str(IValue(1.0)) == "1.");
  CHECK(Str(IValue(1e-05)) == "1.0000000000000001e-05");
  CHECK(Str(IValue(std::complex<double>(0, 1))) == "0.+1.j");
  CHECK(Str(IValue(std::complex<double>(1.5, -2))) == "1.5-2.j");
  CHECK(Str(IValue(std::complex<double>(0.1, -0.0))) == "0.10000000000000001+0.j");
  CHECK(Str(IValue("mean")) == "mean");  // Unquoted.
  CHECK(Str(IValue(Device::cuda(0))) == "cuda:0");
  CHECK(Str(IValue(t)) == "Tensor(shape=[2, 3], dtype=f32, device=cpu)");
  CHECK(Str(IValue(std::vector<int64_t>{1, -2, 3})) == "[1, -2, 3]");
  CHECK(Str(IValue(std::vector<int64_t>{})) == "[]");
  CHECK(Str(IValue(std::vector<double>{1.0, 0.5, 0.1})) == "[1., 0.5, 0.10000000000000001]");
  CHECK(Str(IValue(std::vector<bool>{true, false})) == "[True, False]");
  CHECK(Str(IValue(std::vector<std::complex<double>>{{1, 2}})) == "[1.+2.j]");
  CHECK(Str(IValue(std::vector<std::string>{"a", "b"})) == "[a, b]");
  CHECK(Str(IValue(std::vector<std::optional<Tensor>>{std::nullopt, t})) ==
        "[None, Tensor(shape=[2, 3], dtype=f32, device=cpu)]");
  CHECK(Str(IValue::GenericList({IValue(1), IValue(2.0), IValue()})) == "[1, 2., None]");
  CHECK(Str(IValue::Tuple({IValue(1), IValue("x")})) == "(1, x)");
  CHECK(Str(IValue::Tuple({IValue(1)})) == "(1,)");
  CHECK(Str(IValue::Tuple({})) == "()");
  CHECK_THAT(Str(IValue(opreg::make_intrusive<Gadget>())), Catch::StartsWith("<Gadget object at "));
}
