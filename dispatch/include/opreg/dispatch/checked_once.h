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
//     Vouch(pair, inputs, values, outputs) with the tensors it received, its other arguments'
//     values (as words) and the tensors it returns;
//   - the out kernel calls Take(pair, tensors, values) with its tensors and its other arguments'
//     values and, when it returns true, skips the checks the meta function made (and those of
//     the outs, which out resolution made from those results).
//
// Take() is true only while out resolution on the calling thread is running the out variant's
// kernel, and only when all of these hold:
//   - the call being resolved is one of the pair's functional op, through an out-variant link to
//     the pair's out op that passes the functional call's arguments on in their order (an
//     automatic link, or an explicit one without meta-only arguments);
//   - the meta function out resolution ran for this call vouched for the pair, for exactly the
//     meta copies it was given and the results it returned (a vouch made by a nested call for
//     another op's call does not count);
//   - `tensors` are the very tensors of the out-variant call: the tensors of its stack, in order
//     (inputs and fresh outs);
//   - `values` are the values the meta function vouched with.
// It is true at most once per call: the first Take() ends it. So the kernel skips its checks
// only for arguments the library's meta function validated: the same tensors (their sizes,
// strides and dtypes are those of the meta copies), the same other values, and outs made from
// the results it computed from them. A direct `.out` call outside out resolution, an out
// variant called with other tensors or values, a functional op linked to another out op, and a
// functional call whose meta function does not vouch (an override registered since) all get
// false, and the kernel checks everything. (Kernel code that calls the library's meta function
// or kernels itself, inside such a call, can at most get true for what was validated.)
//
// The tensor lists follow one rule: the tensors in argument order, the items of a `Tensor[]` or
// `Tensor?[]` one by one, an absent `Tensor?` (None; nullptr in a list given here) left out, an
// undefined tensor kept in its place (so that no tensor can take another's role); at most
// kMaxTensors. The
// values are the non-tensor arguments the checks depend on, in one order the library chooses,
// as Word()s (equal words must mean equal values); at most kMaxValues. Tensors are compared by
// identity (their TensorImpl), so each must stay the tensor it was while its address stands for
// it: the meta copies are held by the meta run until it is over, the scope holds a handle to
// each vouched result until the meta run ends, and out resolution holds a handle to each tensor
// of the out call from the moment it arms the call to the first Take(). So none can be freed,
// or recycled and refilled with another layout, in between; opreg tensors have no other way to
// change their layout.
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
#include <cstring>
#include <initializer_list>

#include "opreg/core/tensor.h"

namespace opreg {

class OperatorEntry;

class CheckedOnce {
 public:
  // Calls with more tensors or values than these are never vouched for (they are checked in
  // full).
  static constexpr size_t kMaxTensors = 8;
  static constexpr size_t kMaxValues = 8;

  // Argument values as words, for Vouch and Take.
  static uint64_t Word(int64_t v) { return static_cast<uint64_t>(v); }
  static uint64_t Word(bool v) { return v ? 1 : 0; }
  static uint64_t Word(double v) {
    uint64_t bits;
    static_assert(sizeof(bits) == sizeof(v));
    std::memcpy(&bits, &v, sizeof(v));
    return bits;
  }

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

  // Called by a meta function after it validated `inputs` (the tensors it was given) and
  // `values` (its other arguments) and made `outputs` (the tensors it returns). Does nothing
  // outside out resolution. Never throws.
  static void Vouch(const Pair& pair, std::initializer_list<const Tensor*> inputs,
                    std::initializer_list<uint64_t> values,
                    std::initializer_list<const Tensor*> outputs) noexcept;

  // True when the out kernel, called with `tensors` and `values`, may skip the checks its meta
  // function made (see above). Never throws.
  static bool Take(const Pair& pair, std::initializer_list<const Tensor*> tensors,
                   std::initializer_list<uint64_t> values) noexcept;

  // How many Take() calls returned true on this thread so far (for tests).
  static uint64_t TakenOnThisThread() noexcept;
};

}  // namespace opreg
