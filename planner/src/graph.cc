#include "opreg/planner/graph.h"

#include <algorithm>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/argument_binding.h"
#include "opreg/dispatch/run_meta_function.h"

namespace opreg {
namespace {

Tensor MetaOf(const TensorSpec& spec) {
  return empty_strided(spec.sizes, spec.strides, spec.dtype, Device::meta());
}

// The stack a node's meta function runs on, given every value's spec.
Stack MetaStack(const GraphNode& node, const std::vector<ValueInfo>& values) {
  Stack stack;
  stack.reserve(node.args.size());
  for (const GraphArg& a : node.args) {
    switch (a.kind) {
      case GraphArg::Kind::kValue:
        stack.emplace_back(MetaOf(values[a.value.id].spec));
        break;
      case GraphArg::Kind::kValueList: {
        std::vector<Tensor> ts;
        for (Value v : a.values) ts.push_back(MetaOf(values[v.id].spec));
        stack.emplace_back(std::move(ts));
        break;
      }
      case GraphArg::Kind::kConstant:
        stack.push_back(a.constant);
        break;
    }
  }
  return stack;
}

// Runs the node's meta function and returns its outputs' specs (on the node's device).
std::vector<TensorSpec> OutputSpecs(const GraphNode& node, const std::vector<ValueInfo>& values) {
  Device device = Device::cpu();
  for (const GraphArg& a : node.args) {
    if (a.kind == GraphArg::Kind::kValue) {
      device = values[a.value.id].spec.device;
      break;
    }
    if (a.kind == GraphArg::Kind::kValueList && !a.values.empty()) {
      device = values[a.values[0].id].spec.device;
      break;
    }
  }
  const Stack results = RunMetaFunction(node.op, MetaStack(node, values));
  std::vector<TensorSpec> specs;
  for (const IValue& r : results) {
    TensorSpec s = TensorSpec::Of(r.toTensor());
    s.device = device;
    specs.push_back(std::move(s));
  }
  return specs;
}

// The argument whose alias set a return shares (a view, or an in-place op returning self).
int AliasedArgument(const FunctionSchema& schema, const Argument& ret) {
  if (!ret.alias_info() || ret.alias_info()->before_sets().empty()) return -1;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const auto& info = schema.arguments()[i].alias_info();
    if (!info) continue;
    for (const std::string& set : ret.alias_info()->before_sets()) {
      if (set != AliasInfo::kWildcard &&
          std::find(info->before_sets().begin(), info->before_sets().end(), set) !=
              info->before_sets().end()) {
        return static_cast<int>(i);
      }
    }
  }
  return -1;
}

}  // namespace

TensorSpec TensorSpec::Of(const Tensor& t) {
  TensorSpec s;
  s.sizes.assign(t.sizes().begin(), t.sizes().end());
  s.strides.assign(t.strides().begin(), t.strides().end());
  s.dtype = t.dtype();
  s.device = t.device();
  return s;
}

int64_t TensorSpec::nbytes() const {
  int64_t extent = 1;  // elements needed: 1 + sum of (size - 1) * stride
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    extent += (sizes[d] - 1) * strides[d];
  }
  return extent * static_cast<int64_t>(ItemSize(dtype));
}

std::string TensorSpec::str() const {
  std::string out = StrCat(DTypeName(dtype), "[");
  for (size_t d = 0; d < sizes.size(); ++d) StrAppend(&out, d > 0 ? ", " : "", sizes[d]);
  StrAppend(&out, "] ", device.str());
  return out;
}

bool operator==(const TensorSpec& a, const TensorSpec& b) {
  return a.sizes == b.sizes && a.strides == b.strides && a.dtype == b.dtype && a.device == b.device;
}

