// How C++ kernel parameter and return types map to schema types and to boxed IValues.
//
// ArgTraits<T> (T decayed) knows, for one supported parameter type:
//   Storage            what a boxed argument is converted into before the kernel is called
//   FromIValue(v, at)  the conversion (kType error naming the op and argument on a mismatch)
//   ToIValue(x)        boxing, for calling a boxed kernel through a typed handle
//   SchemaType()       the schema type inferred for it (`int64_t` -> int, `double` -> float)
//   AddDevices(x, m)   the devices of its tensors, for computing the dispatch key
// ReturnTraits<R> does the same for return types (void, Tensor, std::tuple<...>, ...).
//
// Supported parameter types (by value, const& or &): Tensor, std::optional<Tensor>,
// std::vector<Tensor>, absl::Span<const Tensor>, std::vector<std::optional<Tensor>>, int64_t,
// double or float (schema float), bool, std::string, std::string_view, Device, DType (schema
// ScalarType), Layout, MemoryFormat, Scalar, std::vector<int64_t>, absl::Span<const int64_t>
// (IntArrayRef), std::vector<double>, std::vector<bool>, std::vector<std::string> (str[], also
// as a return), std::vector<std::vector<int64_t>> (int[][]), std::tuple<T...> of these (schema `(T,
// ...)`), std::optional<T> of those, intrusive_ptr<C> for custom classes, and IValue (schema Any).
// Anything else fails to compile with a message saying what to use instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "opreg/core/custom_class.h"
#include "opreg/core/device.h"
#include "opreg/core/dtype.h"
#include "opreg/core/ivalue.h"
#include "opreg/core/layout.h"
#include "opreg/core/scalar.h"
#include "opreg/core/tensor.h"
#include "opreg/schema/type.h"

namespace opreg {

class OperatorHandle;

namespace detail {

// The schema spelling of a boxed value's type: "int", "Tensor", "float[]", ...
std::string BoxedTypeName(const IValue& v);

// Where a boxed argument is being converted: for error messages.
struct ArgSite {
  const OperatorHandle* op;  // null when converting outside a call
  size_t index;
};

// Throws kType: "[ns::op] argument 'name' (#i): expected <expected>, got <got>".
[[noreturn]] void ThrowArgError(const ArgSite& at, std::string_view expected, std::string_view got);
// ThrowArgError with `got` the tag of v.
[[noreturn]] void ThrowArgTypeError(const ArgSite& at, std::string_view expected, const IValue& v);
// Throws kType for a kernel whose result does not match its schema.
[[noreturn]] void ThrowReturnTypeError(const OperatorHandle* op, size_t index,
                                       std::string_view expected, const IValue& v);

// Devices seen among a call's tensor arguments (bit per DeviceType), and among its Device
// arguments (used when a call has no tensors, like factory functions).
struct DeviceMask {
  uint8_t tensors = 0;
  uint8_t device_args = 0;
  bool undefined_tensor = false;  // a `Tensor` parameter got an undefined tensor
  void AddTensor(const Tensor& t) {
    if (t.defined()) tensors |= static_cast<uint8_t>(1u << static_cast<int>(t.device().type));
  }
};

template <class T>
struct AlwaysFalse : std::false_type {};

}  // namespace detail

template <class T, class Enable = void>
struct ArgTraits {
  static_assert(detail::AlwaysFalse<T>::value,
                "Unsupported kernel parameter type. Use int64_t for int/SymInt (not int or long), "
                "double or float for float, bool, Tensor (by value or const&), "
                "std::optional<Tensor>, std::vector<Tensor>, std::string / std::string_view for "
                "str, std::vector<std::string> for str[], Scalar, Device, DType for ScalarType, "
                "Layout, MemoryFormat, std::vector<int64_t> or IntArrayRef for int[], "
                "std::vector<double> for float[], std::tuple<...> for a tuple, or IValue for Any.");
};

template <>
struct ArgTraits<Tensor> {
  // A reference to the tensor in the boxed stack, which the generated wrapper owns (mutably)
  // for the whole call: no reference-count traffic for `const Tensor&` and `Tensor&` kernels.
  using Storage = Tensor&;
  static Tensor& FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isTensor()) detail::ThrowArgTypeError(at, "Tensor", v);
    return const_cast<Tensor&>(v.toTensor());
  }
  static IValue ToIValue(const Tensor& t) { return IValue(t); }
  static TypePtr SchemaType() { return Type::Get(TypeKind::kTensor); }
  static void AddDevices(const Tensor& t, detail::DeviceMask& m) {
    m.AddTensor(t);
    if (!t.defined()) m.undefined_tensor = true;
  }
};

