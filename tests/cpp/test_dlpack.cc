// DLPack export/import: dtypes, views, ownership and error paths.
#include <catch2/catch.hpp>
#include <vector>

#include "opreg/core/allocator.h"
#include "opreg/core/dlpack.h"
#include "opreg/core/tensor_factories.h"

using opreg::Device;
using opreg::DType;
using opreg::Tensor;

namespace {

const DType kAll[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,      DType::kBFloat16,
                      DType::kInt8,    DType::kUInt8,   DType::kInt16,        DType::kInt32,
                      DType::kInt64,   DType::kBool,    DType::kFloat8E4M3FN, DType::kFloat8E5M2,
                      DType::kUInt16,  DType::kUInt32,  DType::kUInt64};

// A producer-owned DLManagedTensor over a host vector, counting deleter calls.
struct Producer {
  std::vector<float> data = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int64_t> shape = {2, 4};
  std::vector<int64_t> strides = {4, 1};
  int deletes = 0;
  DLManagedTensor managed{};

  Producer() {
    DLTensor& dl = managed.dl_tensor;
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = 2;
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
    dl.strides = strides.data();
    dl.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* m) { ++static_cast<Producer*>(m->manager_ctx)->deletes; };
  }
};

}  // namespace

TEST_CASE("dtype codes") {
  CHECK(opreg::ToDLDataType(DType::kBool).code == 6);
  CHECK(opreg::ToDLDataType(DType::kFloat8E4M3FN).code == 10);
  CHECK(opreg::ToDLDataType(DType::kFloat8E5M2).code == 12);
  CHECK(opreg::ToDLDataType(DType::kBFloat16).code == kDLBfloat);
  CHECK(opreg::ToDLDataType(DType::kInt64).bits == 64);
  for (DType d : kAll) CHECK(opreg::FromDLDataType(opreg::ToDLDataType(d)).value() == d);
  auto bad = opreg::FromDLDataType({kDLFloat, 32, 4});
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()) ==
        "unsupported DLPack dtype (code 2, bits 32, lanes 4): only lanes == 1 is supported");
  CHECK(opreg::FromDLDataType({kDLUInt, 16, 1}).value() == DType::kUInt16);
  CHECK(opreg::FromDLDataType({kDLUInt, 64, 1}).value() == DType::kUInt64);
  CHECK_FALSE(opreg::FromDLDataType({kDLUInt, 128, 1}).ok());
  CHECK_FALSE(opreg::FromDLDataType({kDLComplex, 64, 1}).ok());
  CHECK_FALSE(opreg::FromDLDataType({kDLFloat, 8, 1}).ok());
}

TEST_CASE("round trip on CPU for every dtype") {
  for (DType d : kAll) {
    INFO(opreg::DTypeName(d));
    Tensor t = opreg::arange(6, d).view({2, 3});
    DLManagedTensor* m = opreg::ToDLPack(t);
    CHECK(m->dl_tensor.data == t.data_ptr());
    CHECK(m->dl_tensor.device.device_type == kDLCPU);
    CHECK(m->dl_tensor.ndim == 2);
    CHECK(m->dl_tensor.shape[1] == 3);
    CHECK(m->dl_tensor.strides[0] == 3);
    CHECK(m->dl_tensor.byte_offset == 0);
    auto back = opreg::FromDLPack(m);
    REQUIRE(back.ok());
    Tensor u = *back;
    CHECK(u.dtype() == d);
    CHECK(u.data_ptr() == t.data_ptr());  // Zero copy.
    CHECK(u.at({1, 2}) == (d == DType::kBool ? 1.0 : 5.0));
  }
}

TEST_CASE("export keeps the storage alive until the deleter runs") {
  const auto before = opreg::GetCpuAllocatorStats();
  DLManagedTensor* m;
  {
    Tensor t = opreg::arange(12, DType::kFloat32).view({3, 4});
    Tensor v = t.narrow(1, 1, 2).select(0, 2);  // Offset 9, stride 1, size 2.
    m = opreg::ToDLPack(v);
    CHECK(v.use_count() == 2);            // The export holds a reference to v's TensorImpl...
    CHECK(t.storage().use_count() == 2);  // ...which holds the storage, as t does.
  }
  CHECK(opreg::GetCpuAllocatorStats().frees == before.frees);  // Still alive.
  const float* p = static_cast<const float*>(m->dl_tensor.data);
  CHECK(p[0] == 9.0f);
  CHECK(m->dl_tensor.shape[0] == 2);
  CHECK(m->dl_tensor.strides[0] == 1);
  m->deleter(m);
  CHECK(opreg::GetCpuAllocatorStats().frees == before.frees + 1);
  CHECK(opreg::GetCpuAllocatorStats().bytes_live == before.bytes_live);
}

