// CaptureScope: records the op calls this thread makes while the scope is open, as a Graph that
// PlannedExecutor replays with planned memory.
//
//   opreg::CaptureScope capture;                      // this thread's calls are now recorded
//   Tensor h = rms_norm.call(x, w, 1e-6);             // not run: h is a meta tensor
//   Tensor y = silu_and_mul.call(h);
//   opreg::Graph g = capture.Finish({y});              // recording stops here
//   opreg::PlannedExecutor ex(std::move(g));
//   std::vector<Tensor> out = ex.Run(capture.inputs());
//
// Inside the scope an op call runs the op's meta function instead of its kernel and returns
// meta tensors that stand for the results (ops need a Meta kernel, or to be composite). A tensor
// the scope has not seen before (a real tensor, or a meta tensor from elsewhere) becomes a graph
// input, in first-use order; a mutated argument (`Tensor(a!)`) keeps its tensor and is renamed
// to the op's output value. Calls made by other threads, and calls made by kernels the scope
// runs (meta functions), are not recorded.
//
// Errors: the constructor throws kValue when this thread already captures (scopes do not nest).
// A call that cannot be recorded throws opreg::Error naming the op and argument, from the call.
// Ownership: the scope holds the tensors it saw (and so their storage) until it is destroyed.
// Thread safety: a scope belongs to the thread that made it, and must be finished and
// destroyed there; other threads' calls are unaffected.
#pragma once

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "opreg/dispatch/call_interceptor.h"
#include "opreg/planner/graph.h"

namespace opreg {

class CaptureScope final : public CallInterceptor {
 public:
  CaptureScope();
  ~CaptureScope() override;
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

  // Records one call (the dispatcher calls this; see CallInterceptor).
  void Intercept(const OperatorHandle& op, Stack* stack) override;

  // The value a tensor stands for in the graph and the meta tensor that carries its shape, or
  // nullopt when the scope has not seen the tensor.
  struct Entry {
    Value value;
    Tensor meta;
  };
  std::optional<Entry> Lookup(const Tensor& t) const;
  // Makes `t` a graph input unless it already is one (or an op's result); returns its entry.
  Entry Use(const Tensor& t);

  // The tensors that became graph inputs, in first-use order: what Run takes to replay the
  // capture on the same data.
  const std::vector<Tensor>& inputs() const { return inputs_; }
  bool finished() const { return finished_; }

  // Stops recording, marks `outputs` (tensors returned by calls inside the scope) as the graph's
  // outputs and returns the graph. kValue for a tensor the scope did not produce.
  Graph Finish(const std::vector<Tensor>& outputs);
  // As Finish, with the outputs given as values (Lookup(t)->value of tensors seen earlier).
  Graph FinishValues(const std::vector<Value>& outputs);
  // Stops recording and drops the graph.
  void Abandon();

 private:
  GraphArg Arg(const IValue& v, Stack* meta_args);

  std::optional<CallInterceptorGuard> guard_;
  bool finished_ = false;
  GraphRecorder recorder_;
  std::vector<Tensor> inputs_;
  absl::flat_hash_map<const TensorImpl*, Entry> entries_;
  // Keeps every tensor that has an entry alive, so that its TensorImpl address is not reused.
  std::vector<Tensor> seen_;
};

}  // namespace opreg
