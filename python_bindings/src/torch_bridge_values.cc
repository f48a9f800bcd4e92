// Values of a bridged op beyond one word: strings, devices and lists (torch_bridge_values.h).
// Each conversion takes what it is given: torch hands a kernel owned handles and frees nothing
// after it, so an error part-way must still free every item not yet converted.
#include "torch_bridge_values.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"

namespace opreg::python {
namespace {

void CheckShim(TorchError err, const char* what) {
  if (OPREG_UNLIKELY(err != 0)) {
    throw Error(ErrorKind::kRuntime, StrCat("torch's stable ABI: ", what, " failed"));
  }
}

// The leaf kinds a list may hold: what opreg's IValue has a list of.
bool ListableItem(Kind kind) {
  return kind == Kind::kTensor || kind == Kind::kInt || kind == Kind::kFloat ||
         kind == Kind::kBool || kind == Kind::kString;
}

// The items of an owned list handle, which is deleted (the items are now the caller's).
std::vector<StableIValue> TakeItems(const TorchShim& shim, StableIValue v) {
  auto list = reinterpret_cast<StableListHandle>(v);
  if (list == nullptr) throw Error(ErrorKind::kRuntime, "torch passed a null list handle");
  size_t n = 0;
  std::vector<StableIValue> items;
  try {
    CheckShim(shim.list_size(list, &n), "torch_list_size");
    items.resize(n);
    for (size_t i = 0; i < n; ++i) {
      CheckShim(shim.list_get_item(list, i, &items[i]), "torch_list_get_item");
    }
  } catch (...) {
    shim.delete_list(list);  // its items cannot be read, so they cannot be freed either
    throw;
  }
  CheckShim(shim.delete_list(list), "torch_delete_list");
  return items;
}

// The items of an owned list of one-word values (which own nothing) as a vector of T, each
// converted by `convert`; the list is deleted either way. One pass, no intermediate vector: a
// list of sizes is the common list argument.
template <class T, class F>
std::vector<T> TakeWords(const TorchShim& shim, StableIValue v, F convert) {
  auto list = reinterpret_cast<StableListHandle>(v);
  if (list == nullptr) throw Error(ErrorKind::kRuntime, "torch passed a null list handle");
  size_t n = 0;
  std::vector<T> out;
  TorchError err = shim.list_size(list, &n);
  if (err == 0) {
    out.resize(n);
    for (size_t i = 0; i < n && err == 0; ++i) {
      StableIValue x = 0;
      err = shim.list_get_item(list, i, &x);
      out[i] = convert(x);
    }
  }
  shim.delete_list(list);
  CheckShim(err, "reading a list");
  return out;
}

// A new owned string handle holding `s`.
StableIValue NewString(const TorchShim& shim, const std::string& s) {
  StringHandle h = nullptr;
  CheckShim(shim.new_string(s.data(), s.size(), &h), "torch_new_string_handle");
  return reinterpret_cast<StableIValue>(h);
}

// An owned string handle as a string; the handle is deleted either way.
std::string TakeString(const TorchShim& shim, StableIValue v) {
  auto handle = reinterpret_cast<StringHandle>(v);
  if (handle == nullptr) throw Error(ErrorKind::kRuntime, "torch passed a null string handle");
  size_t length = 0;
  const char* data = nullptr;
  const bool ok = shim.string_length(handle, &length) == 0 &&
                  shim.string_c_str(handle, &data) == 0 && (data != nullptr || length == 0);
  std::string s = ok ? std::string(data, length) : std::string();
  shim.delete_string(handle);
  if (!ok) throw Error(ErrorKind::kRuntime, "torch's stable ABI: reading a string failed");
  return s;
}

Device DeviceFromBits(const TorchShim& shim, StableIValue v) {
  const auto index = static_cast<int32_t>(static_cast<uint32_t>(v & 0xffffffffu));
  const auto type = static_cast<int32_t>(static_cast<int8_t>((v >> 32) & 0xff));
  if (type == shim.device_cpu) return Device::cpu();
  if (type == shim.device_cuda) return Device::cuda(index);
  if (type == shim.device_meta) return Device::meta();
  throw Error(ErrorKind::kType,
              StrCat("expected Device (cpu, cuda or meta), got torch device type ", type));
}

StableIValue DeviceBits(const TorchShim& shim, Device d) {
  const int32_t type = d.is_cuda()   ? shim.device_cuda
                       : d.is_meta() ? shim.device_meta
                                     : shim.device_cpu;
  if (type < 0) throw Error(ErrorKind::kType, StrCat("this torch has no device ", d.str()));
  return (static_cast<uint64_t>(static_cast<uint32_t>(type)) << 32) |
         static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int32_t>(d.index)));
}

