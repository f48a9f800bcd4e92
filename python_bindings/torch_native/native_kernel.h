// NativeKernel: an opreg op as the boxed kernel of a torch op, for one dispatch key (CPU or CUDA),
// registered by opreg._torch_native (module.cc) through torch's own C++ API.
//
// torch's dispatcher calls it with the op's arguments on its stack, as it calls a
// TORCH_LIBRARY kernel; it converts them (native_values.h), bumps the version counter of each
// tensor the op writes, calls the opreg op (on torch's current stream of the tensors' CUDA
// device) and leaves the returns torch expects on the stack. opreg errors reach Python with
// their kind (NotImplementedError stays one). Thread-safe: the kernel is immutable and each
// call converts its own values.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg::torch_native {

class NativeKernel final : public c10::OperatorKernel {
 public:
  // `op`'s current definition is the one whose schema the torch op was defined with.
  explicit NativeKernel(const OperatorHandle& op);

  void operator()(const c10::OperatorHandle& torch_op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

 private:
  void Run(const c10::OperatorHandle& torch_op, torch::jit::Stack* stack);
  // The opreg call on `num_args` torch arguments; the first `num_returns` results as torch values.
  absl::InlinedVector<c10::IValue, 4> Call(const c10::IValue* args, size_t num_args,
                                           size_t num_returns) const;

  OperatorHandle op_;
  // The definition the fields below were read from. The op may since have been redefined (torch
  // keeps this kernel until opreg.torch replaces it): calls then take the checked path.
  const OpDefinition* def_;
  std::string op_name_;
  std::vector<std::string> arg_names_;
  std::vector<uint8_t> written_;  // per argument: `Tensor(a!)`
  const std::string unknown_name_ = "?";  // an argument the opreg schema lacks
};

}  // namespace opreg::torch_native
