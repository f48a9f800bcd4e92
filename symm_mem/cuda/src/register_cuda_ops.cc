// CUDA kernels of the `symm_mem` ops (schemas in symm_mem/src/register_ops.cc) over the CUDA
// VMM backend: the operand `input` must be a CUDA tensor in a CudaGroup's symmetric memory
// (symm_mem::cuda::empty); `out` is any contiguous CUDA tensor on the same device. Each wrapper
// validates like the host kernels (messages name op and argument), makes the tensors' device
// current and launches on the calling thread's current stream of that device
// (opreg/core/cuda_stream.h), without synchronizing.
//
// fused_all_reduce_add_rms_norm_ runs the two-shot all-reduce kernel and then opreg's CUDA
// fused_add_rms_norm kernel on the same stream: every rank computes the same bits, which may
// differ in the last place from the CPU kernel (rsqrtf, block-order sum of squares).
//
// The functional one_shot_all_reduce is not registered here: the dispatcher resolves it through
// its out variant, whose `out` it allocates with the symmetric-memory hooks of the host backend
// (a CPU tensor), so on CUDA call one_shot_all_reduce_out with a CUDA out.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "cuda_check.h"
#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/core/error.h"
#include "opreg/dispatch/library.h"
#include "opreg/kernels/cuda/fused_add_rms_norm.h"
#include "opreg/ops/shape_inference.h"
#include "opreg/symm_mem/collective_checks.h"
#include "opreg/symm_mem/cuda/cuda_group.h"
#include "opreg/symm_mem/cuda/device_collectives.h"

namespace opreg::symm_mem::cuda {
namespace {

struct Operand {
  std::shared_ptr<CudaSymmetricMemory> handle;
  size_t offset = 0;
};

Operand SymmetricOperand(std::string_view op, std::string_view arg, int index, const Tensor& t,
                         std::string_view group_name) {
  std::shared_ptr<CudaGroup> g = CudaGroup::Get(group_name);
  const std::string expected = StrCat("a CUDA tensor in the symmetric memory of CUDA group '",
                                      group_name, "' (symm_mem::cuda::empty)");
  OPREG_CHECK_VALUE(t.defined(), ArgErrorMessage(op, arg, index, expected, "undefined"));
  OPREG_CHECK_VALUE(t.is_cuda(),
                    ArgErrorMessage(op, arg, index, expected, StrCat("device ", t.device().str())));
  OPREG_CHECK_VALUE(t.is_contiguous(),
                    ArgErrorMessage(op, arg, index, "a contiguous tensor", "a strided one"));
  OPREG_CHECK_TYPE(
      t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat16 || t.dtype() == DType::kBFloat16,
      ArgErrorMessage(op, arg, index, "dtype f32, f16 or bf16", DTypeName(t.dtype())));
  Operand o;
  o.handle = CudaGroup::Find(t.data_ptr());
  OPREG_CHECK_VALUE(o.handle != nullptr, ArgErrorMessage(op, arg, index, expected,
                                                         "a tensor outside every CUDA symmetric "
                                                         "allocation"));
  OPREG_CHECK_VALUE(o.handle->group_name() == group_name,
                    ArgErrorMessage(op, arg, index, expected,
                                    StrCat("a tensor of group '", o.handle->group_name(), "'")));
  o.offset = static_cast<size_t>(static_cast<const char*>(t.data_ptr()) -
                                 static_cast<const char*>(o.handle->buffer_ptr(g->rank())));
  OPREG_CHECK_VALUE(
      o.offset + t.nbytes() <= o.handle->buffer_size(),
      ArgErrorMessage(op, arg, index, expected, "a view reaching past its symmetric allocation"));
  return o;
}

void Launch(Collective kind, const Operand& o, const Tensor& input, void* out) {
  CollectiveArgs a;
  a.kind = kind;
  a.dtype = input.dtype();
  a.buffers = o.handle->buffer_ptrs_dev();
  a.pads = o.handle->signal_pads_dev();
  a.offset = o.offset;
  a.numel = input.numel();
  a.out = out;
  a.rank = o.handle->rank();
  a.world = o.handle->world_size();
  a.timeout_ns = static_cast<uint64_t>(o.handle->group().options().timeout.count()) * 1000000;
  a.stream = static_cast<CUstream_st*>(CurrentCudaStream(o.handle->device()));
  CudaDeviceGuard guard(o.handle->device());
  LaunchCollective(a);
}

Tensor& OneShotAllReduceOut(const Tensor& input, std::string_view reduce_op,
                            std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::one_shot_all_reduce_out";
  CheckReduceOp(op, reduce_op, 1);
  const Operand o = SymmetricOperand(op, "input", 0, input, group_name);
  CheckCollectiveOut(op, 3, out, input, input.numel());
  CheckSameShapeOut(op, 3, out, input);
  Launch(Collective::kOneShotAllReduce, o, input, out.data_ptr());
  return out;
}

void TwoShotAllReduce(Tensor& input, std::string_view reduce_op, std::string_view group_name) {
  constexpr std::string_view op = "symm_mem::two_shot_all_reduce_";
  CheckReduceOp(op, reduce_op, 1);
  const Operand o = SymmetricOperand(op, "input", 0, input, group_name);
  Launch(Collective::kTwoShotAllReduce, o, input, nullptr);
}

Tensor& AllGatherOut(const Tensor& input, std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::all_gather_out";
  const Operand o = SymmetricOperand(op, "input", 0, input, group_name);
  const int w = o.handle->world_size();
  CheckCollectiveOut(op, 2, out, input, input.numel() * w);
  CheckAllGatherOutShape(op, 2, out, input, w);
  Launch(Collective::kAllGather, o, input, out.data_ptr());
  return out;
}

Tensor& ReduceScatterOut(const Tensor& input, std::string_view reduce_op,
                         std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::reduce_scatter_out";
  CheckReduceOp(op, reduce_op, 1);
  const Operand o = SymmetricOperand(op, "input", 0, input, group_name);
  const int w = o.handle->world_size();
  CheckDivisibleByWorld(op, input, w);
  CheckCollectiveOut(op, 3, out, input, input.numel() / w);
  Launch(Collective::kReduceScatter, o, input, out.data_ptr());
  return out;
}

void FusedAllReduceAddRmsNorm(Tensor& input, Tensor& residual, const Tensor& weight, double eps,
                              std::string_view group_name) {
  constexpr std::string_view op = "symm_mem::fused_all_reduce_add_rms_norm_";
  const Operand o = SymmetricOperand(op, "input", 0, input, group_name);
  ops::CheckFusedAddRmsNormOn(op, input, residual, weight, eps, input.device());
  Launch(Collective::kTwoShotAllReduce, o, input, nullptr);
  CudaDeviceGuard guard(o.handle->device());
  kernels::cuda::FusedAddRmsNormInplace(
      input, residual, weight, eps,
      static_cast<cudaStream_t>(CurrentCudaStream(o.handle->device())));
}

}  // namespace
}  // namespace opreg::symm_mem::cuda

OPREG_LIBRARY_IMPL(symm_mem, CUDA, m) {
  namespace c = ::opreg::symm_mem::cuda;
  m.impl("one_shot_all_reduce_out", &c::OneShotAllReduceOut);
  m.impl("two_shot_all_reduce_", &c::TwoShotAllReduce);
  m.impl("all_gather_out", &c::AllGatherOut);
  m.impl("reduce_scatter_out", &c::ReduceScatterOut);
  m.impl("fused_all_reduce_add_rms_norm_", &c::FusedAllReduceAddRmsNorm);
}
