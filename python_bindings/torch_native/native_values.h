// How opreg._torch_native's kernels (native_kernel.h) turn the torch values torch's dispatcher
// hands a boxed kernel into opreg's values, and opreg's results back into torch values.
//
// Tensors cross without copies. An opreg tensor made of a torch tensor views its memory,
// borrowing the reference torch's stack holds to its c10::TensorImpl for the call; one that
// outlives the call (a kernel kept it) takes a reference of its own when the call's RecycleScope
// ends (BorrowTorchTensors), held until it goes. A torch tensor made of an opreg result views the
// result's memory and keeps the opreg tensor alive until torch frees it. Errors: opreg::Error
// naming the op and the argument or return (kType for a dtype or value kind opreg has no
// counterpart for, kValue for a device it has no kernels on). Not thread-safe by itself; each
// call converts its own values.
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

// The torch tensor of each opreg tensor a call has seen (its tensor arguments, whose torch tensors
// the call's RecycleScope knows as their sources, then the torch tensors made of its results): a
// result that is an argument's own tensor goes back as that torch tensor, as torch's in-place and
// out ops return theirs, and a result returned twice is one torch tensor.
class CallTensors {
 public:
  explicit CallTensors(const RecycleScope& arguments) : arguments_(&arguments) {}
  void AddResult(const TensorImpl* ours, c10::TensorImpl* theirs) {
    results_.emplace_back(ours, theirs);
  }
  c10::TensorImpl* Find(const TensorImpl* ours) const {
    if (const void* source = arguments_->SourceOf(ours)) {
      return static_cast<c10::TensorImpl*>(const_cast<void*>(source));
    }
    for (const auto& [o, t] : results_) {
      if (o == ours) return t;
    }
    return nullptr;
  }

 private:
  const RecycleScope* arguments_;
  absl::InlinedVector<std::pair<const TensorImpl*, c10::TensorImpl*>, 4> results_;
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

// Makes `scope` borrow the torch tensors FromTorch makes opreg tensors of (RecycleScope::
// BorrowOwners): the caller keeps torch's arguments alive until the scope ends.
void BorrowTorchTensors(RecycleScope& scope);

// FromTorch() for a tensor (an undefined one is None) and for any other value.
IValue FromTorchTensor(const at::Tensor& t, bool written, const ValueName& name,
                       RecycleScope& scope, ArgumentFacts& facts);
IValue FromTorchValue(const c10::IValue& v, bool written, const ValueName& name,
                      RecycleScope& scope, ArgumentFacts& facts);

// torch argument `v` as an opreg value; tensors are made in `scope` (CallTensors finds them there);
// each written tensor's version counter is bumped when `written`. Inline: most arguments are
// tensors, which then skip a call.
inline IValue FromTorch(const c10::IValue& v, bool written, const ValueName& name,
                        RecycleScope& scope, ArgumentFacts& facts) {
  return v.isTensor() ? FromTorchTensor(v.toTensor(), written, name, scope, facts)
                      : FromTorchValue(v, written, name, scope, facts);
}

// opreg result `v` (already checked against its declared type: CheckAndCoerceValue) as a torch
// value. The torch tensors made are recorded in `tensors` (they live on the caller's stack).
c10::IValue ToTorch(IValue v, const ValueName& name, CallTensors& tensors);

// Torch tensors made of opreg results that torch has not freed yet (for leak tests).
int64_t LiveResults();

}  // namespace opreg::torch_native
