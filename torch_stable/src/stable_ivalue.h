// Boxed values between opreg's Stack (IValues) and the stable ABI's stack (StableIValues, one
// 64-bit word each), driven by the schema type of each slot. The encoding is torch's, so that a
// kernel compiled against torch's headers reads what opreg writes:
//   Tensor -> AtenTensorHandle (new reference); int/SymInt -> int64 bits; float -> double bits;
//   bool -> 0/1; ScalarType/Layout/MemoryFormat -> torch's int32 code; Device -> (device type
//   code << 32) | uint32(index); str -> StringHandle; T? -> nullptr or a heap StableIValue box;
//   T[] -> StableListHandle of the elements.
// Errors: opreg::Error (kType) naming `what` for a type the stable ABI cannot carry (Scalar,
// Dict, a class, ...).
#pragma once

#include <string>

#include "../include/torch/csrc/inductor/aoti_torch/c/shim.h"
#include "opreg/core/ivalue.h"
#include "opreg/schema/type.h"

namespace opreg::torch_stable {

// New references: the receiver owns every handle in the result.
StableIValue ToStable(const IValue& value, const Type& type, const std::string& what);
// Takes ownership of every handle in `value` (and releases boxes, lists and strings).
IValue FromStable(StableIValue value, const Type& type, const std::string& what);
// Releases what `value` owns without converting it (a stack slot left over after an error).
void ReleaseStable(StableIValue value, const Type& type);

}  // namespace opreg::torch_stable
