#include "opreg/dispatch/checked_once.h"

#include <string_view>

#include "checked_once_scope.h"
#include "opreg/dispatch/operator_entry.h"

namespace opreg {
namespace internal {
namespace {

// The innermost out resolution of this thread. A pointer to a scope on that call's stack, so
// that a call touches thread-local storage only to find it.
thread_local CheckedOnceScope* t_current = nullptr;
thread_local uint64_t t_taken = 0;

}  // namespace

void TensorIdentities::Add(const Tensor& t, Tensor* hold) {
  // An undefined tensor takes a slot of its own (a null identity), so that the tensors after it
  // keep their places: roles cannot shift by leaving a required tensor undefined.
  if (size == impls.size()) {
    overflow = true;
    return;
  }
  if (hold != nullptr && t.defined()) hold[size] = t;
  impls[size++] = t.unsafe_get_impl();  // null for an undefined tensor
}

void TensorIdentities::AddTensorsOf(const IValue* values, size_t n, Tensor* hold) {
  for (size_t i = 0; i < n; ++i) {
    const IValue& v = values[i];
    if (v.isTensor()) {
      Add(v.toTensor(), hold);
    } else if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorList()) Add(t, hold);
    } else if (v.isOptionalTensorList()) {
      for (const auto& t : v.toOptionalTensorList()) {
        if (t) Add(*t, hold);
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

ValueWords::ValueWords(std::initializer_list<uint64_t> values) {
  if (values.size() > words.size()) {
    overflow = true;
    return;
  }
  for (uint64_t w : values) words[size++] = w;
}

bool ValueWords::SameAs(const ValueWords& other) const {
  if (overflow || other.overflow || size != other.size) return false;
  for (uint8_t i = 0; i < size; ++i) {
    if (words[i] != other.words[i]) return false;
  }
  return true;
}

CheckedOnceScope::CheckedOnceScope(const OperatorEntry& functional, const OperatorEntry& out,
                                   bool in_order)
    : previous_(t_current), functional_(functional), out_(out), in_order_(in_order) {
  t_current = this;
}

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
  if (vouched_ == nullptr) return;
  // Only a vouch for this very call counts: for the op being resolved, through the out op its
  // pair names, by a link that hands the out kernel the values the meta function saw, and for
  // the copies it was given and the results it returned. A meta function of another op that ran
  // this pair's meta function nested (on tensors of its own, or on its copies) vouched for another
  // op's call.
  TensorIdentities returned;
  returned.AddTensorsOf(results, n);
  // (The vouched outputs are compared while `held_` keeps them alive; the inputs, as copies,
  // are kept by the meta run.)
  if (!in_order_ || !vouched_->Names(functional_, out_) || !vouched_inputs_.SameAs(expected_) ||
      !vouched_outputs_.SameAs(returned)) {
    vouched_ = nullptr;
  }
  held_ = {};
}

void CheckedOnceScope::Arm(const IValue* stack, size_t n) {
  if (phase_ != Phase::kAfterMeta) return;
  if (vouched_ == nullptr) {  // nothing to take (every op whose meta function does not vouch):
    phase_ = Phase::kDone;    // no identities recorded, no handles held
    return;
  }
  expected_ = TensorIdentities();
  expected_.AddTensorsOf(stack, n, held_.data());
  phase_ = Phase::kArmed;
}

void CheckedOnceScope::Vouch(const CheckedOnce::Pair& pair,
                             std::initializer_list<const Tensor*> inputs,
                             std::initializer_list<uint64_t> values,
                             std::initializer_list<const Tensor*> outputs) {
  if (phase_ != Phase::kInMeta) return;
  vouched_ = &pair;  // the last vouch is the meta function's own (it vouches as it returns)
  vouched_values_ = ValueWords(values);
  vouched_inputs_ = TensorIdentities();
  vouched_outputs_ = TensorIdentities();
  held_ = {};
  for (const Tensor* t : inputs) {
    if (t != nullptr) vouched_inputs_.Add(*t);
  }
  for (const Tensor* t : outputs) {
    if (t != nullptr) vouched_outputs_.Add(*t, held_.data());
  }
}

bool CheckedOnceScope::Take(const CheckedOnce::Pair& pair,
                            std::initializer_list<const Tensor*> tensors,
                            std::initializer_list<uint64_t> values) {
  if (phase_ != Phase::kArmed) return false;
  phase_ = Phase::kDone;  // the first Take() of the out call decides
  // The values too: kernel code handed the call's tensors (an override of the out kernel, or of
  // the meta function, calling the library's own) gets true only for what was validated.
  if (&pair != vouched_ || !ValueWords(values).SameAs(vouched_values_)) return false;
  TensorIdentities given;
  for (const Tensor* t : tensors) {
    if (t != nullptr) given.Add(*t);
  }
  const bool same = given.SameAs(expected_);  // compared while `held_` keeps them alive
  held_ = {};
  if (!same) return false;
  ++t_taken;
  return true;
}

}  // namespace internal

namespace {

// Whether `name` is `qualified` ("ns::op" or "ns::op.overload").
bool NameIs(const OperatorName& name, std::string_view qualified) {
  const size_t ns_end = qualified.find("::");
  const size_t dot = qualified.find('.', ns_end == std::string_view::npos ? 0 : ns_end + 2);
  const std::string_view base = qualified.substr(0, dot);
  const std::string_view overload =
      dot == std::string_view::npos ? std::string_view() : qualified.substr(dot + 1);
  return name.name == base && name.overload_name == overload;
}

// Whether `entry` is the op named `qualified`, remembered in `cache` once found.
bool IsEntry(const OperatorEntry& entry, const char* qualified,
             std::atomic<const OperatorEntry*>& cache) {
  const OperatorEntry* known = cache.load(std::memory_order_relaxed);
  if (known != nullptr) return known == &entry;
  if (!NameIs(entry.name(), qualified)) return false;
  cache.store(&entry, std::memory_order_relaxed);  // one entry per name, never freed
  return true;
}

}  // namespace

bool CheckedOnce::Pair::Names(const OperatorEntry& functional,
                              const OperatorEntry& out) const noexcept {
  return IsEntry(functional, functional_, functional_entry_) && IsEntry(out, out_, out_entry_);
}

void CheckedOnce::Vouch(const Pair& pair, std::initializer_list<const Tensor*> inputs,
                        std::initializer_list<uint64_t> values,
                        std::initializer_list<const Tensor*> outputs) noexcept {
  if (internal::CheckedOnceScope* scope = internal::t_current) {
    scope->Vouch(pair, inputs, values, outputs);
  }
}

bool CheckedOnce::Take(const Pair& pair, std::initializer_list<const Tensor*> tensors,
                       std::initializer_list<uint64_t> values) noexcept {
  internal::CheckedOnceScope* scope = internal::t_current;
  return scope != nullptr && scope->Take(pair, tensors, values);
}

uint64_t CheckedOnce::TakenOnThisThread() noexcept { return internal::t_taken; }

}  // namespace opreg
