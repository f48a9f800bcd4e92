// Runtime realization of symmetric-memory arguments in planned graphs: an out that its op
// registers as symmetric is allocated from the group's heap when the plan is made, not in the
// arena, and the replayed collective reads and writes symmetric memory.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"
#include "opreg/planner/planned_executor.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace {

namespace sm = opreg::symm_mem;
using opreg::DType;
using opreg::GraphRecorder;
using opreg::PlannedExecutor;
using opreg::StorageKind;
using opreg::Tensor;
using opreg::Value;

// Records whether its input lives in symmetric memory (a direct kernel: runs on the real value).
bool g_saw_symmetric = false;

TEST_CASE("a symmetric out planned in a captured graph lands in symmetric memory", "[symm]") {
  char tmpl[] = "/tmp/opreg_symm_plan_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  {
    auto group = sm::Group::Create("plan", 0, 1, std::make_shared<sm::FileStore>(dir));
    opreg::Library probe(opreg::Library::FRAGMENT, "symm_probe", std::nullopt, "p.cc", 1);
    probe.def("probe(Tensor x) -> Tensor")
        .impl("probe", opreg::DispatchKey::kCPU,
              [](const Tensor& x) {
                g_saw_symmetric = sm::IsSymmetric(x);
                return x.clone();
              })
        .impl("probe", opreg::DispatchKey::kMeta,
              [](const Tensor& x) { return opreg::empty_like(x); });

    Tensor x = sm::empty({3, 5}, DType::kFloat32, "plan");
    for (int64_t i = 0; i < 15; ++i) x.data_ptr<float>()[i] = static_cast<float>(i);

    GraphRecorder rec;
    Value vx = rec.AddInput(x);
    Value a = rec.Call("symm_mem::one_shot_all_reduce", {vx, "sum", "plan"})[0];
    Value b = rec.Call("symm_probe::probe", {a})[0];
    rec.MarkOutput(b);
    PlannedExecutor exec(rec.Finish());
    std::vector<Tensor> out = exec.Run({x});

    const opreg::MemoryPlan& plan = exec.PlanFor({x});
    const auto& ga = plan.groups[plan.group_of_value[a.id]];
    CHECK(ga.kind == StorageKind::kSymmetric);
    CHECK(ga.heap_group == "plan");
    CHECK(ga.offset == -1);  // not an arena slot
    CHECK(g_saw_symmetric);
    CHECK(out[0].data_ptr<float>()[14] == 14.0f);  // a world of one: the sum is the input
    CHECK(exec.num_cached_plans() == 1);
    exec.Run({x});
    CHECK(exec.num_cached_plans() == 1);
    sm::Group::Destroy("plan");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
