#include "opreg/planner/memory_plan.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/dispatch/run_meta_function.h"
#include "opreg/dispatch/symmetric_memory_hooks.h"

namespace opreg {
namespace {

int32_t Find(std::vector<int32_t>& parent, int32_t v) {
  while (parent[v] != v) {
    parent[v] = parent[parent[v]];
    v = parent[v];
  }
  return v;
}

// How a node runs on replay: through its out variant when it is a functional op linked to one
// whose output sizes its meta function knows; the op itself otherwise.
NodeExecution ExecutionOf(const GraphNode& node, std::optional<OutVariantLink>* link) {
  const OpDefinition& def = node.op.definition();
  const bool fresh_outputs =
      std::all_of(node.output_aliases_argument.begin(), node.output_aliases_argument.end(),
                  [](int a) { return a < 0; });
  if (!def.schema.is_mutable() && fresh_outputs && !node.outputs.empty() &&
      !HasDataDependentOutput(def)) {
    *link = Dispatcher::Get().OutVariantOf(node.op.operator_name());
    if (*link) return NodeExecution::kOutVariant;
  }
  return NodeExecution::kDirect;
}

std::string Bytes(int64_t b) {
  if (b >= (1 << 20)) return StrCat(static_cast<double>(b) / (1 << 20), " MiB");
  if (b >= (1 << 10)) return StrCat(static_cast<double>(b) / (1 << 10), " KiB");
  return StrCat(b, " B");
}

}  // namespace

std::string MemoryPlan::Summary() const {
  int slots = 0, runtime = 0, symmetric = 0;
  for (const StorageGroup& g : groups) {
    slots += g.kind == StorageKind::kArena;
    runtime += g.kind == StorageKind::kRuntime;
    symmetric += g.kind == StorageKind::kSymmetric;
  }
  return StrCat(
      use_arena ? "arena " : "no arena (runtime allocation), would-be arena ", Bytes(arena_bytes),
      ", LB ", Bytes(lb_bytes), " (",
      lb_bytes > 0 ? static_cast<double>(arena_bytes) / lb_bytes : 1.0, "x), eager peak ",
      Bytes(eager_peak_bytes), ", naive ", Bytes(naive_bytes), ", ", slots, " arena slots, ",
      runtime, " run-time allocations, ", symmetric, " symmetric buffers, placement '", strategy,
      "'", optimal_by.empty() ? "" : StrCat(" (optimal by ", optimal_by, ")"),
      search.empty() ? "" : StrCat(", exact search: ", search), ", planned in ", plan_ms, " ms");
}

MemoryPlan PlanMemory(const Graph& graph, const std::vector<ValueInfo>& values,
                      const PlanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  OPREG_CHECK_VALUE(options.alignment > 0 && (options.alignment & (options.alignment - 1)) == 0,
                    "PlanOptions.alignment must be a power of two, got ", options.alignment);
  MemoryPlan plan;
  plan.values = values;
  const auto& nodes = graph.nodes();
  const int32_t num_steps = static_cast<int32_t>(nodes.size());
  const int32_t n = static_cast<int32_t>(values.size());

  // Storage groups: outputs that alias an argument join its storage.
  std::vector<int32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  plan.execution.resize(nodes.size());
  plan.out_links.resize(nodes.size());
  // A value whose size depends on data makes every value computed from it data-dependent too:
  // the meta function only saw an estimate, so those ops must size their outputs themselves.
  std::vector<bool> data_dependent(n, false);
  for (size_t s = 0; s < nodes.size(); ++s) {
    const GraphNode& node = nodes[s];
    bool dd_input = false;
    for (const GraphArg& a : node.args) {
      if (a.kind == GraphArg::Kind::kValue) dd_input |= data_dependent[a.value.id];
      if (a.kind == GraphArg::Kind::kValueList) {
        for (Value v : a.values) dd_input |= data_dependent[v.id];
      }
    }
    for (Value v : node.outputs) data_dependent[v.id] = dd_input || values[v.id].data_dependent;
    std::optional<OutVariantLink> link;
    plan.execution[s] = dd_input ? NodeExecution::kDirect : ExecutionOf(node, &link);
    if (link) plan.out_links[s] = *link;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int a = node.output_aliases_argument[k];
      if (a < 0) continue;
      const int32_t src = Find(parent, node.args[a].value.id);
      const int32_t dst = Find(parent, node.outputs[k].id);
      // The earlier value (the storage's owner) stays the root.
      if (src != dst) parent[std::max(src, dst)] = std::min(src, dst);
    }
  }

