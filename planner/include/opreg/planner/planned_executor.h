// PlannedExecutor: replays a recorded graph on new inputs with planned memory.
//
// Every op that has an out variant runs through it, writing into a slot of one arena that is
// allocated once per plan; other ops (views, in-place ops, ops without out variants, ops with
// data-dependent output sizes) run as themselves and their outputs are released right after
// their last use. Plans are cached per input signature (sizes, strides, dtype, device of every
// input): a replay on inputs of a shape seen before makes no allocator call for intermediates,
// and none at all when the caller passes the output buffers.
//
// Verifier (PlanOptions::verify): kOff, kLog (findings logged and kept) or kAssert (the first
// finding throws). It checks each replay against the plan: a kernel that returns a tensor other
// than its slot, writes past its slot (guard bytes after every slot, CPU arenas), returns
// storage that aliases an input without the schema saying so, or an intermediate still
// referenced after its last use (a kernel or user kept it alive).
//
// Errors: opreg::Error naming the op (and value) at fault.
//
// Thread safety: Run and PlanFor may be called from several threads. Planning a new input
// signature (seconds, with an exact-search budget) happens outside every lock but that
// signature's: replays of signatures that already have a plan never wait for it, and
// concurrent first calls with one signature wait for a single planning (a plan is made once per
// signature). Replays of one signature are serialized (they share its arena); replays of
// different signatures run concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "opreg/planner/memory_plan.h"

namespace opreg {

class PlannedExecutor {
 public:
  explicit PlannedExecutor(Graph graph, PlanOptions options = {});
  ~PlannedExecutor();
  PlannedExecutor(PlannedExecutor&&) noexcept;
  PlannedExecutor& operator=(PlannedExecutor&&) noexcept;

  // Runs the graph; the outputs are allocated on their device (one allocation each).
  std::vector<Tensor> Run(const std::vector<Tensor>& inputs);
  // Runs the graph writing its outputs into `outputs` (shaped as planned).
  void Run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs);

  // The plan for inputs like these (planned and cached on first use).
  const MemoryPlan& PlanFor(const std::vector<Tensor>& inputs);
  size_t num_cached_plans() const;
  const Graph& graph() const { return graph_; }
  const PlanOptions& options() const { return options_; }
  // Findings of the verifier in kLog mode since the last call.
  std::vector<std::string> TakeVerifierFindings();

 private:
  struct CachedPlan;
  struct PlanSlot;
  // The slot of these inputs' signature, its plan made (once) if it was not yet.
  PlanSlot& SlotFor(const std::vector<Tensor>& inputs);
  std::unique_ptr<CachedPlan> MakePlan(const std::vector<Tensor>& inputs) const;
  void Replay(CachedPlan& cached, const std::vector<Tensor>& inputs,
              const std::vector<Tensor>* outputs, std::vector<Tensor>* results);
  void Report(std::string finding);

  Graph graph_;
  PlanOptions options_;
  std::unique_ptr<std::mutex> mu_;  // guards plans_ (the map, not the slots) and findings_
  absl::flat_hash_map<std::string, std::shared_ptr<PlanSlot>> plans_;
  std::vector<std::string> findings_;
};

}  // namespace opreg
