// Graph capture from Python: `with opreg.graph() as g:` records op calls through
// opreg::GraphRecorder. Calls return proxy tensors (meta tensors carrying a value id); tensors
// from outside become graph inputs in first-use order. Outputs are the proxies still alive when
// the capture ends (in creation order) unless set with `g.output(...)`. The finished graph
// replays through opreg::PlannedExecutor.
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "module_internal.h"
#include "opreg/core/error.h"
#include "opreg/planner/capture_scope.h"
#include "opreg/planner/planned_executor.h"

namespace opreg::python {

namespace {
// This thread's Python capture (captures are per thread, like the CaptureScope they wrap).
thread_local GraphCapture* t_capture = nullptr;
}  // namespace

class GraphCapture {
 public:
  explicit GraphCapture(double plan_budget_ms) : plan_budget_ms_(plan_budget_ms) {
    OPREG_CHECK_VALUE(plan_budget_ms >= 0, "opreg.graph(): plan_budget_ms must be >= 0, got ",
                      plan_budget_ms);
    static uint64_t next_token = 1;
    token_ = next_token++;
  }

  void Begin() {
    OPREG_CHECK(t_capture == nullptr,
                "opreg.graph(): a graph capture is already active on this thread (captures do "
                "not nest)");
    OPREG_CHECK(!finished_ && !started_, "opreg.graph(): this graph was already captured");
    started_ = true;
    scope_.emplace();
    t_capture = this;
  }

  // Ends the capture: marks the outputs and plans the graph. With `ok` false (an exception in
  // the with-block) the recording is dropped.
  void End(bool ok) {
    if (t_capture == this) t_capture = nullptr;
    finished_ = true;
    if (!scope_) return;
    if (!ok) {
      proxies_.clear();
      scope_->Abandon();
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
    std::vector<Value> values;
    for (const py::object& o : outs) values.push_back(Value{AsPyTensor(o)->value});
    num_outputs_ = outs.size();
    example_inputs_ = scope_->inputs();
    PlanOptions options;
    options.budget_ms = plan_budget_ms_;
    executor_ = std::make_unique<PlannedExecutor>(scope_->FinishValues(values), options);
    // The scope (and the tensors it saw) is dropped; the example inputs stay for replay().
    scope_.reset();
    objects_.clear();
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

  // The tensor to pass for `obj` in a captured call: a proxy's meta tensor, or the outside
  // tensor (the same Tensor for the same object, so that it is one graph input).
  Tensor Capture(py::handle obj) {
    PyTensor* p = AsPyTensor(obj);
    if (p != nullptr && p->value >= 0) {
      OPREG_CHECK_VALUE(p->graph == token_,
                        "opreg.graph(): a proxy tensor of another graph capture was passed to "
                        "an op");
      return p->tensor;
    }
    if (p != nullptr) return p->tensor;
    auto it = objects_.find(obj.ptr());
    if (it != objects_.end()) return it->second.second;
    Tensor real = TensorFromDLPack(obj);
    objects_.emplace(obj.ptr(), std::make_pair(py::reinterpret_borrow<py::object>(obj), real));
    return real;
  }

  // The Python results of a captured call: proxies carrying the value each return stands for.
  py::object Results(const OperatorHandle& op, const Stack& stack) {
    std::vector<py::object> results;
    for (const IValue& v : stack) {
      std::optional<CaptureScope::Entry> e =
          v.isTensor() ? scope_->Lookup(v.toTensor()) : std::nullopt;
      OPREG_CHECK(e.has_value(), "[", op.operator_name().str(),
                  "] graph capture: a return is not a tensor of this capture");
      py::object proxy = WrapProxy(e->meta, e->value.id, token_);
      proxies_.push_back(proxy);
      results.push_back(std::move(proxy));
    }
    if (results.empty()) return py::none();
    if (results.size() == 1) return results[0];
    py::tuple t(results.size());
    for (size_t i = 0; i < results.size(); ++i) t[i] = results[i];
    return t;
  }

  // Whether this thread's op calls are being recorded by this capture right now (not while a
  // kernel it runs, such as a Python meta function, is executing).
  bool Recording() const { return scope_.has_value() && CurrentCallInterceptor() == &*scope_; }

  py::object Replay(py::args inputs) {
    PlannedExecutor& ex = Executor();
    std::vector<Tensor> ins = Inputs(inputs);
    std::vector<Tensor> outs;
    {
      // Planning a new shape (seconds with a search budget) and the replay itself run without
      // the GIL: other Python threads go on, replays of planned shapes included (the executor
      // is thread-safe; Python kernels take the GIL themselves).
      py::gil_scoped_release nogil;
      outs = ex.Run(ins);
    }
    return Pack(outs);
  }

  py::dict PlanStats(py::args inputs) {
    PlannedExecutor& ex = Executor();
    std::vector<Tensor> ins = Inputs(inputs);
    const MemoryPlan* planned = nullptr;
    {
      py::gil_scoped_release nogil;
      planned = &ex.PlanFor(ins);
    }
    const MemoryPlan& plan = *planned;
    py::dict d;
    d["arena_bytes"] = plan.arena_bytes;
    d["lb_bytes"] = plan.lb_bytes;
    d["naive_bytes"] = plan.naive_bytes;
    d["eager_peak_bytes"] = plan.eager_peak_bytes;
    d["use_arena"] = plan.use_arena;
    d["strategy"] = plan.strategy;
    d["optimal_by"] = plan.optimal_by;
    d["search"] = plan.search;
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
  double plan_budget_ms_ = 0;
  bool started_ = false, finished_ = false;
  bool explicit_outputs_ = false, single_output_ = false;
  size_t num_outputs_ = 0;
  std::optional<CaptureScope> scope_;
  // Outside objects converted during the capture (kept alive, so their ids are not reused).
  absl::flat_hash_map<PyObject*, std::pair<py::object, Tensor>> objects_;
  std::vector<Tensor> example_inputs_;
  std::vector<py::object> proxies_;
  std::vector<py::object> explicit_outs_;
  std::unique_ptr<PlannedExecutor> executor_;
};

GraphCapture* ActiveCapture() {
  return t_capture != nullptr && t_capture->Recording() ? t_capture : nullptr;
}

Tensor CaptureTensor(GraphCapture* capture, py::handle obj) { return capture->Capture(obj); }

py::object CaptureResults(GraphCapture* capture, const OperatorHandle& op, const Stack& stack) {
  return capture->Results(op, stack);
}

void InitGraph(py::module_& m) {
  py::class_<GraphCapture>(m, "_GraphCapture")
      .def(py::init<double>(), py::arg("plan_budget_ms") = 0.0)
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
  m.def("_capture_active", []() { return ActiveCapture() != nullptr; });
}

}  // namespace opreg::python