  plan.group_of_value.assign(n, -1);
  std::vector<int32_t> group_of_root(n, -1);
  for (int32_t v = 0; v < n; ++v) {
    const int32_t r = Find(parent, v);
    if (group_of_root[r] < 0) {
      group_of_root[r] = static_cast<int32_t>(plan.groups.size());
      const ValueInfo& info = values[r];
      StorageGroup g;
      g.root = Value{r};
      g.bytes = info.spec.nbytes();
      g.first = info.producer < 0 ? -1 : info.producer;
      g.last = g.first;
      if (info.producer < 0) {
        g.kind = StorageKind::kInput;
      } else if (plan.execution[info.producer] == NodeExecution::kOutVariant) {
        g.kind = StorageKind::kArena;
      } else {
        g.kind = StorageKind::kRuntime;
      }
      plan.groups.push_back(g);
    }
    plan.group_of_value[v] = group_of_root[r];
  }

  // Lifetimes: a group lives to the last step that uses (or produces) any of its values.
  auto use = [&](Value v, int32_t step) {
    StorageGroup& g = plan.groups[plan.group_of_value[v.id]];
    g.last = std::max(g.last, step);
  };
  for (int32_t s = 0; s < num_steps; ++s) {
    for (const GraphArg& a : nodes[s].args) {
      if (a.kind == GraphArg::Kind::kValue) use(a.value, s);
      if (a.kind == GraphArg::Kind::kValueList) {
        for (Value v : a.values) use(v, s);
      }
    }
    for (Value v : nodes[s].outputs) use(v, s);
  }
  for (Value v : graph.outputs()) {
    StorageGroup& g = plan.groups[plan.group_of_value[v.id]];
    if (g.kind != StorageKind::kInput) g.kind = StorageKind::kOutput;
    g.last = num_steps;  // handed to the caller
  }

  // Registered symmetric outs live in their group's symmetric heap, not in the arena.
  for (size_t s = 0; s < nodes.size(); ++s) {
    if (plan.execution[s] != NodeExecution::kOutVariant) continue;
    const GraphNode& node = nodes[s];
    const FunctionSchema& schema = node.op.schema();
    const std::optional<size_t> gi = schema.ArgumentIndex("group_name");
    if (!gi || node.args[*gi].kind != GraphArg::Kind::kConstant ||
        !node.args[*gi].constant.isString()) {
      continue;
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (!IsSymmetricArgument(plan.out_links[s].out, plan.out_links[s].out_argument_names[k])) {
        continue;
      }
      StorageGroup& g = plan.groups[plan.group_of_value[node.outputs[k].id]];
      g.heap_group = node.args[*gi].constant.toStringRef();
      if (g.kind == StorageKind::kArena) g.kind = StorageKind::kSymmetric;
    }
  }

  plan.release_after.assign(nodes.size(), {});
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const StorageGroup& g = plan.groups[i];
    if (g.kind == StorageKind::kArena || g.kind == StorageKind::kRuntime) {
      plan.release_after[g.last].push_back(static_cast<int32_t>(i));
    }
  }

  // Placement of the arena groups; peaks for the report and the arena/eager check.
  plan.guard_bytes = options.verify == VerifyMode::kOff ? 0 : options.alignment;
  std::vector<BufferInterval> arena_buffers, all_buffers;
  std::vector<int32_t> arena_groups;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const StorageGroup& g = plan.groups[i];
    if (g.kind == StorageKind::kInput) continue;
    const BufferInterval b{g.bytes, g.first, std::min(g.last, num_steps - 1)};
    all_buffers.push_back(b);
    plan.naive_bytes += g.bytes;
    if (g.kind == StorageKind::kArena) {
      arena_buffers.push_back(BufferInterval{g.bytes + plan.guard_bytes, g.first, b.last});
      arena_groups.push_back(static_cast<int32_t>(i));
    }
  }
  const Placement placement =
      PlaceBuffers(arena_buffers, PlacementOptions{options.alignment, options.budget_ms});
  plan.arena_bytes = placement.arena_bytes;
  plan.strategy = placement.strategy;
  plan.optimal_by = placement.optimal_by;
  plan.search = placement.search;
  plan.lb_bytes = LowerBoundBytes(arena_buffers, options.alignment);
  plan.eager_peak_bytes = LowerBoundBytes(all_buffers, options.alignment);
  for (size_t k = 0; k < arena_groups.size(); ++k) {
    plan.groups[arena_groups[k]].offset = placement.offsets[k];
  }
  // Never raise peak memory: fall back to allocating intermediates when they are made. (Guard
  // bytes, when verifying, are the one allowed excess.)
  if (plan.guard_bytes == 0 && plan.arena_bytes > plan.eager_peak_bytes) {
    plan.use_arena = false;
    for (int32_t i : arena_groups) plan.groups[i].kind = StorageKind::kRuntime;
  }
  plan.plan_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace opreg
