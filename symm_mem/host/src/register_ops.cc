// The `symm_mem` op library: schemas (the issue's, verbatim), symmetric-memory arguments
// (`input` required everywhere: the host kernels read peers' inputs and write `out` locally),
// CPU kernels (collectives.h) and Meta kernels. The functional one_shot_all_reduce has no CPU
// kernel of its own: it resolves through its out variant (meta function, allocate, _out kernel).
// The `*_out` ops take `out` positionally, as PyTorch's do; the aliasing rule accepts returning
// it because of the `_out` name (schema/schema_rules.h).
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"
#include "opreg/symm_mem/collectives.h"

namespace opreg::symm_mem {
namespace {

Tensor OneShotMeta(const Tensor& input, std::string_view, std::string_view) {
  return opreg::empty(input.sizes(), input.dtype(), Device::meta());
}
Tensor& OneShotOutMeta(const Tensor&, std::string_view, std::string_view, Tensor& out) {
  return out;
}
void TwoShotMeta(Tensor&, std::string_view, std::string_view) {}
Tensor& AllGatherOutMeta(const Tensor&, std::string_view, Tensor& out) { return out; }
Tensor& ReduceScatterOutMeta(const Tensor&, std::string_view, std::string_view, Tensor& out) {
  return out;
}
void FusedMeta(Tensor&, Tensor&, const Tensor&, double, std::string_view) {}

}  // namespace
}  // namespace opreg::symm_mem

OPREG_LIBRARY(symm_mem, m) {
  m.def("one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
  m.def(
      "one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, Tensor(a!) out) "
      "-> Tensor(a!)");
  m.def("two_shot_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> ()");
  m.def("all_gather_out(Tensor input, str group_name, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "reduce_scatter_out(Tensor input, str reduce_op, str group_name, Tensor(a!) out) "
      "-> Tensor(a!)");
  m.def(
      "fused_all_reduce_add_rms_norm_(Tensor(a!) input, Tensor(b!) residual, Tensor weight, "
      "float eps, str group_name) -> ()");
  m.link_out_variant("one_shot_all_reduce", "one_shot_all_reduce_out", {"out"});
  for (const char* op :
       {"one_shot_all_reduce", "one_shot_all_reduce_out", "two_shot_all_reduce_", "all_gather_out",
        "reduce_scatter_out", "fused_all_reduce_add_rms_norm_"}) {
    m.register_symm_mem_args(op, {"input"});
  }
  // The out may live in symmetric memory (PyTorch lists it too): when the runtime allocates it
  // (functional -> out resolution, planned graphs), it comes from the group's heap.
  m.register_symm_mem_args("one_shot_all_reduce_out", {"out"},
                           ::opreg::SymmMemRequirement::kAccepted);
}

OPREG_LIBRARY_IMPL(symm_mem, CPU, m) {
  namespace h = ::opreg::symm_mem::host;
  m.impl("one_shot_all_reduce_out", &h::one_shot_all_reduce_out);
  m.impl("two_shot_all_reduce_", &h::two_shot_all_reduce_);
  m.impl("all_gather_out", &h::all_gather_out);
  m.impl("reduce_scatter_out", &h::reduce_scatter_out);
  m.impl("fused_all_reduce_add_rms_norm_", &h::fused_all_reduce_add_rms_norm_);
}

OPREG_LIBRARY_IMPL(symm_mem, Meta, m) {
  namespace s = ::opreg::symm_mem;
  m.impl("one_shot_all_reduce", &s::OneShotMeta);
  m.impl("one_shot_all_reduce_out", &s::OneShotOutMeta);
  m.impl("two_shot_all_reduce_", &s::TwoShotMeta);
  m.impl("all_gather_out", &s::AllGatherOutMeta);
  m.impl("reduce_scatter_out", &s::ReduceScatterOutMeta);
  m.impl("fused_all_reduce_add_rms_norm_", &s::FusedMeta);
}
