// Graph capture from Python: `with opreg.graph() as g:` records op calls through
// opreg::GraphRecorder. Calls return proxy tensors (meta tensors carrying a value id); tensors
// from outside become graph inputs in first-use order. Outputs are the proxies still alive when
// the capture ends (in creation order) unless set with `g.output(...)`. The finished graph
// replays through opreg::PlannedExecutor.
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "module_internal.h"
#include "opreg/core/error.h"
#include "opreg/planner/graph.h"
#include "opreg/dispatch/run_meta_function.h"
#include "opreg/planner/planned_executor.h"

namespace opreg::python {

GraphCapture* g_active_capture = nullptr;

class GraphCapture {
 public:
  GraphCapture() {
    static uint64_t next_token = 1;
    token_ = next_token++;
  }

  void Begin() {
    OPREG_CHECK(g_active_capture == nullptr,
                "opreg.graph(): a graph capture is already active (captures do not nest)");
    OPREG_CHECK(!finished_ && !started_, "opreg.graph(): this graph was already captured");
    started_ = true;
    g_active_capture = this;
  }

  // Ends the capture: marks the outputs and plans the graph. With `ok` false (an exception in
  // the with-block) the recording is dropped.
  void End(bool ok) {
    if (g_active_capture == this) g_active_capture = nullptr;
    finished_ = true;
    if (!ok) {
      proxies_.clear();
      return;
    }
    std::vector<py::object> outs;
    if (explicit_outputs_) {
      outs = std::move(explicit_outs_);
    } else {
      for (py::object& p : proxies_) {
        if (Py_REFCNT(p.ptr()) > 1) outs.push_back(p);  // someone besides us holds it
      }
    }
    proxies_.clear();
    for (const py::object& o : outs) {
      PyTensor* p = AsPyTensor(o);
      recorder_.MarkOutput(Value{p->value});
    }
    num_outputs_ = outs.size();
    executor_ = std::make_unique<PlannedExecutor>(recorder_.Finish());
  }

  void SetOutputs(py::args outs) {
    OPREG_CHECK(!finished_, "graph.output(): the capture has ended");
    explicit_outputs_ = true;
    explicit_outs_.clear();
    for (py::handle o : outs) {
      PyTensor* p = AsPyTensor(o);
      OPREG_CHECK_TYPE(p != nullptr && p->graph == token_ && p->value >= 0,
                       "graph.output(): expected tensors computed inside this capture");
      explicit_outs_.push_back(py::reinterpret_borrow<py::object>(o));
    }
    single_output_ = outs.size() == 1;
  }

  Tensor Capture(py::handle obj) {
    if (PyTensor* p = AsPyTensor(obj)) {
      if (p->value >= 0) {
        OPREG_CHECK_VALUE(p->graph == token_,
                          "opreg.graph(): a proxy tensor of another graph capture was passed "
                          "to an op");
        return p->tensor;
      }
    }
    auto it = inputs_.find(obj.ptr());
    if (it != inputs_.end()) return it->second.meta;
    Tensor real = AsPyTensor(obj) != nullptr ? AsPyTensor(obj)->tensor : TensorFromDLPack(obj);
    Input in;
    in.object = py::reinterpret_borrow<py::object>(obj);
    in.real = real;
    in.value = recorder_.AddInput(real);
    in.meta = ToMeta(IValue(real)).toTensor();
    value_of_.emplace(in.meta.unsafe_get_impl(), in.value);
    example_inputs_.push_back(real);
    Tensor meta = in.meta;
    inputs_.emplace(obj.ptr(), std::move(in));
    return meta;
  }

  py::object Call(const OperatorHandle& op, Stack stack) {
    // Graph arguments: values for tensors, constants for the rest.
    std::vector<GraphArg> args;
    args.reserve(stack.size());
    auto value_of = [&](const Tensor& t) {
      auto it = value_of_.find(t.unsafe_get_impl());
      OPREG_CHECK(it != value_of_.end(), "[", op.operator_name().str(),
                  "] graph capture: a tensor argument is not a value of this graph");
      return it->second;
    };
    for (const IValue& v : stack) {
      if (v.isTensor()) {
        args.emplace_back(value_of(v.toTensor()));
      } else if (v.isTensorList()) {
        std::vector<Value> vs;
        for (const Tensor& t : v.toTensorList()) vs.push_back(value_of(t));
        args.emplace_back(std::move(vs));
      } else {
        args.emplace_back(v);
      }
    }
    // Shapes of the results: the op's meta function (all tensors here are meta tensors).
    Stack meta = stack;
    op.CallBoxed(&meta);
    std::vector<Value> outs = recorder_.Call(op, std::move(args));
    OPREG_CHECK(outs.size() == meta.size(), "[", op.operator_name().str(),
                "] graph capture: ", outs.size(), " recorded outputs for ", meta.size(),
                " returns");
    std::vector<py::object> results;
    for (size_t i = 0; i < outs.size(); ++i) {
      Tensor t = meta[i].toTensor();
      // A return that is a mutated (renamed) argument keeps its value.
      value_of_[t.unsafe_get_impl()] = outs[i];
      py::object proxy = WrapProxy(t, outs[i].id, token_);
      proxies_.push_back(proxy);
      results.push_back(std::move(proxy));
    }
    if (results.empty()) return py::none();
    if (results.size() == 1) return results[0];
    py::tuple t(results.size());
    for (size_t i = 0; i < results.size(); ++i) t[i] = results[i];
    return t;
  }

