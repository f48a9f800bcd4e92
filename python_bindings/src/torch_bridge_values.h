// How each argument and return of a bridged op (torch_bridge.cc) travels through torch's stable
// C ABI as a StableIValue, and the conversions to and from opreg's IValues. The encodings are
// torch's (torch/csrc/shim_common.cpp, from_ivalue / to_ivalue):
//   Tensor -> an owned AtenTensorHandle; int/SymInt -> int64 bits; float -> double bits;
//   bool -> 0/1; ScalarType, Layout, MemoryFormat -> torch's code in the low 32 bits (the code
//   opreg's IValue holds); Device -> (c10 device type << 32) | uint32(index); str -> an owned StringHandle;
//   T? -> null for None, else a pointer to a boxed StableIValue; T[] -> an owned StableListHandle
//   whose items are encoded as T.
// Whoever holds a value owns what it points to: a kernel receives owned arguments and hands back
// owned returns. Errors: opreg::Error (kRuntime) when a shim call fails, kValue for a device
// opreg has no kernels for. Not thread-safe by itself; each call converts its own values.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/functional/function_ref.h"
#include "opreg/core/ivalue.h"
#include "opreg/schema/type.h"
#include "torch_shim.h"

namespace opreg::python {

// The kind of one value (for a list: of each of its items).
// kCode: a ScalarType, Layout or MemoryFormat, as torch's int32 code (opreg's IValue holds the
// same code as an int).
enum class Kind : uint8_t { kTensor, kInt, kFloat, kBool, kCode, kString, kDevice };

struct ValueSlot {
  Kind kind = Kind::kInt;
  bool optional = false;       // `T?`: null for None, else a boxed StableIValue
  bool list = false;           // `T[]`: a list handle of items of `kind`
  bool item_optional = false;  // `Tensor?[]`: each item null or boxed
  bool written = false;        // `Tensor(a!)` / `Tensor(a!)[]`: version counters bumped
};

// The slot of a schema type; false for a type the bridge does not carry with this torch (a
// Scalar, which the stable ABI has no encoding for; lists or strings where this torch's shim
// lacks them; nested containers).
bool SlotOf(const TorchShim& shim, const Type& type, ValueSlot* out);

// A one-word value (int, float, bool, an enum code) as an opreg value.
inline IValue WordFromStable(StableIValue v, Kind kind) {
  switch (kind) {
    case Kind::kInt:
      return IValue(static_cast<int64_t>(v));
    case Kind::kFloat: {
      double d;
      std::memcpy(&d, &v, sizeof d);
      return IValue(d);
    }
    case Kind::kBool:
      return IValue((v & 0xff) != 0);
    case Kind::kCode: {
      int32_t code;
      std::memcpy(&code, &v, sizeof code);
      return IValue(static_cast<int64_t>(code));
    }
    default:
      return IValue();
  }
}

// One-word opreg value (int, float, bool, an enum code) as a StableIValue.
StableIValue WordToStable(const IValue& v, Kind kind);

// Frees a boxed StableIValue (an optional's box).
void FreeBox(const TorchShim& shim, StableIValue* box);
// A new box holding `value`, allocated as torch frees it (FreeBox's way).
StableIValue* NewBox(const TorchShim& shim, StableIValue value);
// Whether this torch's boxes can be made here: torch frees them with torch_delete_stable_ivalue
// (then torch_new_stable_ivalue makes them) or, before 2.13, with `delete`.
inline bool CanBox(const TorchShim& shim) {
  return shim.new_stable_ivalue != nullptr || shim.delete_stable_ivalue == nullptr;
}

// Makes an opreg tensor of an owned handle (taking it, or deleting it when it throws).
using TensorImport = absl::FunctionRef<Tensor(AtenTensorHandle)>;
// Makes an owned handle of an opreg tensor.
using TensorExport = absl::FunctionRef<StableIValue(const Tensor&)>;

// A string, device or list argument (not an optional's box: `v` is what it held) as an opreg
// value, taking ownership of what `v` holds: on an error, what was not converted is freed.
IValue CompoundFromStable(const TorchShim& shim, StableIValue v, const ValueSlot& slot,
                          TensorImport import_tensor);

// A string, device or list return as an owned StableIValue (errors do not name the op: the
// caller adds it).
StableIValue CompoundToStable(const TorchShim& shim, const IValue& v, const ValueSlot& slot,
                              TensorExport export_tensor);

// Frees what an unconverted value owns (its box included when `slot.optional`).
void Discard(const TorchShim& shim, StableIValue v, const ValueSlot& slot);

}  // namespace opreg::python