// The items of a list of strings or tensors as the opreg list of their kind (lists of one-word
// values take TakeWords instead). `*done` counts the items consumed so far (converted, or freed
// by a failed conversion).
IValue ListFromItems(const TorchShim& shim, const std::vector<StableIValue>& items,
                     const ValueSlot& slot, TensorImport import_tensor, size_t* done) {
  const size_t n = items.size();
  switch (slot.kind) {
    case Kind::kString: {
      std::vector<std::string> v;
      v.reserve(n);
      for (; *done < n;) v.push_back(TakeString(shim, items[(*done)++]));
      return IValue(std::move(v));
    }
    case Kind::kTensor: {
      if (!slot.item_optional) {
        std::vector<Tensor> v;
        v.reserve(n);
        for (; *done < n;) {
          v.push_back(import_tensor(reinterpret_cast<AtenTensorHandle>(items[(*done)++])));
        }
        return IValue(std::move(v));
      }
      std::vector<std::optional<Tensor>> v;
      v.reserve(n);
      for (; *done < n;) {
        auto* box = reinterpret_cast<StableIValue*>(items[(*done)++]);
        if (box == nullptr) {
          v.emplace_back();
          continue;
        }
        const StableIValue h = *box;
        FreeBox(shim, box);
        v.emplace_back(import_tensor(reinterpret_cast<AtenTensorHandle>(h)));
      }
      return IValue(std::move(v));
    }
    default:
      break;
  }
  throw Error(ErrorKind::kRuntime, "a list of this kind is not carried by the bridge");
}

}  // namespace

bool SlotOf(const TorchShim& shim, const Type& type, ValueSlot* out) {
  *out = ValueSlot{};
  const Type* t = &type;
  out->optional = t->kind() == TypeKind::kOptional;
  if (out->optional) t = t->element().get();
  if (t->kind() == TypeKind::kList) {
    if (!shim.has_lists()) return false;
    out->list = true;
    t = t->element().get();
    if (t->kind() == TypeKind::kOptional) {
      out->item_optional = true;
      t = t->element().get();
      if (t->kind() != TypeKind::kTensor) return false;  // opreg has Tensor?[] only
    }
  }
  switch (t->kind()) {
    case TypeKind::kTensor:
      out->kind = Kind::kTensor;
      break;
    case TypeKind::kInt:
    case TypeKind::kSymInt:
      out->kind = Kind::kInt;
      break;
    case TypeKind::kFloat:
      out->kind = Kind::kFloat;
      break;
    case TypeKind::kBool:
      out->kind = Kind::kBool;
      break;
    case TypeKind::kScalarType:
      out->kind = Kind::kCode;
      break;
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat:
      if (!shim.enum_codes_match) return false;
      out->kind = Kind::kCode;
      break;
    case TypeKind::kStr:
      if (!shim.has_strings()) return false;
      out->kind = Kind::kString;
      break;
    case TypeKind::kDevice:
      out->kind = Kind::kDevice;
      break;
    default:
      return false;
  }
  return !out->list || ListableItem(out->kind);
}

StableIValue WordToStable(const IValue& v, Kind kind) {
  switch (kind) {
    case Kind::kInt:
      return static_cast<StableIValue>(v.toInt());
    case Kind::kFloat: {
      const double d = v.toDouble();
      StableIValue r;
      std::memcpy(&r, &d, sizeof d);
      return r;
    }
    case Kind::kBool:
      return v.toBool() ? 1 : 0;
    case Kind::kCode: {
      const auto code = static_cast<int32_t>(v.toInt());
      StableIValue r = 0;
      std::memcpy(&r, &code, sizeof code);
      return r;
    }
    default:
      return 0;
  }
}

void FreeBox(const TorchShim& shim, StableIValue* box) {
  if (shim.delete_stable_ivalue != nullptr) {
    shim.delete_stable_ivalue(box);
  } else {
    delete box;
  }
}

StableIValue* NewBox(const TorchShim& shim, StableIValue value) {
  StableIValue* box = nullptr;
  if (shim.new_stable_ivalue != nullptr) {
    CheckShim(shim.new_stable_ivalue(&box), "torch_new_stable_ivalue");
  } else {
    box = new StableIValue;
  }
  *box = value;
  return box;
}