template <>
struct ArgTraits<std::vector<Tensor>> {
  using Storage = std::vector<Tensor>;
  static std::vector<Tensor> FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (v.isTensorList()) return v.toTensorList();
    if (v.isGenericList()) {
      std::vector<Tensor> out;
      for (const IValue& e : v.toGenericList()) {
        if (!e.isTensor()) detail::ThrowArgTypeError(at, "Tensor[]", v);
        out.push_back(e.toTensor());
      }
      return out;
    }
    detail::ThrowArgTypeError(at, "Tensor[]", v);
  }
  static IValue ToIValue(absl::Span<const Tensor> ts) {
    return IValue(std::vector<Tensor>(ts.begin(), ts.end()));
  }
  static TypePtr SchemaType() { return Type::List(Type::Get(TypeKind::kTensor)); }
  static void AddDevices(absl::Span<const Tensor> ts, detail::DeviceMask& m) {
    for (const Tensor& t : ts) m.AddTensor(t);
  }
};
template <>
struct ArgTraits<absl::Span<const Tensor>> : ArgTraits<std::vector<Tensor>> {};

template <>
struct ArgTraits<std::vector<std::optional<Tensor>>> {
  using Storage = std::vector<std::optional<Tensor>>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (v.isOptionalTensorList()) return v.toOptionalTensorList();
    if (v.isTensorList()) return Storage(v.toTensorList().begin(), v.toTensorList().end());
    if (v.isGenericList()) {
      Storage out;
      for (const IValue& e : v.toGenericList()) {
        if (e.isNone()) {
          out.emplace_back();
        } else if (e.isTensor()) {
          out.emplace_back(e.toTensor());
        } else {
          detail::ThrowArgTypeError(at, "Tensor?[]", v);
        }
      }
      return out;
    }
    detail::ThrowArgTypeError(at, "Tensor?[]", v);
  }
  static IValue ToIValue(const Storage& ts) { return IValue(ts); }
  static TypePtr SchemaType() { return Type::List(Type::Optional(Type::Get(TypeKind::kTensor))); }
  static void AddDevices(const Storage& ts, detail::DeviceMask& m) {
    for (const auto& t : ts) {
      if (t) m.AddTensor(*t);
    }
  }
};

// Scalars and other non-tensor leaves: no devices.
template <class T, TypeKind kKind>
struct LeafArgTraits {
  using Storage = T;
  static TypePtr SchemaType() { return Type::Get(kKind); }
  static void AddDevices(const T&, detail::DeviceMask&) {}
};

template <>
struct ArgTraits<int64_t> : LeafArgTraits<int64_t, TypeKind::kInt> {
  static int64_t FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isInt()) detail::ThrowArgTypeError(at, "int", v);
    return v.toInt();
  }
  static IValue ToIValue(int64_t x) { return IValue(x); }
};

template <>
struct ArgTraits<double> : LeafArgTraits<double, TypeKind::kFloat> {
  static double FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (v.isDouble()) return v.toDouble();
    if (v.isInt()) return static_cast<double>(v.toInt());  // an int literal for a float arg
    detail::ThrowArgTypeError(at, "float", v);
  }
  static IValue ToIValue(double x) { return IValue(x); }
};

// `float` where the schema says float (C++ kernels often compute in single precision): the
// boxed double is narrowed.
template <>
struct ArgTraits<float> : LeafArgTraits<float, TypeKind::kFloat> {
  static float FromIValue(const IValue& v, const detail::ArgSite& at) {
    return static_cast<float>(ArgTraits<double>::FromIValue(v, at));
  }
  static IValue ToIValue(float x) { return IValue(static_cast<double>(x)); }
};

template <>
struct ArgTraits<bool> : LeafArgTraits<bool, TypeKind::kBool> {
  static bool FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isBool()) detail::ThrowArgTypeError(at, "bool", v);
    return v.toBool();
  }
  static IValue ToIValue(bool x) { return IValue(x); }
};

