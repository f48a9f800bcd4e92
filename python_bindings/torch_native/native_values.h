// How opreg._torch_native's kernels (native_kernel.h) turn the torch values torch's dispatcher
// hands a boxed kernel into opreg's values, and opreg's results back into torch values.
//
// Tensors cross without copies: an opreg tensor made of a torch tensor views its memory and holds
// a reference to its c10::TensorImpl until the opreg tensor goes (normally when the call's
// RecycleScope ends); a torch tensor made of an opreg result views the result's memory and keeps
// the opreg tensor alive until torch frees it. Errors: opreg::Error naming the op and the
// argument or return (kType for a dtype or value kind opreg has no counterpart for, kValue for a
// device it has no kernels on). Not thread-safe by itself; each call converts its own values.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "opreg/core/ivalue.h"
#include "opreg/core/recycled_tensors.h"

namespace opreg::torch_native {

// The torch tensor of each opreg tensor a call has seen (its tensor arguments, then the torch
// tensors made of its results): a result that is an argument's own tensor goes back as that torch
// tensor, as torch's in-place and out ops return theirs, and a result returned twice is one
// torch tensor.
class CallTensors {
 public:
  void Add(const TensorImpl* ours, c10::TensorImpl* theirs) { entries_.emplace_back(ours, theirs); }
  c10::TensorImpl* Find(const TensorImpl* ours) const {
    for (const auto& [o, t] : entries_) {
      if (o == ours) return t;
    }
    return nullptr;
  }

 private:
  absl::InlinedVector<std::pair<const TensorImpl*, c10::TensorImpl*>, 8> entries_;
};

// What converting a call's arguments found out.
struct ArgumentFacts {
  uint32_t device_types = 0;  // a bit per opreg DeviceType of the tensor arguments
  int cuda_device = -1;       // the device of the first CUDA tensor, -1 when none
  // Every value is of the exact type opreg's schema has for it (OperatorHandle::
  // CallBoxedPrepared's promise); false where the dispatcher's checks must look (an undefined
  // tensor, a list of mixed or unusual items).
  bool exact = true;
};

// Who a value belongs to, for messages: "[op] argument 'name' (#index)" or "[op] return #index".
struct ValueName {
  const std::string* op;
  const std::string* argument;  // null for a return
  size_t index;
};

// torch argument `v` as an opreg value; tensors are made in `scope` and recorded in `tensors`;
// each written tensor's version counter is bumped when `written`.
IValue FromTorch(const c10::IValue& v, bool written, const ValueName& name, RecycleScope& scope,
                 CallTensors& tensors, ArgumentFacts& facts);

// opreg result `v` (already checked against its declared type: CheckAndCoerceValue) as a torch
// value. The torch tensors made are recorded in `tensors` (they live on the caller's stack).
c10::IValue ToTorch(IValue v, const ValueName& name, CallTensors& tensors);

// Torch tensors made of opreg results that torch has not freed yet (for leak tests).
int64_t LiveResults();

}  // namespace opreg::torch_native
