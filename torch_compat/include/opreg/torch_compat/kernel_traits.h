// How libtorch-style kernel signatures bind to opreg's boxed calls: at::Tensor (by value,
// const& or &), std::optional<at::Tensor>, std::vector<at::Tensor>, at::TensorList,
// at::IntArrayRef, at::ScalarType and at::Device parameters, and at::Tensor returns (alone, in
// tuples, in vectors). Everything else (int64_t, double, bool, std::string, tuples, ...) is
// opreg's own kernel_traits.h.
//
// An at::Tensor parameter is a second handle to the tensor on the boxed stack (one reference
// count, no copy); kernels that write through `Tensor&` write the caller's data.
#pragma once

#include <iterator>
#include <optional>
#include <vector>

#include "opreg/dispatch/kernel_traits.h"
#include "opreg/torch_compat/array_ref.h"
#include "opreg/torch_compat/device.h"
#include "opreg/torch_compat/scalar_type.h"
#include "opreg/torch_compat/tensor.h"

namespace opreg {

template <>
struct ArgTraits<at::Tensor> {
  using Storage = at::Tensor;
  static at::Tensor FromIValue(const IValue& v, const detail::ArgSite& at) {
    return at::Tensor(ArgTraits<Tensor>::FromIValue(v, at));
  }
  static IValue ToIValue(const at::Tensor& t) { return IValue(t.opreg()); }
  static TypePtr SchemaType() { return ArgTraits<Tensor>::SchemaType(); }
  static void AddDevices(const at::Tensor& t, detail::DeviceMask& m) {
    ArgTraits<Tensor>::AddDevices(t.opreg(), m);
  }
};

template <>
struct ArgTraits<std::optional<at::Tensor>> {
  using Storage = std::optional<at::Tensor>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    if (v.isNone()) return std::nullopt;
    return at::Tensor(ArgTraits<Tensor>::FromIValue(v, at));
  }
  static IValue ToIValue(const Storage& t) {
    return t && t->defined() ? IValue(t->opreg()) : IValue();
  }
  static TypePtr SchemaType() { return Type::Optional(ArgTraits<Tensor>::SchemaType()); }
  static void AddDevices(const Storage& t, detail::DeviceMask& m) {
    if (t) m.AddTensor(t->opreg());  // an undefined tensor in `Tensor?` is None
  }
};

template <>
struct ArgTraits<std::vector<at::Tensor>> {
  using Storage = std::vector<at::Tensor>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    std::vector<Tensor> ts = ArgTraits<std::vector<Tensor>>::FromIValue(v, at);
    return Storage(std::make_move_iterator(ts.begin()), std::make_move_iterator(ts.end()));
  }
  static IValue ToIValue(c10::ArrayRef<at::Tensor> ts) {
    return IValue(std::vector<Tensor>(ts.begin(), ts.end()));
  }
  static TypePtr SchemaType() { return ArgTraits<std::vector<Tensor>>::SchemaType(); }
  static void AddDevices(c10::ArrayRef<at::Tensor> ts, detail::DeviceMask& m) {
    for (const at::Tensor& t : ts) m.AddTensor(t.opreg());
  }
};
template <>
struct ArgTraits<c10::ArrayRef<at::Tensor>> : ArgTraits<std::vector<at::Tensor>> {};

template <>
struct ArgTraits<std::vector<std::optional<at::Tensor>>> {
  using Storage = std::vector<std::optional<at::Tensor>>;
  static Storage FromIValue(const IValue& v, const detail::ArgSite& at) {
    Storage out;
    for (auto& t : ArgTraits<std::vector<std::optional<Tensor>>>::FromIValue(v, at)) {
      out.push_back(t ? std::optional<at::Tensor>(*t) : std::nullopt);
    }
    return out;
  }
  static IValue ToIValue(const Storage& ts) {
    std::vector<std::optional<Tensor>> out;
    for (const auto& t : ts) out.push_back(t ? std::optional<Tensor>(t->opreg()) : std::nullopt);
    return IValue(out);
  }
  static TypePtr SchemaType() {
    return ArgTraits<std::vector<std::optional<Tensor>>>::SchemaType();
  }
  static void AddDevices(const Storage& ts, detail::DeviceMask& m) {
    for (const auto& t : ts) {
      if (t) m.AddTensor(t->opreg());
    }
  }
};

// at::IntArrayRef: a view of the converted list, which lives for the whole call.
template <>
struct ArgTraits<c10::ArrayRef<int64_t>> : ArgTraits<std::vector<int64_t>> {};

// ScalarType travels boxed as its code, which c10::ScalarType already is.
template <>
struct ArgTraits<c10::ScalarType> : LeafArgTraits<c10::ScalarType, TypeKind::kScalarType> {
  static c10::ScalarType FromIValue(const IValue& v, const detail::ArgSite& at) {
    return c10::FromDType(ArgTraits<DType>::FromIValue(v, at));
  }
  static IValue ToIValue(c10::ScalarType t) { return IValue(static_cast<int64_t>(t)); }
};

template <>
struct ArgTraits<c10::Device> : LeafArgTraits<c10::Device, TypeKind::kDevice> {
  static c10::Device FromIValue(const IValue& v, const detail::ArgSite& at) {
    return c10::Device(ArgTraits<Device>::FromIValue(v, at));
  }
  static IValue ToIValue(const c10::Device& d) { return IValue(c10::ToOpregDevice(d)); }
  static void AddDevices(const c10::Device& d, detail::DeviceMask& m) {
    ArgTraits<Device>::AddDevices(c10::ToOpregDevice(d), m);
  }
};

// Layout and MemoryFormat travel boxed as their codes, shared with opreg's enums.
template <>
struct ArgTraits<c10::Layout> : LeafArgTraits<c10::Layout, TypeKind::kLayout> {
  static c10::Layout FromIValue(const IValue& v, const detail::ArgSite& at) {
    return static_cast<c10::Layout>(ArgTraits<Layout>::FromIValue(v, at));
  }
  static IValue ToIValue(c10::Layout l) { return IValue(static_cast<int64_t>(l)); }
};
template <>
struct ArgTraits<c10::MemoryFormat> : LeafArgTraits<c10::MemoryFormat, TypeKind::kMemoryFormat> {
  static c10::MemoryFormat FromIValue(const IValue& v, const detail::ArgSite& at) {
    return static_cast<c10::MemoryFormat>(ArgTraits<MemoryFormat>::FromIValue(v, at));
  }
  static IValue ToIValue(c10::MemoryFormat f) { return IValue(static_cast<int64_t>(f)); }
};

// `at::Tensor&` returns (out and in-place kernels): boxed as the tensor.
template <>
struct ReturnTraits<at::Tensor&> {
  static constexpr size_t kCount = 1;
  static std::vector<TypePtr> SchemaTypes() { return {ArgTraits<Tensor>::SchemaType()}; }
  static void Push(at::Tensor& r, Stack* stack) { stack->push_back(IValue(r.opreg())); }
};
template <>
struct ReturnTraits<const at::Tensor&> : ReturnTraits<at::Tensor&> {
  static void Push(const at::Tensor& r, Stack* stack) { stack->push_back(IValue(r.opreg())); }
};

}  // namespace opreg