template <>
struct ArgTraits<std::string> : LeafArgTraits<std::string, TypeKind::kStr> {
  static std::string FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isString()) detail::ThrowArgTypeError(at, "str", v);
    return v.toStringRef();
  }
  static IValue ToIValue(std::string_view x) { return IValue(x); }
};

// A view into the boxed string, which outlives the kernel call: no copy.
template <>
struct ArgTraits<std::string_view> : LeafArgTraits<std::string_view, TypeKind::kStr> {
  static std::string_view FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isString()) detail::ThrowArgTypeError(at, "str", v);
    return v.toStringView();
  }
  static IValue ToIValue(std::string_view x) { return IValue(x); }
};

template <>
struct ArgTraits<Device> : LeafArgTraits<Device, TypeKind::kDevice> {
  static Device FromIValue(const IValue& v, const detail::ArgSite& at);
  static IValue ToIValue(Device d) { return IValue(d); }
  static void AddDevices(const Device& d, detail::DeviceMask& m) {
    m.device_args |= static_cast<uint8_t>(1u << static_cast<int>(d.type));
  }
};

// Boxed as PyTorch's ScalarType code (an int), as schema defaults store it.
template <>
struct ArgTraits<DType> : LeafArgTraits<DType, TypeKind::kScalarType> {
  static DType FromIValue(const IValue& v, const detail::ArgSite& at);
  static IValue ToIValue(DType d) { return IValue(static_cast<int64_t>(TorchScalarTypeCode(d))); }
};

// Boxed as PyTorch's codes (ints), as for ScalarType.
template <>
struct ArgTraits<Layout> : LeafArgTraits<Layout, TypeKind::kLayout> {
  static Layout FromIValue(const IValue& v, const detail::ArgSite& at);
  static IValue ToIValue(Layout l) { return IValue(static_cast<int64_t>(l)); }
};
template <>
struct ArgTraits<MemoryFormat> : LeafArgTraits<MemoryFormat, TypeKind::kMemoryFormat> {
  static MemoryFormat FromIValue(const IValue& v, const detail::ArgSite& at);
  static IValue ToIValue(MemoryFormat f) { return IValue(static_cast<int64_t>(f)); }
};

template <>
struct ArgTraits<Scalar> : LeafArgTraits<Scalar, TypeKind::kScalar> {
  static Scalar FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isScalar()) detail::ThrowArgTypeError(at, "Scalar", v);
    return Scalar::FromIValue(v);
  }
  static IValue ToIValue(const Scalar& s) { return s.ToIValue(); }
};

// Any: passed through unconverted.
template <>
struct ArgTraits<IValue> : LeafArgTraits<IValue, TypeKind::kAny> {
  static IValue FromIValue(const IValue& v, const detail::ArgSite&) { return v; }
  static IValue ToIValue(const IValue& v) { return v; }
};

template <class E, TypeKind kKind>
struct ListArgTraits {
  using Storage = std::vector<E>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at, std::string_view name) {
    if constexpr (std::is_same_v<E, int64_t>) {
      if (v.isIntList()) return v.toIntList();
    } else if constexpr (std::is_same_v<E, double>) {
      if (v.isDoubleList()) return v.toDoubleList();
      if (v.isIntList()) return Storage(v.toIntList().begin(), v.toIntList().end());
    } else {
      if (v.isBoolList()) return v.toBoolList();
    }
    if (v.isGenericList()) {
      Storage out;
      for (const IValue& e : v.toGenericList()) {
        out.push_back(ArgTraits<E>::FromIValue(e, at));
      }
      return out;
    }
    detail::ThrowArgTypeError(at, name, v);
  }
  static IValue ToIValue(absl::Span<const E> xs) { return IValue(Storage(xs.begin(), xs.end())); }
  static TypePtr SchemaType() { return Type::List(Type::Get(kKind)); }
  static void AddDevices(const Storage&, detail::DeviceMask&) {}
};

