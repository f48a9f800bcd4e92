// StableIValue <-> IValue by schema type (the encoding is described in stable_ivalue.h).
#include "stable_ivalue.h"

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "../include/torch/csrc/stable/c/shim.h"
#include "codes.h"
#include "opreg/core/error.h"
#include "tensor_handle.h"

namespace opreg::torch_stable {
namespace {

using List = std::vector<StableIValue>;

template <class T>
StableIValue Bits(T v) {
  StableIValue out = 0;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}

template <class T>
T FromBits(StableIValue v) {
  T out;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}

StableIValue DeviceBits(const Device& device) {
  const auto type = static_cast<uint32_t>(DeviceTypeCode(device));
  const auto index =
      static_cast<uint32_t>(static_cast<int32_t>(device.is_cuda() ? device.index : -1));
  return (static_cast<uint64_t>(type) << 32) | index;
}

Device DeviceFromBits(StableIValue v, const std::string& what) {
  const auto type = static_cast<int32_t>(static_cast<uint32_t>(v >> 32));
  const auto index = static_cast<int32_t>(static_cast<uint32_t>(v & 0xffffffffu));
  return DeviceFromCodes(type, index, what.c_str());
}

// The elements of an IValue list as IValues (each list kind stores its own vector type).
std::vector<IValue> Elements(const IValue& v) {
  std::vector<IValue> out;
  switch (v.tag()) {
    case IValue::Tag::kIntList:
      for (int64_t x : v.toIntList()) out.emplace_back(x);
      break;
    case IValue::Tag::kDoubleList:
      for (double x : v.toDoubleList()) out.emplace_back(x);
      break;
    case IValue::Tag::kBoolList:
      for (bool x : v.toBoolList()) out.emplace_back(x);
      break;
    case IValue::Tag::kStringList:
      for (const std::string& x : v.toStringList()) out.emplace_back(x);
      break;
    case IValue::Tag::kTensorList:
      for (const Tensor& x : v.toTensorList()) out.emplace_back(x);
      break;
    case IValue::Tag::kOptionalTensorList:
      for (const std::optional<Tensor>& x : v.toOptionalTensorList()) out.emplace_back(x);
      break;
    case IValue::Tag::kGenericList:
      out = v.toGenericList();
      break;
    default:
      OPREG_THROW(kType, "expected a list, got ", v.TagName());
  }
  return out;
}

// An IValue list of the kind opreg's checks expect for elements of `element`.
IValue MakeList(std::vector<IValue> items, const Type& element) {
  switch (element.kind()) {
    case TypeKind::kInt:
    case TypeKind::kSymInt:
    case TypeKind::kScalarType:
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat: {
      std::vector<int64_t> v;
      for (const IValue& x : items) v.push_back(x.toInt());
      return IValue(std::move(v));
    }
    case TypeKind::kFloat:
    case TypeKind::kSymFloat: {
      std::vector<double> v;
      for (const IValue& x : items) v.push_back(x.toDouble());
      return IValue(std::move(v));
    }
    case TypeKind::kBool:
    case TypeKind::kSymBool: {
      std::vector<bool> v;
      for (const IValue& x : items) v.push_back(x.toBool());
      return IValue(std::move(v));
    }
    case TypeKind::kStr: {
      std::vector<std::string> v;
      for (const IValue& x : items) v.push_back(x.toStringRef());
      return IValue(std::move(v));
    }
    case TypeKind::kTensor: {
      std::vector<Tensor> v;
      for (IValue& x : items) v.push_back(std::move(x).toTensor());
      return IValue(std::move(v));
    }
    case TypeKind::kOptional:
      if (element.element()->kind() == TypeKind::kTensor) {
        std::vector<std::optional<Tensor>> v;
        for (IValue& x : items) {
          if (x.isNone()) {
            v.emplace_back(std::nullopt);
          } else {
            v.emplace_back(std::move(x).toTensor());
          }
        }
        return IValue(std::move(v));
      }
      break;
    default:
      break;
  }
  return IValue::GenericList(std::move(items));
}

// Empty when the stable ABI carries `type`, else why not.
std::string StableUnsupported(const Type& type) {
  switch (type.kind()) {
    case TypeKind::kTensor:
    case TypeKind::kInt:
    case TypeKind::kSymInt:
    case TypeKind::kFloat:
    case TypeKind::kSymFloat:
    case TypeKind::kBool:
    case TypeKind::kSymBool:
    case TypeKind::kStr:
    case TypeKind::kScalarType:
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat:
    case TypeKind::kDevice:
      return "";
    case TypeKind::kOptional:
    case TypeKind::kList:
      return StableUnsupported(*type.element());
    default:
      return "the stable ABI has no encoding for " + type.str();
  }
}

}  // namespace

StableIValue ToStable(const IValue& value, const Type& type, const std::string& what) {
  switch (type.kind()) {
    case TypeKind::kTensor:
      OPREG_CHECK_TYPE(value.isTensor(), what, ": expected Tensor, got ", value.TagName());
      return Bits(NewHandle(value.toTensor()));
    case TypeKind::kInt:
    case TypeKind::kSymInt:
      return Bits(value.toInt());
    case TypeKind::kScalarType:
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat:
      return Bits(static_cast<int32_t>(value.toInt()));
    case TypeKind::kFloat:
    case TypeKind::kSymFloat:
      return Bits(value.toDouble());
    case TypeKind::kBool:
    case TypeKind::kSymBool:
      return Bits(value.toBool());
    case TypeKind::kDevice:
      return DeviceBits(value.toDevice());
    case TypeKind::kStr: {
      const std::string& s = value.toStringRef();
      return Bits(reinterpret_cast<StringHandle>(new std::string(s)));
    }
    case TypeKind::kOptional:
      if (value.isNone()) return 0;
      return Bits(new StableIValue(ToStable(value, *type.element(), what)));
    case TypeKind::kList: {
      auto list = std::make_unique<List>();
      const std::vector<IValue> items = Elements(value);
      list->reserve(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        list->push_back(ToStable(items[i], *type.element(), what + "[" + std::to_string(i) + "]"));
      }
      return Bits(reinterpret_cast<StableListHandle>(list.release()));
    }
    default:
      OPREG_THROW(kType, what, ": ", StableUnsupported(type));
  }
}

IValue FromStable(StableIValue value, const Type& type, const std::string& what) {
  switch (type.kind()) {
    case TypeKind::kTensor: {
      auto handle = FromBits<AtenTensorHandle>(value);
      OPREG_CHECK_VALUE(handle != nullptr, what, ": expected a tensor handle, got nullptr");
      return IValue(TakeHandle(handle, what.c_str()));
    }
    case TypeKind::kInt:
    case TypeKind::kSymInt:
      return IValue(FromBits<int64_t>(value));
    case TypeKind::kScalarType:
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat:
      return IValue(static_cast<int64_t>(FromBits<int32_t>(value)));
    case TypeKind::kFloat:
    case TypeKind::kSymFloat:
      return IValue(FromBits<double>(value));
    case TypeKind::kBool:
    case TypeKind::kSymBool:
      return IValue((value & 0xff) != 0);
    case TypeKind::kDevice:
      return IValue(DeviceFromBits(value, what));
    case TypeKind::kStr: {
      std::unique_ptr<std::string> s(FromBits<std::string*>(value));
      OPREG_CHECK_VALUE(s != nullptr, what, ": expected a string handle, got nullptr");
      return IValue(std::move(*s));
    }
    case TypeKind::kOptional: {
      std::unique_ptr<StableIValue> box(FromBits<StableIValue*>(value));
      if (box == nullptr) return IValue();
      return FromStable(*box, *type.element(), what);
    }
    case TypeKind::kList: {
      std::unique_ptr<List> list(FromBits<List*>(value));
      OPREG_CHECK_VALUE(list != nullptr, what, ": expected a list handle, got nullptr");
      std::vector<IValue> items;
      items.reserve(list->size());
      for (size_t i = 0; i < list->size(); ++i) {
        items.push_back(
            FromStable((*list)[i], *type.element(), what + "[" + std::to_string(i) + "]"));
      }
      return MakeList(std::move(items), *type.element());
    }
    default:
      OPREG_THROW(kType, what, ": ", StableUnsupported(type));
  }
}

void ReleaseStable(StableIValue value, const Type& type) {
  try {
    (void)FromStable(value, type, "released value");
  } catch (const std::exception&) {
    // A slot that never held what its type says: nothing of ours to release.
  }
}

}  // namespace opreg::torch_stable
