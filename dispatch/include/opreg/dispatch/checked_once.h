// CheckedOnce: lets a functional op's meta function and its out variant's kernel check a call
// once.
//
// A functional call with no kernel of its own runs through its out variant (out_resolution.h):
// the functional op's meta function runs on meta copies of the arguments (it validates them and
// sizes the outputs), fresh outs are allocated from its results, and the out variant's kernel
// runs. That kernel must validate a direct `.out` call (any inputs, any outs), so in this
// sequence it repeats what the meta function just checked. A library that wrote both functions
// can skip the repeat:
//   - the meta function, once it has validated its arguments and made its results, calls
//     Vouch(tag, inputs, outputs) with the tensors it received and the tensors it returns;
//   - the out kernel calls Take(tag, tensors) and, when it returns true, skips the checks the
//     meta function made (and those of the outs, which out resolution made from those results).
//
// Take() is true only while out resolution on the calling thread is running the out variant's
// kernel, and only when all of these hold:
//   - the meta function out resolution ran for this call vouched with `tag`, for exactly the
//     meta copies it was given and the results it returned (a vouch from any other call, or from
//     a meta function that returned other tensors, does not count);
//   - `tensors` are the very tensors of the out-variant call: the defined tensor arguments of
//     its stack, in order (inputs and fresh outs).
// It is true at most once per call: the first Take() ends it. A direct `.out` call, an out
// variant called with other tensors, or a functional call whose meta function is another one (an
// override registered since) all get false, and the kernel checks everything.
//
// `tag` names the pair of functions: any address the library keeps private (so that no other
// meta function vouches for its kernels by accident). Vouch's lists follow one rule: the defined
// tensor arguments in argument order (an absent `Tensor?` left out), at most kMaxTensors.
//
// What the out kernel must still check: what the meta function cannot see. It runs on meta
// copies, so it cannot tell which device (or device index) each input is on.
//
// Thread safety: the state is per thread; both functions may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "opreg/core/tensor.h"

namespace opreg {

class CheckedOnce {
 public:
  // Calls with more tensors than this are never vouched for (they are checked in full).
  static constexpr size_t kMaxTensors = 8;

  // Called by a meta function after it validated `inputs` (the tensors it was given) and made
  // `outputs` (the tensors it returns). Does nothing outside out resolution. Never throws.
  static void Vouch(const void* tag, std::initializer_list<const Tensor*> inputs,
                    std::initializer_list<const Tensor*> outputs) noexcept;

  // True when the out kernel may skip the checks its meta function made (see above). Never
  // throws.
  static bool Take(const void* tag, std::initializer_list<const Tensor*> tensors) noexcept;

  // How many Take() calls returned true on this thread so far (for tests).
  static uint64_t TakenOnThisThread() noexcept;
};

}  // namespace opreg