template <>
struct ArgTraits<std::vector<int64_t>> : ListArgTraits<int64_t, TypeKind::kInt> {
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    return ListArgTraits::FromIValue(v, at, "int[]");
  }
};
template <>
struct ArgTraits<absl::Span<const int64_t>> : ArgTraits<std::vector<int64_t>> {};
template <>
struct ArgTraits<std::vector<double>> : ListArgTraits<double, TypeKind::kFloat> {
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    return ListArgTraits::FromIValue(v, at, "float[]");
  }
};
template <>
struct ArgTraits<std::vector<bool>> : ListArgTraits<bool, TypeKind::kBool> {
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    return ListArgTraits::FromIValue(v, at, "bool[]");
  }
  static IValue ToIValue(const std::vector<bool>& xs) { return IValue(xs); }
};

template <>
struct ArgTraits<std::vector<std::string>> {
  using Storage = std::vector<std::string>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (v.isStringList()) return v.toStringList();
    if (v.isGenericList()) {
      Storage out;
      for (const IValue& e : v.toGenericList()) {
        if (!e.isString()) detail::ThrowArgTypeError(at, "str[]", v);
        out.push_back(e.toStringRef());
      }
      return out;
    }
    detail::ThrowArgTypeError(at, "str[]", v);
  }
  static IValue ToIValue(const Storage& xs) { return IValue(xs); }
  static TypePtr SchemaType() { return Type::List(Type::Get(TypeKind::kStr)); }
  static void AddDevices(const Storage&, detail::DeviceMask&) {}
};

// `int[][]` (lists of int lists, e.g. per-rank offsets): each element as an int[].
template <>
struct ArgTraits<std::vector<std::vector<int64_t>>> {
  using Storage = std::vector<std::vector<int64_t>>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isGenericList()) detail::ThrowArgTypeError(at, "int[][]", v);
    Storage out;
    for (const IValue& e : v.toGenericList()) {
      if (!e.isIntList() && !e.isGenericList()) detail::ThrowArgTypeError(at, "int[][]", v);
      out.push_back(ArgTraits<std::vector<int64_t>>::FromIValue(e, at));
    }
    return out;
  }
  static IValue ToIValue(const Storage& xs) {
    std::vector<IValue> out;
    out.reserve(xs.size());
    for (const auto& x : xs) out.emplace_back(x);
    return IValue::GenericList(std::move(out));
  }
  static TypePtr SchemaType() { return Type::List(Type::List(Type::Get(TypeKind::kInt))); }
  static void AddDevices(const Storage&, detail::DeviceMask&) {}
};

// A schema tuple `(int, int)`: converted element by element (arity checked).
template <class... Ts>
struct ArgTraits<std::tuple<Ts...>> {
  using Storage = std::tuple<std::decay_t<typename ArgTraits<std::decay_t<Ts>>::Storage>...>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isTuple() || v.toTuple().size() != sizeof...(Ts)) {
      detail::ThrowArgTypeError(at, SchemaType()->str(), v);
    }
    return Convert(v.toTuple(), at, std::index_sequence_for<Ts...>());
  }
  static IValue ToIValue(const std::tuple<Ts...>& x) {
    return std::apply(
        [](const auto&... e) {
          return IValue::Tuple({ArgTraits<std::decay_t<decltype(e)>>::ToIValue(e)...});
        },
        x);
  }
  static TypePtr SchemaType() {
    return Type::Tuple({ArgTraits<std::decay_t<Ts>>::SchemaType()...});
  }
  static void AddDevices(const std::tuple<Ts...>& x, detail::DeviceMask& m) {
    std::apply(
        [&m](const auto&... e) { (ArgTraits<std::decay_t<decltype(e)>>::AddDevices(e, m), ...); },
        x);
  }

 private:
  template <size_t... I>
  static Storage Convert(const std::vector<IValue>& elements, const detail::ArgSite& at,
                         std::index_sequence<I...>) {
    return Storage(ArgTraits<std::decay_t<Ts>>::FromIValue(elements[I], at)...);
  }
};

template <class T>
struct ArgTraits<std::optional<T>> {
  using Inner = ArgTraits<T>;
  using Storage = std::optional<std::remove_reference_t<typename Inner::Storage>>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (v.isNone()) return std::nullopt;
    return Inner::FromIValue(v, at);
  }
  static IValue ToIValue(const std::optional<T>& x) { return x ? Inner::ToIValue(*x) : IValue(); }
  static TypePtr SchemaType() { return Type::Optional(Inner::SchemaType()); }
  static void AddDevices(const std::optional<T>& x, detail::DeviceMask& m) {
    if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) {
      if (x) m.AddTensor(*x);  // an undefined tensor in `Tensor?` is None, as in libtorch
    } else {
      if (x) Inner::AddDevices(*x, m);
    }
  }
};

