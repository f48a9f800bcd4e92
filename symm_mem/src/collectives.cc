// Host collectives: templated algorithms over a PeerContext (f32 accumulation in rank order),
// and the validating tensor-level entry points.
#include "opreg/symm_mem/collectives.h"

#include <algorithm>
#include <cstring>

#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/kernels/cpu/fused_add_rms_norm.h"
#include "opreg/ops/meta_functions.h"

namespace opreg::symm_mem {
namespace {

template <class T>
inline float Load(const T* p, int64_t i) {
  return static_cast<float>(p[i]);
}

// acc(i) = ((float(p0[i]) + float(p1[i])) + ...) in rank order, rounded to T once.
template <class T>
void ReduceRange(const PeerContext& c, int64_t begin, int64_t end, T* out) {
  const int w = c.world;
  for (int64_t i = begin; i < end; ++i) {
    float acc = Load(reinterpret_cast<const T*>(c.peers[0]), i);
    for (int r = 1; r < w; ++r) acc += Load(reinterpret_cast<const T*>(c.peers[r]), i);
    out[i - begin] = static_cast<T>(acc);
  }
}

void Barrier(const PeerContext& c) { c.sync->barrier(c.channel, c.timeout); }

template <class T>
void OneShot(const PeerContext& c, int64_t numel, T* out) {
  Barrier(c);
  ReduceRange<T>(c, 0, numel, out);
  Barrier(c);
}

// Each rank reduces its chunk into a local temporary, then pushes it into every rank's copy.
template <class T>
void TwoShotInPlace(const PeerContext& c, int64_t numel) {
  const int64_t chunk = (numel + c.world - 1) / c.world;
  const int64_t begin = std::min<int64_t>(numel, chunk * c.rank);
  const int64_t end = std::min<int64_t>(numel, begin + chunk);
  std::vector<T> tmp(static_cast<size_t>(end - begin));
  Barrier(c);
  ReduceRange<T>(c, begin, end, tmp.data());
  for (int r = 0; r < c.world; ++r) {
    std::memcpy(reinterpret_cast<T*>(c.peers[r]) + begin, tmp.data(), tmp.size() * sizeof(T));
  }
  Barrier(c);
}

void AllGather(const PeerContext& c, size_t bytes, char* out) {
  Barrier(c);
  for (int r = 0; r < c.world; ++r) std::memcpy(out + r * bytes, c.peers[r], bytes);
  Barrier(c);
}

template <class T>
void ReduceScatter(const PeerContext& c, int64_t numel, T* out) {
  const int64_t chunk = numel / c.world;
  Barrier(c);
  ReduceRange<T>(c, chunk * c.rank, chunk * (c.rank + 1), out);
  Barrier(c);
}

template <class F>
void DispatchFloat(std::string_view op, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(float{}); break;
    case DType::kFloat16: f(Half{}); break;
    case DType::kBFloat16: f(BFloat16{}); break;
    default:
      OPREG_THROW(kType, "[", op, "] argument 'input' (#0): expected dtype f32, f16 or bf16, got ",
                  DTypeName(dtype));
  }
}

void CheckReduceOp(std::string_view op, std::string_view reduce_op, int index) {
  OPREG_CHECK_VALUE(reduce_op == "sum",
                    ArgErrorMessage(op, "reduce_op", index, "'sum' (the only reduction supported)",
                                    StrCat("'", reduce_op, "'")));
}

void CheckOut(std::string_view op, const char* arg, int index, const Tensor& out,
              const Tensor& input, int64_t numel) {
  OPREG_CHECK_VALUE(out.defined(), ArgErrorMessage(op, arg, index, "a tensor", "undefined"));
  OPREG_CHECK_VALUE(out.is_cpu(), ArgErrorMessage(op, arg, index, "a cpu tensor",
                                                  StrCat("device ", out.device().str())));
  OPREG_CHECK_TYPE(out.dtype() == input.dtype(),
                   ArgErrorMessage(op, arg, index, StrCat("dtype ", DTypeName(input.dtype())),
                                   DTypeName(out.dtype())));
  OPREG_CHECK_VALUE(out.is_contiguous(),
                    ArgErrorMessage(op, arg, index, "a contiguous tensor", "a strided one"));
  OPREG_CHECK_VALUE(out.numel() == numel,
                    ArgErrorMessage(op, arg, index, StrCat(numel, " elements"),
                                    StrCat(out.numel(), " (", out.ToString(), ")")));
  const char* a = static_cast<const char*>(input.data_ptr());
  const char* b = static_cast<const char*>(out.data_ptr());
  const bool overlap = input.nbytes() > 0 && out.nbytes() > 0 && a < b + out.nbytes() &&
                       b < a + input.nbytes();
  OPREG_CHECK_VALUE(!overlap, ArgErrorMessage(op, arg, index, "memory not overlapping 'input'",
                                              "an overlapping tensor"));
}

}  // namespace

