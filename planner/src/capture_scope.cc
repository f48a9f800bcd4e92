// CaptureScope (capture_scope.h): the dispatcher hands every call of this thread to Intercept,
// which maps tensors to graph values, runs the meta function for the results' shapes, and
// records the call. Results are meta tensors, except that a mutated argument comes back as the
// caller's own tensor, so that typed calls returning `Tensor&` still return what was passed.
#include "opreg/planner/capture_scope.h"

#include "opreg/core/error.h"
#include "opreg/dispatch/argument_binding.h"
#include "opreg/dispatch/run_meta_function.h"

namespace opreg {

CaptureScope::CaptureScope() { guard_.emplace(this); }

CaptureScope::~CaptureScope() { guard_.reset(); }

std::optional<CaptureScope::Entry> CaptureScope::Lookup(const Tensor& t) const {
  if (!t.defined()) return std::nullopt;
  auto it = entries_.find(t.unsafe_get_impl());
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

CaptureScope::Entry CaptureScope::Use(const Tensor& t) {
  OPREG_CHECK_VALUE(t.defined(), "graph capture: an undefined tensor was passed to an op");
  if (std::optional<Entry> e = Lookup(t)) return *e;
  Entry e{recorder_.AddInput(t), ToMeta(IValue(t)).toTensor()};
  inputs_.push_back(t);
  entries_.emplace(t.unsafe_get_impl(), e);
  entries_.emplace(e.meta.unsafe_get_impl(), e);
  seen_.push_back(t);
  seen_.push_back(e.meta);
  return e;
}

GraphArg CaptureScope::Arg(const IValue& v, Stack* meta_args) {
  if (v.isTensor() && v.toTensor().defined()) {
    Entry e = Use(v.toTensor());
    meta_args->push_back(IValue(e.meta));
    return GraphArg(e.value);
  }
  if (v.isTensorList()) {
    std::vector<Value> values;
    std::vector<Tensor> metas;
    for (const Tensor& t : v.toTensorList()) {
      Entry e = Use(t);
      values.push_back(e.value);
      metas.push_back(e.meta);
    }
    meta_args->push_back(IValue(std::move(metas)));
    return GraphArg(std::move(values));
  }
  meta_args->push_back(v);
  return GraphArg(v);
}

void CaptureScope::Intercept(const OperatorHandle& op, Stack* stack) {
  OPREG_CHECK(!finished_, "[", op.operator_name().str(), "] graph capture has finished");
  // The meta tensor of each tensor argument -> the caller's tensor, to hand mutated ones back.
  absl::flat_hash_map<const TensorImpl*, IValue> callers;
  std::vector<GraphArg> args;
  args.reserve(stack->size());
  Stack meta;
  meta.reserve(stack->size());
  for (const IValue& v : *stack) {
    args.push_back(Arg(v, &meta));
    if (v.isTensor() && v.toTensor().defined()) {
      callers.emplace(meta.back().toTensor().unsafe_get_impl(), v);
    }
  }
  // The results' shapes: the op's meta function (a real call: interception is suspended).
  op.CallBoxed(&meta);
  // The stack is bound already (schema order, defaults filled): its keyword-only arguments go
  // back to the recorder by name, which binds them by the same rules as every caller.
  const auto& params = op.schema().arguments();
  const size_t positional = ArgumentBinding(op.schema(), "").num_positional();
  std::vector<std::pair<std::string, GraphArg>> kwargs;
  for (size_t i = positional; i < params.size() && i < args.size(); ++i) {
    kwargs.emplace_back(params[i].name(), std::move(args[i]));
  }
  if (positional < params.size() && args.size() > positional) {
    args.erase(args.begin() + static_cast<ptrdiff_t>(positional), args.end());
  }
  std::vector<Value> outs = recorder_.Call(op, std::move(args), std::move(kwargs));
  OPREG_CHECK(outs.size() == meta.size(), "[", op.operator_name().str(),
              "] graph capture: ", outs.size(), " recorded outputs for ", meta.size(), " returns");
  stack->clear();
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& t = meta[i].toTensor();
    Entry e{outs[i], t};
    auto caller = callers.find(t.unsafe_get_impl());
    if (caller != callers.end()) {
      // A mutated (or returned-as-is) argument: the caller's tensor now stands for the output.
      entries_[caller->second.toTensor().unsafe_get_impl()] = e;
      stack->push_back(caller->second);
    } else {
      seen_.push_back(t);
      stack->push_back(meta[i]);
    }
    entries_[t.unsafe_get_impl()] = e;
  }
}

Graph CaptureScope::Finish(const std::vector<Tensor>& outputs) {
  std::vector<Value> values;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::optional<Entry> e = Lookup(outputs[i]);
    OPREG_CHECK_VALUE(e.has_value(), "CaptureScope::Finish: output #", i,
                      " is not a tensor of this capture");
    values.push_back(e->value);
  }
  return FinishValues(values);
}

Graph CaptureScope::FinishValues(const std::vector<Value>& outputs) {
  OPREG_CHECK(!finished_, "CaptureScope::Finish: the capture has already finished");
  guard_.reset();
  finished_ = true;
  for (Value v : outputs) recorder_.MarkOutput(v);
  return recorder_.Finish();
}

void CaptureScope::Abandon() {
  guard_.reset();
  finished_ = true;
}

}  // namespace opreg
