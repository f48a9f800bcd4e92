// The out-resolution side of CheckedOnce (checked_once.h): the state of one functional call's
// resolution on its thread. Private to the dispatch library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "opreg/core/ivalue.h"
#include "opreg/dispatch/checked_once.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg::internal {

// The TensorImpls of a few tensors, in order (null for an undefined tensor); `overflow` when
// there were too many to record (such a list never matches).
struct TensorIdentities {
  std::array<const TensorImpl*, CheckedOnce::kMaxTensors> impls{};
  uint8_t size = 0;
  bool overflow = false;

  // Records `t`; with `hold`, also keeps a handle to it in hold[its index].
  void Add(const Tensor& t, Tensor* hold = nullptr);
  // The tensors among `n` values (tensors and the items of tensor lists; a None is not one), in
  // order.
  void AddTensorsOf(const IValue* values, size_t n, Tensor* hold = nullptr);
  bool SameAs(const TensorIdentities& other) const;
};

// A few argument values (CheckedOnce::Word), in order; `overflow` as above.
struct ValueWords {
  std::array<uint64_t, CheckedOnce::kMaxValues> words{};
  uint8_t size = 0;
  bool overflow = false;

  explicit ValueWords(std::initializer_list<uint64_t> values);
  ValueWords() = default;
  bool SameAs(const ValueWords& other) const;
};

// Made by out resolution around one call of `functional` through `out`, on its stack: current
// for the thread from construction to destruction (the previous scope, of an enclosing call, is
// restored after). `in_order`: the link passes the functional call's arguments on in their order
// (no meta-only arguments); a vouch never counts otherwise. Not thread-safe: one thread's.
class CheckedOnceScope {
 public:
  enum class Phase : uint8_t {
    kBeforeMeta,  // the meta function has not run
    kInMeta,      // it runs; its Vouch() is recorded
    kAfterMeta,   // it ran; a vouch, if any, is confirmed or dropped
    kArmed,       // the out variant's kernel runs; its first Take() ends this
    kDone,
  };

  CheckedOnceScope(const OperatorEntry& functional, const OperatorEntry& out, bool in_order);
  ~CheckedOnceScope();
  CheckedOnceScope(const CheckedOnceScope&) = delete;
  CheckedOnceScope& operator=(const CheckedOnceScope&) = delete;

  // The scope of the innermost out resolution running on this thread, or nullptr.
  static CheckedOnceScope* Current();

  // The meta function is about to run on the `n` meta copies at `copies`.
  void BeginMeta(const IValue* copies, size_t n);
  // It returned the `n` values at `results`: its vouch counts only when made for `copies` and
  // these results.
  void EndMeta(const IValue* results, size_t n);
  // The out variant's kernel is about to run on the `n` values at `stack`.
  void Arm(const IValue* stack, size_t n);

  // CheckedOnce's two calls, on this scope.
  void Vouch(const CheckedOnce::Pair& pair, std::initializer_list<const Tensor*> inputs,
             std::initializer_list<uint64_t> values, std::initializer_list<const Tensor*> outputs);
  bool Take(const CheckedOnce::Pair& pair, std::initializer_list<const Tensor*> tensors,
            std::initializer_list<uint64_t> values);

 private:
  CheckedOnceScope* previous_;
  const OperatorEntry& functional_;
  const OperatorEntry& out_;
  const bool in_order_;
  Phase phase_ = Phase::kBeforeMeta;
  const CheckedOnce::Pair* vouched_ = nullptr;  // after EndMeta: the confirmed pair, or null
  TensorIdentities expected_;  // kInMeta: the copies; kArmed: the out call's tensors
  // Handles to the tensors whose addresses stand for them, so that none of them is freed or
  // recycled (its object refilled with another layout) meanwhile: kInMeta, the vouched results,
  // until EndMeta; kArmed, the out call's tensors, until the first Take().
  std::array<Tensor, CheckedOnce::kMaxTensors> held_;
  TensorIdentities vouched_inputs_;
  TensorIdentities vouched_outputs_;
  ValueWords vouched_values_;
};

// RunMetaFunction (run_meta_function.h) for out resolution: with `once`, the scope learns the
// meta copies the meta function gets and the results it returns (to confirm its vouch).
Stack RunMetaFunctionFor(const OperatorHandle& op, const IValue* arguments, size_t n,
                         CheckedOnceScope* once);

}  // namespace opreg::internal
