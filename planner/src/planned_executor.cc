#include "opreg/planner/planned_executor.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>

#include "opreg/core/error.h"
#include "opreg/core/logging.h"
#include "opreg/core/string_util.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/out_resolution.h"
#include "opreg/dispatch/symmetric_memory_hooks.h"

namespace opreg {
namespace {

constexpr uint8_t kGuardByte = 0xA5;

std::string Signature(const std::vector<Tensor>& inputs) {
  std::string key;
  for (const Tensor& t : inputs) {
    OPREG_CHECK_VALUE(t.defined(), "graph inputs must be defined tensors");
    StrAppend(&key, TensorSpec::Of(t).str(), "/");
    for (int64_t s : t.strides()) StrAppend(&key, s, ",");
    StrAppend(&key, ";");
  }
  return key;
}

std::string ValueName(const Graph& g, Value v) {
  const ValueInfo& info = g.values()[v.id];
  if (info.producer < 0) return StrCat("%", v.id, " (graph input)");
  return StrCat("%", v.id, " (output #", info.output_index, " of ",
                g.nodes()[info.producer].op.operator_name().str(), " at step ", info.producer, ")");
}

}  // namespace

struct PlannedExecutor::CachedPlan {
  MemoryPlan plan;
  Tensor arena;                             // uint8, one allocation per plan
  std::vector<Tensor> slots;                // per value id: its arena slot (undefined for others)
  std::vector<std::vector<Value>> members;  // per group: its values
  // Per node: the out variant it runs through (looked up once per plan, not per replay).
  std::vector<std::optional<OperatorHandle>> out_ops;
};

// One input signature's plan: made once (concurrent first callers wait for one planning,
// callers of other signatures are not involved), then replayed under its own lock, since
// every replay of it writes the same arena.
struct PlannedExecutor::PlanSlot {
  std::once_flag once;
  std::unique_ptr<CachedPlan> plan;
  std::atomic<bool> ready{false};
  std::mutex replay_mu;
};

PlannedExecutor::PlannedExecutor(Graph graph, PlanOptions options)
    : graph_(std::move(graph)), options_(options), mu_(std::make_unique<std::mutex>()) {}
PlannedExecutor::~PlannedExecutor() = default;
PlannedExecutor::PlannedExecutor(PlannedExecutor&&) noexcept = default;
PlannedExecutor& PlannedExecutor::operator=(PlannedExecutor&&) noexcept = default;

size_t PlannedExecutor::num_cached_plans() const {
  std::lock_guard<std::mutex> lock(*mu_);
  size_t n = 0;
  for (const auto& [key, slot] : plans_) n += slot->ready.load(std::memory_order_acquire);
  return n;
}

std::vector<std::string> PlannedExecutor::TakeVerifierFindings() {
  std::lock_guard<std::mutex> lock(*mu_);
  return std::exchange(findings_, {});
}

void PlannedExecutor::Report(std::string finding) {
  if (options_.verify == VerifyMode::kAssert) OPREG_THROW(kRuntime, "verifier: ", finding);
  Logger().error("verifier: {}", finding);
  std::lock_guard<std::mutex> lock(*mu_);
  findings_.push_back(std::move(finding));
}

const MemoryPlan& PlannedExecutor::PlanFor(const std::vector<Tensor>& inputs) {
  return SlotFor(inputs).plan->plan;
}

PlannedExecutor::PlanSlot& PlannedExecutor::SlotFor(const std::vector<Tensor>& inputs) {
  const std::string key = Signature(inputs);
  std::shared_ptr<PlanSlot> slot;
  {
    std::lock_guard<std::mutex> lock(*mu_);
    std::shared_ptr<PlanSlot>& entry = plans_[key];
    if (entry == nullptr) entry = std::make_shared<PlanSlot>();
    slot = entry;
  }
  // Planning runs under this signature's once_flag only. A planning that throws leaves the
  // flag unset, so the next call tries again.
  std::call_once(slot->once, [&] {
    slot->plan = MakePlan(inputs);
    slot->ready.store(true, std::memory_order_release);
  });
  return *slot;  // plans_ keeps the slot (slots are never removed)
}

std::unique_ptr<PlannedExecutor::CachedPlan> PlannedExecutor::MakePlan(
    const std::vector<Tensor>& inputs) const {
  std::vector<TensorSpec> specs;
  for (const Tensor& t : inputs) specs.push_back(TensorSpec::Of(t));
  auto cached = std::make_unique<CachedPlan>();
  cached->plan = PlanMemory(graph_, graph_.Propagate(specs), options_);
  const MemoryPlan& plan = cached->plan;
  cached->members.resize(plan.groups.size());
  for (size_t v = 0; v < plan.values.size(); ++v) {
    cached->members[plan.group_of_value[v]].push_back(Value{static_cast<int32_t>(v)});
  }
  // The arena lives on the device of the values it holds (one device per graph).
  Device device = Device::cpu();
  for (const StorageGroup& g : plan.groups) {
    if (g.kind == StorageKind::kArena) device = plan.values[g.root.id].spec.device;
  }
  cached->out_ops.resize(plan.execution.size());
  for (size_t s = 0; s < plan.execution.size(); ++s) {
    if (plan.execution[s] == NodeExecution::kOutVariant) {
      cached->out_ops[s] = Dispatcher::Get().FindOpOrThrow(plan.out_links[s].out.str());
    }
  }
  cached->slots.resize(plan.values.size());
  // Symmetric outs: allocated now, once per plan, from their group's heap (every rank plans the
  // same graph in the same order, so these collective allocations line up).
  for (const StorageGroup& g : plan.groups) {
    if (g.kind != StorageKind::kSymmetric) continue;
    const TensorSpec& spec = plan.values[g.root.id].spec;
    const ValueInfo& info = plan.values[g.root.id];
    const OutVariantLink& link = plan.out_links[info.producer];
    cached->slots[g.root.id] =
        EmptySymmetricOut(link.out, link.out_argument_names[info.output_index], spec.sizes,
                          spec.dtype, spec.device, g.heap_group);
  }
  if (plan.use_arena && plan.arena_bytes > 0) {
    cached->arena = empty({plan.arena_bytes}, DType::kUInt8, device);
    for (const StorageGroup& g : plan.groups) {
      if (g.kind != StorageKind::kArena) continue;
      const TensorSpec& spec = plan.values[g.root.id].spec;
      const int64_t item = static_cast<int64_t>(ItemSize(spec.dtype));
      OPREG_CHECK(g.offset % item == 0, "arena offset ", g.offset, " is not a multiple of ", item);
      cached->slots[g.root.id] = Tensor(make_intrusive<TensorImpl>(
          cached->arena.storage(), spec.sizes, spec.strides, g.offset / item, spec.dtype));
    }
  }
  return cached;
}

std::vector<Tensor> PlannedExecutor::Run(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> results;
  PlanSlot& slot = SlotFor(inputs);
  std::lock_guard<std::mutex> lock(slot.replay_mu);
  Replay(*slot.plan, inputs, nullptr, &results);
  return results;
}

void PlannedExecutor::Run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
  OPREG_CHECK_VALUE(outputs.size() == graph_.outputs().size(), "the graph has ",
                    graph_.outputs().size(), " outputs, got ", outputs.size(), " buffers");
  std::vector<Tensor> results;
  PlanSlot& slot = SlotFor(inputs);
  std::lock_guard<std::mutex> lock(slot.replay_mu);
  Replay(*slot.plan, inputs, &outputs, &results);
}

