// Synthetic buffer traces for bench_planner, generated in code from layer shapes (no weights, no
// data files). Each op is one step; a buffer lives from the op that produces it to its last
// reader (or its own step when nobody reads it). Graph inputs (images, token embeddings,
// weights) are not buffers; everything an op produces is, outputs of multi-output ops one buffer
// each (memory_planning.md section 7.1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opreg/planner/memory_placement.h"

namespace opreg::bench {

struct Trace {
  std::string name;
  std::string kind;  // "model" (the arena must equal the LB) or "hard" (random DSA instances)
  std::vector<BufferInterval> buffers;
};

// Records ops in execution order. Value(size) makes a buffer produced by the current op;
// Use(v) extends v's life to the current op; Step() ends the current op.
class TraceBuilder {
 public:
  explicit TraceBuilder(std::string name, std::string kind = "model");
  // A new buffer produced by the op being recorded.
  int Output(int64_t bytes);
  // The op being recorded reads `v`.
  void Read(int v);
  // Ends the op being recorded; the next Output / Read belong to the next op.
  void Step();
  // One op reading `inputs` and producing one output of `bytes`; returns it.
  int Op(std::initializer_list<int> inputs, int64_t bytes);
  int step() const { return step_; }
  Trace Finish() &&;

 private:
  Trace trace_;
  int step_ = 0;
};

// Pisarchyk & Lee 2020, the 8-tensor example (arena 124 = LB at alignment 1).
Trace PisarchykLeeExample();
// MobileNetV2 1.0 224x224, batch 1, fp32, BN/ReLU6 fused (TFLite's 65 tensors).
Trace MobileNetV2(int batch);
// ResNet-50 224x224 fp32, BN/ReLU fused into the convs, the residual add with its ReLU.
Trace ResNet50(int batch);
// GPT-2 small (d=768, 12 heads, MLP 3072), fp16, `layers` blocks, batch B, sequence T.
// Eager attention: qkv is one op with 3 outputs, scores = q k^T and softmax are B*H*T*T.
// Fused attention: one op returning ctx and an fp32 log-sum-exp nobody reads (dies at its step).
Trace Gpt2(int batch, int seq, int layers, bool fused_attention);
// An MLP forward + backward (ReLU, 4 linear layers, width `width`), batch B, fp32: activations
// saved for backward, weight gradients kept to the end (the optimizer step).
Trace MlpTraining(int batch, int width);
// A serving loop: `calls` GPT-2-small 2-layer forwards (batch 1, fused attention) with random
// sequence lengths in {128, 256, ..., 2048}, one after the other.
Trace ServingLoop(int calls, uint64_t seed);
// MiniMalloc-like hard instances: `n` buffers over ~n/2 steps, heavy overlap, sizes 1-64 KiB
// rounded to 64 B.
Trace HardRandom(int n, uint64_t seed, const std::string& name);
// `n` model-like buffers (mostly short-lived, a few long) over n steps, for plan-time scaling.
Trace ScalingRandom(int n, uint64_t seed);

// All of the above in bench order (model traces first, then the 11 hard instances).
std::vector<Trace> AllTraces();

// A W x T rectangle (bytes x steps, W in [1000, 10000), T in [20, 100)) cut into buffers by
// recursive guillotine cuts `depth` deep: a perfect placement of width W exists, so the optimum
// equals the lower bound W. Kind "guillotine".
Trace Guillotine(uint64_t seed, int depth);

// A MiniMalloc benchmark file (google/minimalloc, benchmarks/: CSV with columns id, lower, upper,
// size; lifetimes [lower, upper)), as a trace at alignment 1. Kind "minimalloc"; `capacity` from
// the file name (`A.1048576.csv`), 0 when it has none. Throws std::runtime_error on a bad file.
Trace ReadMiniMallocCsv(const std::string& path, int64_t* capacity);

}  // namespace opreg::bench