TEST_CASE("import takes ownership; deleter runs once after the last view") {
  Producer producer;
  {
    auto imported = opreg::FromDLPack(&producer.managed);
    REQUIRE(imported.ok());
    Tensor t = *imported;
    CHECK(t.data_ptr() == producer.data.data());
    CHECK(t.storage().nbytes() == 32);
    Tensor col = t.select(1, 3);
    t = Tensor();
    imported = absl::StatusOr<Tensor>(Tensor());
    CHECK(producer.deletes == 0);
    CHECK(col.at({1}) == 7.0);
  }
  CHECK(producer.deletes == 1);
}

TEST_CASE("import honours byte_offset, strides and NULL strides") {
  Producer producer;
  producer.managed.dl_tensor.byte_offset = 4 * sizeof(float);
  producer.shape = {2, 2};
  producer.strides = {1, 2};  // A transposed 2x2 view of elements 4..7.
  {
    Tensor t = opreg::FromDLPack(&producer.managed).value();
    CHECK(t.at({0, 1}) == 6.0);
    CHECK(t.at({1, 0}) == 5.0);
    CHECK_FALSE(t.is_contiguous());
  }
  CHECK(producer.deletes == 1);
  Producer contiguous;
  contiguous.managed.dl_tensor.strides = nullptr;
  {
    Tensor t = opreg::FromDLPack(&contiguous.managed).value();
    CHECK(t.is_contiguous());
    CHECK(t.at({1, 0}) == 4.0);
  }
  CHECK(contiguous.deletes == 1);
}

TEST_CASE("import errors leave ownership with the caller") {
  auto expect_error = [](Producer& p, const std::string& message) {
    auto r = opreg::FromDLPack(&p.managed);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(r.status().message()) == message);
    CHECK(p.deletes == 0);  // Not taken: the caller still owns it.
    p.managed.deleter(&p.managed);
    CHECK(p.deletes == 1);
  };
  {
    Producer p;
    p.managed.dl_tensor.dtype = {kDLFloat, 32, 2};
    expect_error(p,
                 "FromDLPack(): unsupported DLPack dtype (code 2, bits 32, lanes 2): only "
                 "lanes == 1 is supported");
  }
  {
    Producer p;
    p.managed.dl_tensor.dtype = {kDLComplex, 64, 1};
    expect_error(p,
                 "FromDLPack(): unsupported DLPack dtype (code 5, bits 64, lanes 1): opreg "
                 "supports float16/32/64, bfloat16, int8/16/32/64, uint8/16/32/64, bool and float8 "
                 "e4m3fn/e5m2");
  }
  {
    Producer p;
    p.managed.dl_tensor.device = {kDLOpenCL, 0};
    expect_error(p,
                 "FromDLPack(): unsupported DLPack device type 4 (opreg accepts kDLCPU = 1 and "
                 "kDLCUDA = 2)");
  }
  {
    Producer p;
    p.strides = {-4, 1};
    expect_error(p, "FromDLPack(): negative stride -4 in dim 0 is not supported");
  }
  {
    Producer p;
    p.shape = {2, -1};
    expect_error(p, "FromDLPack(): negative size -1 in dim 1");
  }
  {
    Producer p;
    p.managed.dl_tensor.ndim = -1;
    expect_error(p, "FromDLPack(): negative ndim -1");
  }
  CHECK(std::string(opreg::FromDLPack(nullptr).status().message()) ==
        "FromDLPack(): null DLManagedTensor");
}

TEST_CASE("export refuses meta and undefined tensors") {
  REQUIRE_THROWS_WITH(opreg::ToDLPack(opreg::empty({2}, DType::kFloat32, Device::meta())),
                      Catch::StartsWith("ToDLPack(): meta tensors have no data and cannot be "
                                        "exported to DLPack"));
  REQUIRE_THROWS_WITH(opreg::ToDLPack(Tensor()), Catch::StartsWith("ToDLPack(): the tensor is "
                                                                   "undefined"));
}

TEST_CASE("cuda DLPack tensors import as cuda tensors without touching the device") {
  static float fake_device_memory[4];  // Never dereferenced: import makes no CUDA calls.
  std::vector<int64_t> shape = {4};
  DLManagedTensor m{};
  m.dl_tensor.data = fake_device_memory;
  m.dl_tensor.device = {kDLCUDA, 1};
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = {kDLFloat, 32, 1};
  m.dl_tensor.shape = shape.data();
  m.deleter = nullptr;  // Allowed by DLPack: nothing to release.
  Tensor t = opreg::FromDLPack(&m).value();
  CHECK(t.device() == Device::cuda(1));
  CHECK(t.data_ptr() == fake_device_memory);
  DLManagedTensor* out = opreg::ToDLPack(t);
  CHECK(out->dl_tensor.device.device_type == kDLCUDA);
  CHECK(out->dl_tensor.device.device_id == 1);
  out->deleter(out);
}