void PlannedExecutor::Replay(CachedPlan& cached, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>* outputs, std::vector<Tensor>* results) {
  const MemoryPlan& plan = cached.plan;
  const auto& nodes = graph_.nodes();
  const bool verify = options_.verify != VerifyMode::kOff;
  const bool guards = verify && plan.guard_bytes > 0 && cached.arena.defined() &&
                      cached.arena.device().type == DeviceType::kCPU;
  uint8_t* arena = guards ? static_cast<uint8_t*>(cached.arena.data_ptr()) : nullptr;
  std::vector<Tensor> vals(plan.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) vals[graph_.inputs()[i].id] = inputs[i];
  // Where each graph output must be written, when the caller gave buffers.
  std::vector<const Tensor*> given(plan.values.size(), nullptr);
  if (outputs != nullptr) {
    for (size_t k = 0; k < outputs->size(); ++k) {
      const Value v = graph_.outputs()[k];
      OPREG_CHECK_VALUE(
          (*outputs)[k].defined() && TensorSpec::Of((*outputs)[k]) == plan.values[v.id].spec,
          "output buffer #", k, ": expected ", plan.values[v.id].spec.str(), ", got ",
          (*outputs)[k].ToString());
      given[v.id] = &(*outputs)[k];
    }
  }
  auto buffer_for = [&](Value v) -> Tensor {
    const StorageGroup& g = plan.groups[plan.group_of_value[v.id]];
    if (g.kind == StorageKind::kArena || g.kind == StorageKind::kSymmetric) {
      return cached.slots[v.id];
    }
    if (given[v.id] != nullptr) return *given[v.id];
    const TensorSpec& spec = plan.values[v.id].spec;
    if (!g.heap_group.empty()) {  // a symmetric graph output: fresh from the heap each replay
      const ValueInfo& info = plan.values[v.id];
      const OutVariantLink& link = plan.out_links[info.producer];
      return EmptySymmetricOut(link.out, link.out_argument_names[info.output_index], spec.sizes,
                               spec.dtype, spec.device, g.heap_group);
    }
    return empty_strided(spec.sizes, spec.strides, spec.dtype, spec.device);
  };

  for (size_t s = 0; s < nodes.size(); ++s) {
    const GraphNode& node = nodes[s];
    // Arm the guard bytes after the slots this step writes, right before it runs: until now
    // that memory may have belonged to slots that died earlier.
    if (guards) {
      for (Value v : node.outputs) {
        const StorageGroup& g = plan.groups[plan.group_of_value[v.id]];
        if (g.kind == StorageKind::kArena) {
          std::memset(arena + g.offset + g.bytes, kGuardByte, plan.guard_bytes);
        }
      }
    }
    {  // Everything that holds tensors for the call dies before the lifetime checks below.
      Stack stack;
      stack.reserve(node.args.size());
      for (const GraphArg& a : node.args) {
        switch (a.kind) {
          case GraphArg::Kind::kValue:
            stack.emplace_back(vals[a.value.id]);
            break;
          case GraphArg::Kind::kValueList: {
            std::vector<Tensor> ts;
            for (Value v : a.values) ts.push_back(vals[v.id]);
            stack.emplace_back(std::move(ts));
            break;
          }
          case GraphArg::Kind::kConstant:
            stack.push_back(a.constant);
            break;
        }
      }

      if (plan.execution[s] == NodeExecution::kOutVariant) {
        const OutVariantLink& link = plan.out_links[s];
        std::vector<Tensor> outs;
        for (Value v : node.outputs) outs.push_back(buffer_for(v));
        const OperatorHandle& out_op = *cached.out_ops[s];
        Stack out_stack = BuildOutVariantStack(link, out_op.schema(), std::move(stack), outs);
        out_op.CallBoxed(&out_stack);
        CheckOutVariantResults(out_op, link, out_stack, outs);
        for (size_t k = 0; k < outs.size(); ++k) vals[node.outputs[k].id] = std::move(outs[k]);
      } else {
        std::vector<Tensor> arguments;
        if (verify) {
          for (const IValue& a : stack) {
            if (a.isTensor()) arguments.push_back(a.toTensor());
          }
        }
        node.op.CallBoxed(&stack);
        for (size_t k = 0; k < node.outputs.size(); ++k) {
          const Value v = node.outputs[k];
          Tensor out = stack[k].toTensor();
          if (verify && node.output_aliases_argument[k] < 0) {
            for (const Tensor& in : arguments) {
              if (in.defined() && out.is_alias_of(in)) {
                Report(StrCat("[", node.op.operator_name().str(), "] output #", k,
                              " shares storage with an input, but the schema does not declare "
                              "the alias (annotate it, e.g. Tensor(a) -> Tensor(a))"));
              }
            }
          }
          if (given[v.id] != nullptr) {
            const_cast<Tensor&>(*given[v.id]).copy_(out);
            out = *given[v.id];
          }
          vals[v.id] = std::move(out);
        }
      }
    }

    if (guards) {
      for (Value v : node.outputs) {
        const StorageGroup& g = plan.groups[plan.group_of_value[v.id]];
        if (g.kind != StorageKind::kArena) continue;
        const uint8_t* guard = arena + g.offset + g.bytes;
        for (int64_t b = 0; b < plan.guard_bytes; ++b) {
          if (guard[b] != kGuardByte) {
            Report(StrCat("[", node.op.operator_name().str(), "] wrote outside the slot of ",
                          ValueName(graph_, v), ": guard byte ", b, " after its ", g.bytes,
                          " bytes changed"));
            std::memset(const_cast<uint8_t*>(guard), kGuardByte, plan.guard_bytes);
            break;
          }
        }
      }
    }

    // Release what dies here: run-time storage goes back to its allocator now, and nothing
    // else may still hold it (or an arena slot that another value is about to reuse).
    for (int32_t gi : plan.release_after[s]) {
      const StorageGroup& g = plan.groups[gi];
      if (verify) {
        const Tensor& owner = vals[g.root.id];
        int64_t ours = 0;
        for (Value m : cached.members[gi]) {
          ours += vals[m.id].unsafe_get_impl() == owner.unsafe_get_impl() ? 1 : 0;
        }
        const int64_t slot_refs = g.kind == StorageKind::kArena ? 1 : 0;
        if (owner.defined() && static_cast<int64_t>(owner.use_count()) > ours + slot_refs) {
          Report(StrCat(ValueName(graph_, g.root),
                        " is still referenced after its last use at "
                        "step ",
                        s, ": a kernel or caller kept an intermediate alive"));
        }
      }
      for (Value m : cached.members[gi]) vals[m.id] = Tensor();
    }
  }

  results->clear();
  for (Value v : graph_.outputs()) results->push_back(vals[v.id]);
}

}  // namespace opreg