std::string Graph::str() const {
  std::string out;
  for (Value v : inputs_) StrAppend(&out, "%", v.id, " = input : ", values_[v.id].spec.str(), "\n");
  for (const GraphNode& n : nodes_) {
    std::string lhs;
    for (size_t k = 0; k < n.outputs.size(); ++k)
      StrAppend(&lhs, k > 0 ? ", " : "", "%", n.outputs[k].id);
    std::string args;
    for (size_t i = 0; i < n.args.size(); ++i) {
      const GraphArg& a = n.args[i];
      StrAppend(&args, i > 0 ? ", " : "");
      if (a.kind == GraphArg::Kind::kValue) {
        StrAppend(&args, "%", a.value.id);
      } else if (a.kind == GraphArg::Kind::kValueList) {
        StrAppend(&args, "[");
        for (size_t j = 0; j < a.values.size(); ++j) {
          StrAppend(&args, j > 0 ? ", " : "", "%", a.values[j].id);
        }
        StrAppend(&args, "]");
      } else {
        std::ostringstream os;
        os << a.constant;
        StrAppend(&args, os.str());
      }
    }
    std::string types;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      StrAppend(&types, k > 0 ? ", " : "", values_[n.outputs[k].id].spec.str());
    }
    StrAppend(&out, lhs.empty() ? "" : lhs + " = ", n.op.operator_name().str(), "(", args, ")",
              types.empty() ? "" : " : " + types, "\n");
  }
  std::string outs;
  for (size_t k = 0; k < outputs_.size(); ++k)
    StrAppend(&outs, k > 0 ? ", " : "", "%", outputs_[k].id);
  StrAppend(&out, "return ", outs, "\n");
  return out;
}

std::vector<ValueInfo> Graph::Propagate(const std::vector<TensorSpec>& input_specs) const {
  OPREG_CHECK_VALUE(input_specs.size() == inputs_.size(), "the graph takes ", inputs_.size(),
                    " inputs, got ", input_specs.size());
  std::vector<ValueInfo> values = values_;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorSpec& recorded = values_[inputs_[i].id].spec;
    const TensorSpec& given = input_specs[i];
    OPREG_CHECK_VALUE(given.dtype == recorded.dtype && given.device == recorded.device &&
                          given.sizes.size() == recorded.sizes.size(),
                      "graph input #", i, ": expected ", recorded.str(), " (any sizes of rank ",
                      recorded.sizes.size(), "), got ", given.str());
    values[inputs_[i].id].spec = given;
  }
  for (const GraphNode& node : nodes_) {
    std::vector<TensorSpec> specs = OutputSpecs(node, values);
    for (size_t k = 0; k < node.outputs.size(); ++k) values[node.outputs[k].id].spec = specs[k];
  }
  return values;
}

Value GraphRecorder::AddInput(const Tensor& example) {
  OPREG_CHECK_VALUE(example.defined(), "AddInput: the example tensor is undefined");
  return AddInput(TensorSpec::Of(example));
}

Value GraphRecorder::AddInput(TensorSpec spec) {
  const Value v{static_cast<int32_t>(graph_.values_.size())};
  graph_.values_.push_back(ValueInfo{std::move(spec), -1, 0, false});
  graph_.inputs_.push_back(v);
  return v;
}

void GraphRecorder::CheckValue(Value v) const {
  OPREG_CHECK_VALUE(v.id >= 0 && static_cast<size_t>(v.id) < graph_.values_.size(), "%", v.id,
                    " is not a value of this graph");
}

std::vector<Value> GraphRecorder::Call(std::string_view op, std::vector<GraphArg> args,
                                       std::vector<std::pair<std::string, GraphArg>> kwargs) {
  return Call(Dispatcher::Get().FindOpOrThrow(op), std::move(args), std::move(kwargs));
}