PeerContext SymmetricOperand(std::string_view op, std::string_view arg, int index, const Tensor& t,
                             std::string_view group_name) {
  std::shared_ptr<Group> g = Group::Get(group_name);
  const std::string expected =
      StrCat("a tensor in the symmetric memory of group '", group_name, "' (symm_mem::empty)");
  OPREG_CHECK_VALUE(t.defined(), ArgErrorMessage(op, arg, index, expected, "undefined"));
  OPREG_CHECK_VALUE(t.is_cpu(), ArgErrorMessage(op, arg, index, expected,
                                                StrCat("device ", t.device().str())));
  OPREG_CHECK_VALUE(t.is_contiguous(),
                    ArgErrorMessage(op, arg, index, StrCat("a contiguous tensor"), "a strided one"));
  std::shared_ptr<SymmetricMemory> h = Group::Find(t.data_ptr());
  OPREG_CHECK_VALUE(h != nullptr, ArgErrorMessage(op, arg, index, expected,
                                                  "a tensor outside every symmetric heap"));
  OPREG_CHECK_VALUE(h->group_name() == group_name,
                    ArgErrorMessage(op, arg, index, expected,
                                    StrCat("a tensor of group '", h->group_name(), "'")));
  const size_t off = static_cast<size_t>(static_cast<const char*>(t.data_ptr()) -
                                         static_cast<const char*>(h->buffer_ptr(h->rank())));
  OPREG_CHECK_VALUE(off + t.nbytes() <= h->buffer_size(),
                    ArgErrorMessage(op, arg, index, expected,
                                    "a view reaching past its symmetric allocation"));
  PeerContext c;
  c.rank = h->rank();
  c.world = h->world_size();
  for (int r = 0; r < c.world; ++r) c.peers.push_back(static_cast<char*>(h->buffer_ptr(r)) + off);
  c.sync = h.get();
  c.channel = 0;
  c.timeout = g->options().timeout;
  return c;
}

namespace host {
namespace {
// Keeps the allocation alive during a collective (PeerContext holds a raw pointer).
struct Operand {
  PeerContext ctx;
  std::shared_ptr<SymmetricMemory> keep;
};
Operand Get(std::string_view op, std::string_view arg, int index, const Tensor& t,
            std::string_view group_name) {
  Operand o{SymmetricOperand(op, arg, index, t, group_name), nullptr};
  o.keep = Group::Find(t.data_ptr());
  return o;
}
}  // namespace

Tensor& one_shot_all_reduce_out(const Tensor& input, std::string_view reduce_op,
                                std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::one_shot_all_reduce_out";
  CheckReduceOp(op, reduce_op, 1);
  Operand in = Get(op, "input", 0, input, group_name);
  CheckOut(op, "out", 3, out, input, input.numel());
  OPREG_CHECK_VALUE(std::equal(out.sizes().begin(), out.sizes().end(), input.sizes().begin(),
                               input.sizes().end()),
                    ArgErrorMessage(op, "out", 3, StrCat("the shape of input ", input.ToString()),
                                    out.ToString()));
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    OneShot<T>(in.ctx, input.numel(), static_cast<T*>(out.data_ptr()));
  });
  return out;
}

void two_shot_all_reduce_(Tensor& input, std::string_view reduce_op, std::string_view group_name) {
  constexpr std::string_view op = "symm_mem::two_shot_all_reduce_";
  CheckReduceOp(op, reduce_op, 1);
  Operand in = Get(op, "input", 0, input, group_name);
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    TwoShotInPlace<T>(in.ctx, input.numel());
  });
}

Tensor& all_gather_out(const Tensor& input, std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::all_gather_out";
  Operand in = Get(op, "input", 0, input, group_name);
  const int w = in.ctx.world;
  CheckOut(op, "out", 2, out, input, input.numel() * w);
  if (input.dim() > 0) {
    OPREG_CHECK_VALUE(out.dim() == input.dim() && out.size(0) == input.size(0) * w &&
                          std::equal(out.sizes().begin() + 1, out.sizes().end(),
                                     input.sizes().begin() + 1),
                      ArgErrorMessage(op, "out", 2,
                                      StrCat("shape [world * size(0), ...] of input ",
                                             input.ToString(), " with world ", w),
                                      out.ToString()));
  }
  DispatchFloat(op, input.dtype(), [&](auto) {
    AllGather(in.ctx, input.nbytes(), static_cast<char*>(out.data_ptr()));
  });
  return out;
}

Tensor& reduce_scatter_out(const Tensor& input, std::string_view reduce_op,
                           std::string_view group_name, Tensor& out) {
  constexpr std::string_view op = "symm_mem::reduce_scatter_out";
  CheckReduceOp(op, reduce_op, 1);
  Operand in = Get(op, "input", 0, input, group_name);
  const int w = in.ctx.world;
  OPREG_CHECK_VALUE(input.numel() % w == 0,
                    ArgErrorMessage(op, "input", 0,
                                    StrCat("a number of elements divisible by the world size ", w),
                                    StrCat(input.numel())));
  CheckOut(op, "out", 3, out, input, input.numel() / w);
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ReduceScatter<T>(in.ctx, input.numel(), static_cast<T*>(out.data_ptr()));
  });
  return out;
}

void fused_all_reduce_add_rms_norm_(Tensor& input, Tensor& residual, const Tensor& weight,
                                    double eps, std::string_view group_name) {
  constexpr std::string_view op = "symm_mem::fused_all_reduce_add_rms_norm_";
  ops::CheckFusedAddRmsNormOn(op, input, residual, weight, eps, Device::cpu());
  Operand in = Get(op, "input", 0, input, group_name);
  DispatchFloat(op, input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    TwoShotInPlace<T>(in.ctx, input.numel());
  });
  kernels::cpu::FusedAddRmsNormCpu(input, residual, weight.contiguous(), eps);
}

}  // namespace host
}  // namespace opreg::symm_mem
