#include "opreg/dispatch/checked_once.h"

#include "checked_once_scope.h"

namespace opreg {
namespace internal {
namespace {

// The innermost out resolution of this thread. A pointer to a scope on that call's stack, so
// that a call touches thread-local storage only to find it.
thread_local CheckedOnceScope* t_current = nullptr;
thread_local uint64_t t_taken = 0;

}  // namespace

void TensorIdentities::Add(const Tensor& t) {
  if (!t.defined()) return;
  if (size == impls.size()) {
    overflow = true;
    return;
  }
  impls[size++] = t.unsafe_get_impl();
}

void TensorIdentities::AddTensorsOf(const IValue* values, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const IValue& v = values[i];
    if (v.isTensor()) {
      Add(v.toTensor());
    } else if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorList()) Add(t);
    } else if (v.isOptionalTensorList()) {
      for (const auto& t : v.toOptionalTensorList()) {
        if (t) Add(*t);
      }
    }
  }
}

bool TensorIdentities::SameAs(const TensorIdentities& other) const {
  if (overflow || other.overflow || size != other.size) return false;
  for (uint8_t i = 0; i < size; ++i) {
    if (impls[i] != other.impls[i]) return false;
  }
  return true;
}

CheckedOnceScope::CheckedOnceScope() : previous_(t_current) { t_current = this; }

CheckedOnceScope::~CheckedOnceScope() { t_current = previous_; }

CheckedOnceScope* CheckedOnceScope::Current() { return t_current; }

void CheckedOnceScope::BeginMeta(const IValue* copies, size_t n) {
  if (phase_ != Phase::kBeforeMeta) return;
  expected_ = TensorIdentities();
  expected_.AddTensorsOf(copies, n);
  phase_ = Phase::kInMeta;
}

void CheckedOnceScope::EndMeta(const IValue* results, size_t n) {
  if (phase_ != Phase::kInMeta) return;
  phase_ = Phase::kAfterMeta;
  if (vouched_tag_ == nullptr) return;
  TensorIdentities returned;
  returned.AddTensorsOf(results, n);
  // Only a vouch for this very call counts: a meta function that vouched for a call of its own
  // (another op's meta function run on other tensors) and returned something else does not.
  if (!vouched_inputs_.SameAs(expected_) || !vouched_outputs_.SameAs(returned)) {
    vouched_tag_ = nullptr;
  }
}

void CheckedOnceScope::Arm(const IValue* stack, size_t n) {
  if (phase_ != Phase::kAfterMeta) return;
  expected_ = TensorIdentities();
  expected_.AddTensorsOf(stack, n);
  phase_ = Phase::kArmed;
}

void CheckedOnceScope::Vouch(const void* tag, std::initializer_list<const Tensor*> inputs,
                             std::initializer_list<const Tensor*> outputs) {
  if (phase_ != Phase::kInMeta || tag == nullptr) return;
  vouched_tag_ = tag;  // the last vouch is the meta function's own (it vouches as it returns)
  vouched_inputs_ = TensorIdentities();
  vouched_outputs_ = TensorIdentities();
  for (const Tensor* t : inputs) {
    if (t != nullptr) vouched_inputs_.Add(*t);
  }
  for (const Tensor* t : outputs) {
    if (t != nullptr) vouched_outputs_.Add(*t);
  }
}

bool CheckedOnceScope::Take(const void* tag, std::initializer_list<const Tensor*> tensors) {
  if (phase_ != Phase::kArmed) return false;
  phase_ = Phase::kDone;  // the first Take() of the out call decides
  if (tag == nullptr || tag != vouched_tag_) return false;
  TensorIdentities given;
  for (const Tensor* t : tensors) {
    if (t != nullptr) given.Add(*t);
  }
  if (!given.SameAs(expected_)) return false;
  ++t_taken;
  return true;
}

}  // namespace internal

void CheckedOnce::Vouch(const void* tag, std::initializer_list<const Tensor*> inputs,
                        std::initializer_list<const Tensor*> outputs) noexcept {
  if (internal::CheckedOnceScope* scope = internal::t_current) scope->Vouch(tag, inputs, outputs);
}

bool CheckedOnce::Take(const void* tag, std::initializer_list<const Tensor*> tensors) noexcept {
  internal::CheckedOnceScope* scope = internal::t_current;
  return scope != nullptr && scope->Take(tag, tensors);
}

uint64_t CheckedOnce::TakenOnThisThread() noexcept { return internal::t_taken; }

}  // namespace opreg
