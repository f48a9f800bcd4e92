// CheckedOnce: lets a functional op's meta function and its out variant's kernel check a call
// once.
//
// A functional call with no kernel of its own runs through its out variant (out_resolution.h):
// the functional op's meta function runs on meta copies of the arguments (it validates them and
// sizes the outputs), fresh outs are allocated from its results, and the out variant's kernel
// runs. That kernel must validate a direct `.out` call (any inputs, any outs), so in this
// sequence it repeats what the meta function just checked. A library that wrote both functions
// can skip the repeat:
//   - it names the two ops once, as a Pair it keeps private (a static object);
//   - the meta function, once it has validated its arguments and made its results, calls
//     Vouch(pair, inputs, outputs) with the tensors it received and the tensors it returns;
//   - the out kernel calls Take(pair, tensors) and, when it returns true, skips the checks the
//     meta function made (and those of the outs, which out resolution made from those results).
//
// Take() is true only while out resolution on the calling thread is running the out variant's
// kernel, and only when all of these hold:
//   - the call being resolved is one of the pair's functional op, through an out-variant link to
//     the pair's out op that passes the functional call's arguments on in their order (an
//     automatic link, or an explicit one without meta-only arguments): the out kernel then gets
//     the very values the meta function saw, numbers and flags included;
//   - the meta function out resolution ran for this call vouched for the pair, for exactly the
//     meta copies it was given and the results it returned. A vouch made by a nested call (a meta
//     function of another op that calls this op's meta function on tensors of its own) is for
//     another op, and does not count;
//   - `tensors` are the very tensors of the out-variant call: the defined tensors of its stack,
//     in order (inputs and fresh outs).
// It is true at most once per call: the first Take() ends it. A direct `.out` call, an out
// variant called with other tensors, a functional op linked to another out op, or a pair's
// functional op whose meta function is not the library's (an override registered since: it
// cannot vouch for a pair it cannot name) all get false, and the kernel checks everything.
//
// The tensor lists follow one rule: the defined tensors in argument order, the items of a
// `Tensor[]` or `Tensor?[]` one by one, an absent `Tensor?` left out; at most kMaxTensors. The
// tensors are compared by identity (their TensorImpl): every tensor compared is alive when it is
// compared (the meta copies and the out call's stack outlive the comparisons, and a meta
// function vouches for the results it is returning).
//
// What the out kernel must still check: what the meta function cannot see. It runs on meta
// copies, so it cannot tell which device (or device index) each input is on.
//
// Thread safety: the state is per thread; Vouch and Take may be called from any thread. A Pair
// may be used from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "opreg/core/tensor.h"

namespace opreg {

class OperatorEntry;

class CheckedOnce {
 public:
  // Calls with more tensors than this are never vouched for (they are checked in full).
  static constexpr size_t kMaxTensors = 8;

  // A functional op and its out variant, by qualified name ("ns::op", "ns::op.out"). Constant-
  // initialized, never copied: define one per pair as a static object. The names must outlive it
  // (string literals).
  class Pair {
   public:
    constexpr Pair(const char* functional, const char* out) : functional_(functional), out_(out) {}
    Pair(const Pair&) = delete;
    Pair& operator=(const Pair&) = delete;

    // True when `functional` and `out` are the ops this pair names. Never throws.
    bool Names(const OperatorEntry& functional, const OperatorEntry& out) const noexcept;

   private:
    const char* functional_;
    const char* out_;
    // The entries, once found (entries are never freed).
    mutable std::atomic<const OperatorEntry*> functional_entry_{nullptr};
    mutable std::atomic<const OperatorEntry*> out_entry_{nullptr};
  };

  // Called by a meta function after it validated `inputs` (the tensors it was given) and made
  // `outputs` (the tensors it returns). Does nothing outside out resolution. Never throws.
  static void Vouch(const Pair& pair, std::initializer_list<const Tensor*> inputs,
                    std::initializer_list<const Tensor*> outputs) noexcept;

  // True when the out kernel may skip the checks its meta function made (see above). Never
  // throws.
  static bool Take(const Pair& pair, std::initializer_list<const Tensor*> tensors) noexcept;

  // How many Take() calls returned true on this thread so far (for tests).
  static uint64_t TakenOnThisThread() noexcept;
};

}  // namespace opreg
