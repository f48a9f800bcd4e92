// A stable-ABI library whose ops each call one of torch's stable aten functions (amax, subtract,
// matmul, the bitwise ops, floor_divide, index_select, sort), so that a test can run the same
// calls on torch's runtime and on opreg's and compare both with torch's own ops. Plain
// stable-ABI code: it builds against torch's headers or opreg's unchanged.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <cstdint>
#include <tuple>
#include <vector>

namespace {

using torch::stable::Tensor;

Tensor AmaxDim(Tensor x, int64_t dim, bool keepdim) { return torch::stable::amax(x, dim, keepdim); }

Tensor AmaxDims(Tensor x, int64_t d0, int64_t d1, bool keepdim) {
  const std::vector<int64_t> dims{d0, d1};
  return torch::stable::amax(x, dims, keepdim);
}

Tensor Subtract(Tensor a, Tensor b, double alpha) { return torch::stable::subtract(a, b, alpha); }

Tensor Binary(Tensor a, Tensor b, int64_t which) {
  switch (which) {
    case 0:
      return torch::stable::matmul(a, b);
    case 1:
      return torch::stable::bitwise_and(a, b);
    case 2:
      return torch::stable::bitwise_or(a, b);
    case 3:
      return torch::stable::bitwise_left_shift(a, b);
    case 4:
      return torch::stable::bitwise_right_shift(a, b);
    default:
      return torch::stable::floor_divide(a, b);
  }
}

Tensor IndexSelect(Tensor x, int64_t dim, Tensor index) {
  return torch::stable::index_select(x, dim, index);
}

std::tuple<Tensor, Tensor> Sort(Tensor x, int64_t dim, bool descending) {
  return torch::stable::sort(x, dim, descending);
}

std::tuple<Tensor, Tensor> SortStable(Tensor x, int64_t dim, bool descending) {
  return torch::stable::sort(x, true, dim, descending);
}

}  // namespace

STABLE_TORCH_LIBRARY(stable_aten_calls, m) {
  m.def("amax_dim(Tensor x, int dim, bool keepdim) -> Tensor");
  m.def("amax_dims(Tensor x, int d0, int d1, bool keepdim) -> Tensor");
  m.def("subtract(Tensor a, Tensor b, float alpha) -> Tensor");
  m.def("binary(Tensor a, Tensor b, int which) -> Tensor");
  m.def("index_select(Tensor x, int dim, Tensor index) -> Tensor");
  m.def("sort(Tensor x, int dim, bool descending) -> (Tensor, Tensor)");
  m.def("sort_stable(Tensor x, int dim, bool descending) -> (Tensor, Tensor)");
}

STABLE_TORCH_LIBRARY_IMPL(stable_aten_calls, CPU, m) {
  m.impl("amax_dim", TORCH_BOX(&AmaxDim));
  m.impl("amax_dims", TORCH_BOX(&AmaxDims));
  m.impl("subtract", TORCH_BOX(&Subtract));
  m.impl("binary", TORCH_BOX(&Binary));
  m.impl("index_select", TORCH_BOX(&IndexSelect));
  m.impl("sort", TORCH_BOX(&Sort));
  m.impl("sort_stable", TORCH_BOX(&SortStable));
}