  py::object Replay(py::args inputs) {
    PlannedExecutor& ex = Executor();
    std::vector<Tensor> ins = Inputs(inputs);
    std::vector<Tensor> outs = ex.Run(ins);
    return Pack(outs);
  }

  py::dict PlanStats(py::args inputs) {
    PlannedExecutor& ex = Executor();
    const MemoryPlan& plan = ex.PlanFor(Inputs(inputs));
    py::dict d;
    d["arena_bytes"] = plan.arena_bytes;
    d["lb_bytes"] = plan.lb_bytes;
    d["naive_bytes"] = plan.naive_bytes;
    d["eager_peak_bytes"] = plan.eager_peak_bytes;
    d["use_arena"] = plan.use_arena;
    d["strategy"] = plan.strategy;
    d["plan_ms"] = plan.plan_ms;
    d["num_nodes"] = ex.graph().nodes().size();
    d["summary"] = plan.Summary();
    return d;
  }

  std::string Str() {
    if (!executor_) return "<graph capture in progress>";
    return executor_->graph().str();
  }

  size_t num_inputs() const { return example_inputs_.size(); }
  size_t num_outputs() const { return num_outputs_; }
  size_t num_nodes() { return Executor().graph().nodes().size(); }
  py::list example_inputs() const {
    py::list l;
    for (const Tensor& t : example_inputs_) l.append(WrapTensor(t));
    return l;
  }
  bool finished() const { return finished_; }

 private:
  struct Input {
    py::object object;  // keeps the Python object (and its id) alive during the capture
    Tensor real;
    Tensor meta;
    Value value;
  };

  PlannedExecutor& Executor() {
    OPREG_CHECK(executor_ != nullptr,
                "the graph is not ready: leave the `with opreg.graph()` block first");
    return *executor_;
  }

  std::vector<Tensor> Inputs(py::args inputs) {
    if (inputs.size() == 0) return example_inputs_;
    OPREG_CHECK_TYPE(inputs.size() == example_inputs_.size(), "the graph takes ",
                     example_inputs_.size(), " inputs, got ", inputs.size());
    std::vector<Tensor> ins;
    for (py::handle h : inputs) {
      PyTensor* p = AsPyTensor(h);
      ins.push_back(p != nullptr ? p->tensor : TensorFromDLPack(h));
    }
    return ins;
  }

  py::object Pack(const std::vector<Tensor>& outs) {
    if (outs.empty()) return py::none();
    if (outs.size() == 1 && (!explicit_outputs_ || single_output_)) return WrapTensor(outs[0]);
    py::tuple t(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) t[i] = WrapTensor(outs[i]);
    return t;
  }

  uint64_t token_ = 0;
  bool started_ = false, finished_ = false;
  bool explicit_outputs_ = false, single_output_ = false;
  size_t num_outputs_ = 0;
  GraphRecorder recorder_;
  absl::flat_hash_map<PyObject*, Input> inputs_;
  absl::flat_hash_map<const TensorImpl*, Value> value_of_;
  std::vector<Tensor> example_inputs_;
  std::vector<py::object> proxies_;
  std::vector<py::object> explicit_outs_;
  std::unique_ptr<PlannedExecutor> executor_;
};

Tensor CaptureTensor(GraphCapture* capture, py::handle obj) { return capture->Capture(obj); }

py::object CaptureCall(GraphCapture* capture, const OperatorHandle& op, Stack stack) {
  return capture->Call(op, std::move(stack));
}

void InitGraph(py::module_& m) {
  py::class_<GraphCapture>(m, "_GraphCapture")
      .def(py::init<>())
      .def("begin", &GraphCapture::Begin)
      .def("end", &GraphCapture::End, py::arg("ok"))
      .def("output", &GraphCapture::SetOutputs)
      .def("replay", &GraphCapture::Replay)
      .def("plan_stats", &GraphCapture::PlanStats)
      .def("__str__", &GraphCapture::Str)
      .def_property_readonly("num_inputs", &GraphCapture::num_inputs)
      .def_property_readonly("num_outputs", &GraphCapture::num_outputs)
      .def_property_readonly("num_nodes", &GraphCapture::num_nodes)
      .def_property_readonly("example_inputs", &GraphCapture::example_inputs)
      .def_property_readonly("finished", &GraphCapture::finished);
  m.def("_capture_active", []() { return g_active_capture != nullptr; });
}

}  // namespace opreg::python