// Custom classes, by intrusive_ptr. Any registered class name matches.
template <class C>
struct ArgTraits<intrusive_ptr<C>, std::enable_if_t<std::is_base_of_v<CustomClassHolder, C>>> {
  using Storage = intrusive_ptr<C>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (!v.isObject()) detail::ThrowArgTypeError(at, "a custom class object", v);
    return v.toCustomClass<C>();
  }
  static IValue ToIValue(const intrusive_ptr<C>& x) { return IValue(x); }
  static TypePtr SchemaType() { return Type::Class("<custom class>"); }
  static void AddDevices(const Storage&, detail::DeviceMask&) {}
};

// ---- Returns ----

template <class R, class Enable = void>
struct ReturnTraits {
  // Single values that box like arguments.
  static constexpr size_t kCount = 1;
  static std::vector<TypePtr> SchemaTypes() { return {ArgTraits<R>::SchemaType()}; }
  static void Push(R&& r, Stack* stack) { stack->push_back(ArgTraits<R>::ToIValue(r)); }
  static R Pop(const OperatorHandle* op, Stack* stack, size_t first) {
    return ArgTraits<R>::FromIValue((*stack)[first], detail::ArgSite{op, 0});
  }
};

// `Tensor&` (out and in-place kernels return the buffer they wrote): boxed as the tensor.
template <>
struct ReturnTraits<Tensor&> {
  static constexpr size_t kCount = 1;
  static std::vector<TypePtr> SchemaTypes() { return {ArgTraits<Tensor>::SchemaType()}; }
  static void Push(Tensor& r, Stack* stack) { stack->push_back(IValue(r)); }
};
template <>
struct ReturnTraits<const Tensor&> : ReturnTraits<Tensor&> {
  static void Push(const Tensor& r, Stack* stack) { stack->push_back(IValue(r)); }
};

template <>
struct ReturnTraits<void> {
  static constexpr size_t kCount = 0;
  static std::vector<TypePtr> SchemaTypes() { return {}; }
};

template <class... Ts>
struct ReturnTraits<std::tuple<Ts...>> {
  static constexpr size_t kCount = sizeof...(Ts);
  static std::vector<TypePtr> SchemaTypes() {
    return {ArgTraits<std::decay_t<Ts>>::SchemaType()...};
  }
  static void Push(std::tuple<Ts...>&& r, Stack* stack) {
    std::apply(
        [&](auto&&... x) { (stack->push_back(ArgTraits<std::decay_t<Ts>>::ToIValue(x)), ...); },
        std::move(r));
  }
  static std::tuple<Ts...> Pop(const OperatorHandle* op, Stack* stack, size_t first) {
    return PopImpl(op, stack, first, std::index_sequence_for<Ts...>{});
  }

 private:
  template <size_t... Is>
  static std::tuple<Ts...> PopImpl(const OperatorHandle* op, Stack* stack, size_t first,
                                   std::index_sequence<Is...>) {
    return std::tuple<Ts...>(
        ArgTraits<Ts>::FromIValue((*stack)[first + Is], detail::ArgSite{op, Is})...);
  }
};

// The schema types inferred from a C++ function type, to check a kernel against its op.
struct InferredSignature {
  std::vector<TypePtr> arguments;
  std::vector<TypePtr> returns;
  // PyTorch's form: "(Tensor _0, int _1) -> Tensor _0".
  std::string str() const;
};

template <class R, class... Args>
InferredSignature InferSignature() {
  return InferredSignature{{ArgTraits<std::decay_t<Args>>::SchemaType()...},
                           ReturnTraits<R>::SchemaTypes()};
}

// True when a C++-inferred type fits a schema type: int64_t serves int, SymInt, ScalarType,
// Layout and MemoryFormat (their kernel-facing type); DType serves ScalarType; IValue serves
// anything; a custom class pointer serves any class type.
bool InferredTypeMatches(const Type& inferred, const Type& schema_type);

}  // namespace opreg
