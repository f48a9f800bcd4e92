// Graph capture: a recorded sequence of op calls on symbolic tensor values, replayed later with
// planned memory (memory_plan.h, planned_executor.h).
//
//   GraphRecorder rec;
//   Value x = rec.AddInput(example_x);                 // shapes come from examples / specs
//   Value h = rec.Call("mylib::rms_norm", {x, w, 1e-6})[0];
//   Value y = rec.Call("mylib::silu_and_mul", {h})[0];
//   rec.MarkOutput(y);
//   Graph g = rec.Finish();
//
// Recording runs each op's meta function on meta tensors, so it learns every value's sizes,
// strides and dtype without touching data (ops need a Meta kernel, or to be composite). A
// written argument (`Tensor(a!)`) is a rename of the same storage, not a new value; a return
// that shares an argument's alias set (`Tensor(a) -> Tensor(a)`, an in-place op returning
// `self`) is a view of that argument's storage; every other tensor return is fresh storage.
//
// Errors: opreg::Error (kValue/kType) naming the op and argument, at the Call that is wrong.
// Thread safety: a recorder and a Graph are not synchronized; a finished Graph is immutable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opreg/core/tensor.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {

// A symbolic tensor of a graph.
struct Value {
  int32_t id = -1;
  friend bool operator==(Value a, Value b) { return a.id == b.id; }
};

// Sizes, strides, dtype and device of a value: all a plan needs to know of it.
struct TensorSpec {
  DimVector sizes;
  DimVector strides;
  DType dtype = DType::kFloat32;
  Device device = Device::cpu();

  static TensorSpec Of(const Tensor& t);
  // Bytes of the storage a tensor of this spec needs (0 for an empty tensor).
  int64_t nbytes() const;
  std::string str() const;  // "f32[2, 3] cpu"
  friend bool operator==(const TensorSpec& a, const TensorSpec& b);
};

// One argument of a recorded call: a value, a list of values (Tensor[]), or a constant.
struct GraphArg {
  enum class Kind { kValue, kValueList, kConstant };
  GraphArg(Value v) : kind(Kind::kValue), value(v) {}                                 // NOLINT
  GraphArg(std::vector<Value> vs) : kind(Kind::kValueList), values(std::move(vs)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_constructible_v<IValue, T>, int> = 0>
  GraphArg(T&& c) : kind(Kind::kConstant), constant(std::forward<T>(c)) {}  // NOLINT

  Kind kind;
  Value value;
  std::vector<Value> values;
  IValue constant;
};

struct GraphNode {
  OperatorHandle op;
  std::vector<GraphArg> args;  // the op's full argument list, defaults filled in
  std::vector<Value> outputs;  // one per return (every return is a tensor)
  // Per output: the argument whose storage it shares (a view or an in-place return), or -1.
  std::vector<int> output_aliases_argument;
  // Values written by the op (their storage is mutated in place).
  std::vector<Value> mutated;
};

struct ValueInfo {
  TensorSpec spec;
  int producer = -1;            // node index, -1 for graph inputs
  int output_index = 0;         // which output of its producer
  bool data_dependent = false;  // its size is only known when the op runs
};

class Graph {
 public:
  const std::vector<GraphNode>& nodes() const { return nodes_; }
  const std::vector<ValueInfo>& values() const { return values_; }
  const std::vector<Value>& inputs() const { return inputs_; }
  const std::vector<Value>& outputs() const { return outputs_; }
  // A readable listing: one line per node, `%3 = mylib::f(%1, 2.) : f32[4, 8] cpu`.
  std::string str() const;

  // The values of the graph for inputs with these specs, by running every op's meta function
  // again (how a graph is replayed on inputs of other shapes). Throws kValue when an input's
  // dtype, device or rank differs from the recorded one.
  std::vector<ValueInfo> Propagate(const std::vector<TensorSpec>& input_specs) const;

 private:
  friend class GraphRecorder;
  std::vector<GraphNode> nodes_;
  std::vector<ValueInfo> values_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
};

class GraphRecorder {
 public:
  // A graph input shaped like `example` (its data is not used).
  Value AddInput(const Tensor& example);
  Value AddInput(TensorSpec spec);
  // Records a call of `op` ("ns::op" or "ns::op.overload"), positional arguments then keyword
  // ones, with defaults filled from the schema. Returns the op's outputs.
  std::vector<Value> Call(std::string_view op, std::vector<GraphArg> args,
                          std::vector<std::pair<std::string, GraphArg>> kwargs = {});
  std::vector<Value> Call(const OperatorHandle& op, std::vector<GraphArg> args,
                          std::vector<std::pair<std::string, GraphArg>> kwargs = {});
  // Marks a value as returned by the graph (its storage is then never in the arena).
  void MarkOutput(Value v);
  // The recorded graph; the recorder is empty afterwards.
  Graph Finish();

 private:
  void CheckValue(Value v) const;
  Graph graph_;
};

}  // namespace opreg