IValue CompoundFromStable(const TorchShim& shim, StableIValue v, const ValueSlot& slot,
                          TensorImport import_tensor) {
  if (!slot.list) {
    if (slot.kind == Kind::kString) return IValue(TakeString(shim, v));
    return IValue(DeviceFromBits(shim, v));  // kDevice: the only other compound kind
  }
  switch (slot.kind) {
    case Kind::kInt:
      return IValue(
          TakeWords<int64_t>(shim, v, [](StableIValue x) { return static_cast<int64_t>(x); }));
    case Kind::kFloat:
      return IValue(TakeWords<double>(shim, v, [](StableIValue x) {
        double d;
        std::memcpy(&d, &x, sizeof d);
        return d;
      }));
    case Kind::kBool:
      return IValue(TakeWords<bool>(shim, v, [](StableIValue x) { return (x & 0xff) != 0; }));
    default:
      break;
  }
  const std::vector<StableIValue> items = TakeItems(shim, v);
  size_t done = 0;
  try {
    return ListFromItems(shim, items, slot, import_tensor, &done);
  } catch (...) {
    const ValueSlot item{slot.kind, slot.item_optional};
    for (size_t j = done; j < items.size(); ++j) Discard(shim, items[j], item);
    throw;
  }
}

StableIValue CompoundToStable(const TorchShim& shim, const IValue& v, const ValueSlot& slot,
                              TensorExport export_tensor) {
  if (!slot.list) {
    if (slot.kind == Kind::kDevice) {
      if (!v.isString()) return DeviceBits(shim, v.toDevice());
      // A Python kernel returns a device as its text, as opreg gives devices to Python.
      absl::StatusOr<Device> d = Device::Parse(v.toStringRef());
      if (!d.ok()) {
        throw Error(ErrorKind::kValue, StrCat("expected a device, got '", v.toStringRef(), "'"));
      }
      return DeviceBits(shim, *d);
    }
    return NewString(shim, v.toStringRef());
  }
  if (!v.isList()) throw Error(ErrorKind::kRuntime, "expected a list");
  StableListHandle list = nullptr;
  ValueSlot item{slot.kind};
  item.optional = slot.item_optional;  // `Tensor?[]`: each item null or boxed
  auto push = [&](StableIValue x) {
    if (shim.list_push_back(list, x) != 0) {
      Discard(shim, x, item);
      throw Error(ErrorKind::kRuntime, "torch's stable ABI: torch_list_push_back failed");
    }
  };
  CheckShim(shim.new_list(0, &list), "torch_new_list_reserve_size");
  try {
    switch (slot.kind) {
      case Kind::kTensor: {
        // A `Tensor?[]` item: null for None, else the tensor's handle in a box.
        auto push_item = [&](const Tensor* t) {
          if (!slot.item_optional) return push(export_tensor(*t));
          if (t == nullptr || !t->defined()) return push(0);
          const StableIValue x = export_tensor(*t);
          StableIValue* box;
          try {
            box = NewBox(shim, x);
          } catch (...) {
            Discard(shim, x, ValueSlot{Kind::kTensor});
            throw;
          }
          push(reinterpret_cast<StableIValue>(box));
        };
        if (v.isOptionalTensorList()) {
          for (const std::optional<Tensor>& t : v.toOptionalTensorList()) {
            push_item(t ? &*t : nullptr);
          }
        } else {
          for (const Tensor& t : v.toTensorList()) push_item(&t);
        }
        break;
      }
      case Kind::kInt:
        for (int64_t x : v.toIntList()) push(static_cast<StableIValue>(x));
        break;
      case Kind::kFloat:
        for (double x : v.toDoubleList()) {
          StableIValue bits;
          std::memcpy(&bits, &x, sizeof x);
          push(bits);
        }
        break;
      case Kind::kBool:
        for (bool x : v.toBoolList()) push(x ? 1 : 0);
        break;
      case Kind::kString:
        for (const std::string& s : v.toStringList()) push(NewString(shim, s));
        break;
      default:
        throw Error(ErrorKind::kRuntime, "a list of this kind is not carried");
    }
  } catch (...) {
    Discard(shim, reinterpret_cast<StableIValue>(list), ValueSlot{slot.kind, false, true});
    throw;
  }
  return reinterpret_cast<StableIValue>(list);
}

void Discard(const TorchShim& shim, StableIValue v, const ValueSlot& slot) {
  if (slot.optional) {
    auto* box = reinterpret_cast<StableIValue*>(v);
    if (box == nullptr) return;
    v = *box;
    FreeBox(shim, box);
  }
  if (slot.list) {
    if (v == 0) return;
    std::vector<StableIValue> items;
    try {
      items = TakeItems(shim, v);
    } catch (...) {
      return;  // nothing more can be freed
    }
    const ValueSlot item{slot.kind, slot.item_optional};
    for (StableIValue x : items) Discard(shim, x, item);
    return;
  }
  if (v == 0) return;
  if (slot.kind == Kind::kTensor) shim.delete_tensor(reinterpret_cast<AtenTensorHandle>(v));
  if (slot.kind == Kind::kString) shim.delete_string(reinterpret_cast<StringHandle>(v));
}

}  // namespace opreg::python
