// The argument checks of collective_checks.h.
#include "opreg/symm_mem/collective_checks.h"

#include <algorithm>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"

namespace opreg::symm_mem {

void CheckReduceOp(std::string_view op, std::string_view reduce_op, int index) {
  OPREG_CHECK_VALUE(reduce_op == "sum",
                    ArgErrorMessage(op, "reduce_op", index, "'sum' (the only reduction supported)",
                                    StrCat("'", reduce_op, "'")));
}

void CheckCollectiveOut(std::string_view op, int index, const Tensor& out, const Tensor& input,
                        int64_t numel) {
  OPREG_CHECK_VALUE(out.defined(), ArgErrorMessage(op, "out", index, "a tensor", "undefined"));
  OPREG_CHECK_VALUE(out.device() == input.device(),
                    ArgErrorMessage(op, "out", index, StrCat("device ", input.device().str()),
                                    out.device().str()));
  OPREG_CHECK_TYPE(out.dtype() == input.dtype(),
                   ArgErrorMessage(op, "out", index, StrCat("dtype ", DTypeName(input.dtype())),
                                   DTypeName(out.dtype())));
  OPREG_CHECK_VALUE(out.is_contiguous(),
                    ArgErrorMessage(op, "out", index, "a contiguous tensor", "a strided one"));
  OPREG_CHECK_VALUE(out.numel() == numel,
                    ArgErrorMessage(op, "out", index, StrCat(numel, " elements"),
                                    StrCat(out.numel(), " (", out.ToString(), ")")));
  // Both live in this process's address space (CPU or one CUDA device's mapping), so address
  // ranges decide overlap.
  const char* a = static_cast<const char*>(input.data_ptr());
  const char* b = static_cast<const char*>(out.data_ptr());
  const bool overlap =
      input.nbytes() > 0 && out.nbytes() > 0 && a < b + out.nbytes() && b < a + input.nbytes();
  OPREG_CHECK_VALUE(!overlap, ArgErrorMessage(op, "out", index, "memory not overlapping 'input'",
                                              "an overlapping tensor"));
}

void CheckSameShapeOut(std::string_view op, int index, const Tensor& out, const Tensor& input) {
  OPREG_CHECK_VALUE(
      std::equal(out.sizes().begin(), out.sizes().end(), input.sizes().begin(),
                 input.sizes().end()),
      ArgErrorMessage(op, "out", index, StrCat("the shape of input ", input.ToString()),
                      out.ToString()));
}

void CheckAllGatherOutShape(std::string_view op, int index, const Tensor& out, const Tensor& input,
                            int world) {
  if (input.dim() == 0) return;
  OPREG_CHECK_VALUE(
      out.dim() == input.dim() && out.size(0) == input.size(0) * world &&
          std::equal(out.sizes().begin() + 1, out.sizes().end(), input.sizes().begin() + 1),
      ArgErrorMessage(
          op, "out", index,
          StrCat("shape [world * size(0), ...] of input ", input.ToString(), " with world ", world),
          out.ToString()));
}

void CheckDivisibleByWorld(std::string_view op, const Tensor& input, int world) {
  OPREG_CHECK_VALUE(
      input.numel() % world == 0,
      ArgErrorMessage(op, "input", 0,
                      StrCat("a number of elements divisible by the world size ", world),
                      StrCat(input.numel())));
}

}  // namespace opreg::symm_mem