std::vector<Value> GraphRecorder::Call(const OperatorHandle& op, std::vector<GraphArg> args,
                                       std::vector<std::pair<std::string, GraphArg>> kwargs) {
  const OpDefinition& def = op.definition();
  const FunctionSchema& schema = def.schema;
  const std::string name = op.operator_name().str();
  const auto& params = schema.arguments();
  const ArgumentBinding binding(schema, name);
  binding.CheckPositionalCount(args.size());
  std::vector<std::optional<GraphArg>> slots(std::max(params.size(), args.size()));
  for (size_t i = 0; i < args.size(); ++i) slots[i] = std::move(args[i]);
  for (auto& [key, arg] : kwargs) {
    slots[binding.KeywordSlot(key, [&](size_t i) { return slots[i].has_value(); })] =
        std::move(arg);
  }
  OPREG_CHECK_TYPE(slots.size() == params.size(), "[", name,
                   "] a vararg op's extra arguments cannot be recorded in a graph");
  GraphNode node{op, {}, {}, {}, {}};
  for (size_t i = 0; i < params.size(); ++i) {
    if (!slots[i]) slots[i] = GraphArg(binding.DefaultOf(i));
    const GraphArg& a = *slots[i];
    const Type& type = *params[i].type();
    if (a.kind == GraphArg::Kind::kValue) {
      CheckValue(a.value);
      OPREG_CHECK_TYPE(StripOptional(params[i].type())->kind() == TypeKind::kTensor,
                       ArgErrorMessage(name, params[i].name(), static_cast<int>(i), type.str(),
                                       "a graph value (Tensor)"));
    } else if (a.kind == GraphArg::Kind::kValueList) {
      for (Value v : a.values) CheckValue(v);
      OPREG_CHECK_TYPE(type.kind() == TypeKind::kList && IsTensorLike(type),
                       ArgErrorMessage(name, params[i].name(), static_cast<int>(i), type.str(),
                                       "a list of graph values (Tensor[])"));
    } else {
      // Tensors of a graph are values; a tensor constant would be baked into every replay.
      OPREG_CHECK_TYPE(
          !a.constant.isTensor(),
          ArgErrorMessage(name, params[i].name(), static_cast<int>(i),
                          "a graph value (pass tensors through AddInput)", "a Tensor constant"));
    }
    node.args.push_back(std::move(*slots[i]));
  }
  for (size_t j = 0; j < schema.returns().size(); ++j) {
    OPREG_CHECK_TYPE(schema.returns()[j].type()->kind() == TypeKind::kTensor, "[", name,
                     "] graph capture records ops whose returns are all Tensor, but return #", j,
                     " is ", schema.returns()[j].type()->str());
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].is_write()) continue;
    const GraphArg& a = node.args[i];
    if (a.kind == GraphArg::Kind::kValue) node.mutated.push_back(a.value);
    if (a.kind == GraphArg::Kind::kValueList) {
      node.mutated.insert(node.mutated.end(), a.values.begin(), a.values.end());
    }
  }

  const std::vector<TensorSpec> specs = OutputSpecs(node, graph_.values_);
  const bool data_dependent = HasDataDependentOutput(def);
  const int index = static_cast<int>(graph_.nodes_.size());
  for (size_t j = 0; j < specs.size(); ++j) {
    const int aliased = AliasedArgument(schema, schema.returns()[j]);
    OPREG_CHECK_TYPE(aliased < 0 || node.args[aliased].kind == GraphArg::Kind::kValue, "[", name,
                     "] return #", j, " aliases argument #", aliased,
                     ", which must then be a graph value");
    const Value v{static_cast<int32_t>(graph_.values_.size())};
    graph_.values_.push_back(ValueInfo{specs[j], index, static_cast<int>(j), data_dependent});
    node.outputs.push_back(v);
    node.output_aliases_argument.push_back(aliased);
  }
  std::vector<Value> outputs = node.outputs;
  graph_.nodes_.push_back(std::move(node));
  return outputs;
}

void GraphRecorder::MarkOutput(Value v) {
  CheckValue(v);
  graph_.outputs_.push_back(v);
}

Graph GraphRecorder::Finish() {
  Graph g = std::move(graph_);
  graph_ = Graph();
  return g;
}

}  // namespace opreg
