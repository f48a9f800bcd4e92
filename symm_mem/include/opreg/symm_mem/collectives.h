// Host (CPU) collectives over symmetric memory, and the algorithm layer they share.
//
// The algorithms are written once against a PeerContext (each rank's copy of the operand as
// mapped here, rank, world, and the allocation whose signal pads synchronize them). Every
// reduction accumulates in f32 in rank order 0..world-1 and rounds once to the element type, so
// every rank computes bitwise-identical results (and the same bits as a serial reference doing
// the same). dtypes: f32, f16, bf16. reduce_op: "sum" only (others are a kValue error).
//
// Synchronization: each collective runs barrier(channel 0) of the input's allocation before it
// reads peers (their inputs are ready) and after (peers finished reading, so buffers may be
// reused). Channel 0 of an allocation must not be used by anything else during a collective.
// A peer that does not take part makes the others fail with the timeout error of
// SymmetricMemory::wait_signal (the group's `timeout` option).
//
// Validation errors name the op and the argument (ArgErrorMessage wording), e.g.
//   [symm_mem::one_shot_all_reduce_out] argument 'input' (#0): expected a tensor in the symmetric
//   memory of group 'tp' (symm_mem::empty), got a tensor outside every symmetric heap
//
// Thread safety: collectives on different allocations may run concurrently; on one allocation,
// one at a time (in the same order on every rank).
#pragma once

#include <chrono>
#include <string_view>
#include <vector>

#include "opreg/core/tensor.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace opreg::symm_mem {

// The operand of a collective on every rank: peers[r] is rank r's copy of its first element.
struct PeerContext {
  std::vector<char*> peers;
  int rank = 0;
  int world = 1;
  SymmetricMemory* sync = nullptr;  // whose pads the barriers use
  int channel = 0;
  Millis timeout{30000};
};

// Checks that `t` (argument `arg`, #index, of `op`) is a contiguous CPU tensor in the symmetric
// heap of group `group_name` and returns the context of its elements. kKey error for an unknown
// group; kValue naming op and argument otherwise.
PeerContext SymmetricOperand(std::string_view op, std::string_view arg, int index, const Tensor& t,
                             std::string_view group_name);

namespace host {

// out = sum over ranks of input (input symmetric; out any contiguous CPU tensor of the same
// shape and dtype that does not overlap input).
Tensor& one_shot_all_reduce_out(const Tensor& input, std::string_view reduce_op,
                                std::string_view group_name, Tensor& out);
// In place: input = sum over ranks of input (input symmetric).
void two_shot_all_reduce_(Tensor& input, std::string_view reduce_op, std::string_view group_name);
// out = concatenation over ranks of input along dim 0 (out: [world * input.size(0), ...], or
// any contiguous tensor with world * input.numel() elements for 0-d inputs).
Tensor& all_gather_out(const Tensor& input, std::string_view group_name, Tensor& out);
// out = this rank's chunk (flat, numel / world elements, numel % world == 0) of the sum over
// ranks of input (out: contiguous, numel / world elements, e.g. [size(0) / world, ...]).
Tensor& reduce_scatter_out(const Tensor& input, std::string_view reduce_op,
                           std::string_view group_name, Tensor& out);
// input = all_reduce(input); residual += input; input = rms_norm(residual) * weight, with the
// arithmetic of opreg::fused_add_rms_norm_ (input symmetric, [..., hidden]; weight [hidden]).
void fused_all_reduce_add_rms_norm_(Tensor& input, Tensor& residual, const Tensor& weight,
                                    double eps, std::string_view group_name);

}  // namespace host
}  // namespace opreg::symm_mem
