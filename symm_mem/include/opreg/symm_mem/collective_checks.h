// Argument checks shared by the collectives of every backend (host kernels on CPU, CUDA kernels
// on GPU), so a bad call gets the same error whichever device it runs on.
//
// Every check throws opreg::Error naming the op and the argument in ArgErrorMessage's wording,
// e.g. "[symm_mem::all_gather_out] argument 'out' (#2): expected dtype f32, got bf16"
// (kType for a wrong dtype, kValue otherwise). The checks only read their arguments.
#pragma once

#include <cstdint>
#include <string_view>

#include "opreg/core/tensor.h"

namespace opreg::symm_mem {

// reduce_op (argument #index) must be "sum".
void CheckReduceOp(std::string_view op, std::string_view reduce_op, int index);

// `out` (argument #index): defined, on input's device, of input's dtype, contiguous, `numel`
// elements, and not overlapping `input`.
void CheckCollectiveOut(std::string_view op, int index, const Tensor& out, const Tensor& input,
                        int64_t numel);

// one_shot_all_reduce_out: `out` (#index) has input's shape.
void CheckSameShapeOut(std::string_view op, int index, const Tensor& out, const Tensor& input);

// all_gather_out: for inputs of rank >= 1, `out` (#index) is [world * input.size(0), ...].
void CheckAllGatherOutShape(std::string_view op, int index, const Tensor& out, const Tensor& input,
                            int world);

// reduce_scatter_out: input (#0) has a number of elements divisible by `world`.
void CheckDivisibleByWorld(std::string_view op, const Tensor& input, int world);

}  // namespace opreg::symm_mem
