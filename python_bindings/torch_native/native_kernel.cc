// Why NativeKernel calls as it does (the contract is in native_kernel.h).
#include "native_kernel.h"

#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "module_internal.h"
#include "native_values.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/core/string_util.h"
#include "torch_errors.h"

namespace opreg::torch_native {
namespace {

// torch's current stream on CUDA device `index`, through c10's device-guard interface (libc10_cuda
// registers it when torch has CUDA), so this module needs no CUDA headers.
CudaStreamHandle CurrentTorchStream(int index) {
  const c10::Device device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
  return static_cast<CudaStreamHandle>(
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device).native_handle());
}

}  // namespace

NativeKernel::NativeKernel(const OperatorHandle& op)
    : op_(op), def_(&op.definition()), op_name_(op.operator_name().str()) {
  for (const Argument& a : def_->schema.arguments()) {
    arg_names_.push_back(a.name());
    written_.push_back(a.is_write());
  }
}

void NativeKernel::operator()(const c10::OperatorHandle& torch_op, c10::DispatchKeySet /*keys*/,
                              torch::jit::Stack* stack) {
  try {
    Run(torch_op, stack);
  } catch (const Error& e) {
    python::ThrowForTorch(e);  // keeps the error's kind
  }
}

void NativeKernel::Run(const c10::OperatorHandle& torch_op, torch::jit::Stack* stack) {
  const size_t num_args = torch_op.schema().arguments().size();
  const size_t num_returns = torch_op.schema().returns().size();
  // The arguments stay on torch's stack (and so alive) until the returns replace them; the opreg
  // tensors made of them are gone before that, so dropping their references is never the last
  // C++ reference to a torch tensor (which would take the GIL).
  absl::InlinedVector<c10::IValue, 4> returns =
      Call(stack->data() + (stack->size() - num_args), num_args, num_returns);
  torch::jit::drop(*stack, num_args);
  for (c10::IValue& r : returns) stack->push_back(std::move(r));
}

absl::InlinedVector<c10::IValue, 4> NativeKernel::Call(const c10::IValue* args, size_t num_args,
                                                       size_t num_returns) const {
  python::ThreadCallState* thread = python::ThisThreadCallState();
  RecycleScope borrowed(thread->argument_cache);  // the arguments' tensors, given back at the end
  BorrowTorchTensors(borrowed);  // torch's stack holds the arguments until then
  CallTensors tensors(borrowed);
  ArgumentFacts facts;
  python::StackLease lease(thread);  // cleared before `borrowed` gives the tensors back
  Stack& s = lease.get();
  if (s.capacity() < num_args) s.reserve(num_args);
  const size_t known = arg_names_.size();
  for (size_t i = 0; i < num_args; ++i) {
    const bool is_known = i < known;
    const ValueName name{&op_name_, is_known ? &arg_names_[i] : &unknown_name_, i};
    s.push_back(FromTorch(args[i], is_known && written_[i] != 0, name, borrowed, facts));
  }
  {
    std::optional<CudaStreamGuard> stream;
    if (facts.cuda_device >= 0) {
      stream.emplace(facts.cuda_device, CurrentTorchStream(facts.cuda_device));
    }
    // The prepared call skips the dispatcher's argument checks: only for a stack built from the
    // op's own schema with every value of its exact type and all tensors on one device type.
    // Anything else (no tensor, mixed devices, a list of unusual items, an op redefined since)
    // takes the checked call, which names the problem.
    const uint32_t types = facts.device_types;
    if (facts.exact && num_args == known && types != 0 && (types & (types - 1)) == 0 &&
        op_.entry().definition() == def_) {
      op_.CallBoxedPrepared(&s, static_cast<DeviceType>(__builtin_ctz(types)));
    } else {
      op_.CallBoxedInPlace(&s);
    }
  }
  if (num_returns > s.size()) {
    throw Error(ErrorKind::kRuntime, StrCat("[", op_name_, "] torch expects ", num_returns,
                                            " returns; the opreg op gave ", s.size()));
  }
  absl::InlinedVector<c10::IValue, 4> returns;
  if (num_returns == 0) return returns;
  // The dispatcher checks arguments, not returns: a Python kernel's results are checked here
  // against the schema they were made for, with the same rule.
  const std::vector<Argument>& declared = op_.definition().schema.returns();
  for (size_t i = 0; i < num_returns; ++i) {
    const ValueName name{&op_name_, nullptr, i};
    if (i < declared.size() && !CheckAndCoerceValue(declared[i], &s[i])) {
      throw Error(ErrorKind::kType, StrCat("[", op_name_, "] return #", i, ": expected ",
                                           declared[i].type()->str(), ", got ", s[i].TagName()));
    }
    returns.push_back(ToTorch(std::move(s[i]), name, tensors));
  }
  return returns;
}

}  // namespace opreg::torch_native
