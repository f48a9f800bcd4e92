// Tensor: factories, views and their storage sharing, copies, element access, meta tensors.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>
#include <vector>

#include "opreg/core/allocator.h"
#include "opreg/core/tensor.h"
#include "opreg/core/tensor_factories.h"

using opreg::Device;
using opreg::DType;
using opreg::Tensor;

namespace {

std::vector<int64_t> Vec(opreg::IntArrayRef r) { return {r.begin(), r.end()}; }

// A 2x3 f32 tensor holding 0..5.
Tensor Iota23() { return opreg::arange(6, DType::kFloat32).view({2, 3}); }

}  // namespace

TEST_CASE("undefined tensor") {
  Tensor t;
  CHECK_FALSE(t.defined());
  CHECK(t.use_count() == 0);
  CHECK(t.ToString() == "Tensor(undefined)");
  REQUIRE_THROWS_WITH(t.sizes(), Catch::StartsWith("Tensor is undefined (default-constructed)"));
  CHECK_FALSE(t.is_alias_of(t));
}

TEST_CASE("empty, zeros, ones, full") {
  Tensor t = opreg::empty({2, 3}, DType::kFloat32);
  CHECK(t.defined());
  CHECK(t.dim() == 2);
  CHECK(Vec(t.sizes()) == std::vector<int64_t>{2, 3});
  CHECK(Vec(t.strides()) == std::vector<int64_t>{3, 1});
  CHECK(t.numel() == 6);
  CHECK(t.nbytes() == 24);
  CHECK(t.storage().nbytes() == 24);
  CHECK(t.storage_offset() == 0);
  CHECK(t.is_contiguous());
  CHECK(t.device() == Device::cpu());
  CHECK(t.dtype() == DType::kFloat32);
  CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  CHECK(t.ToString() == "Tensor(shape=[2, 3], dtype=f32, device=cpu)");
  std::ostringstream os;
  os << t;
  CHECK(os.str() == t.ToString());

  Tensor z = opreg::zeros({4}, DType::kInt64);
  Tensor o = opreg::ones({2, 2}, DType::kBFloat16);
  Tensor f = opreg::full({3}, 2.5, DType::kFloat16);
  for (int64_t i = 0; i < 4; ++i) CHECK(z.at({i}) == 0.0);
  CHECK(o.at({1, 1}) == 1.0);
  CHECK(f.at({2}) == 2.5);
  CHECK(opreg::full({2}, 3.9, DType::kInt32).at({0}) == 3.0);  // Truncation toward zero.

  Tensor scalar = opreg::full({}, 7.0, DType::kFloat64);
  CHECK(scalar.dim() == 0);
  CHECK(scalar.numel() == 1);
  CHECK(scalar.item() == 7.0);
  CHECK(opreg::empty({0, 5}, DType::kFloat32).numel() == 0);

  REQUIRE_THROWS_WITH(opreg::empty({2, -1}, DType::kFloat32),
                      Catch::StartsWith("empty(): negative size -1 in dim 1 of shape [2, -1]"));
  REQUIRE_THROWS_WITH(opreg::empty({int64_t{1} << 40, int64_t{1} << 40}, DType::kFloat32),
                      Catch::Contains("has more than 2^63 elements"));
  Tensor like = opreg::empty_like(t);
  CHECK(Vec(like.sizes()) == Vec(t.sizes()));
  CHECK_FALSE(like.is_alias_of(t));
}

TEST_CASE("arange") {
  Tensor a = opreg::arange(5, DType::kInt64);
  CHECK(Vec(a.sizes()) == std::vector<int64_t>{5});
  for (int64_t i = 0; i < 5; ++i) CHECK(a.at({i}) == static_cast<double>(i));
  Tensor b = opreg::arange(1.0, 2.0, 0.25, DType::kFloat32);
  CHECK(b.numel() == 4);
  CHECK(b.at({3}) == 1.75);
  Tensor c = opreg::arange(3.0, 0.0, -1.0, DType::kFloat64);
  CHECK(c.numel() == 3);
  CHECK(c.at({2}) == 1.0);
  CHECK(opreg::arange(0, DType::kFloat32).numel() == 0);
  REQUIRE_THROWS_WITH(opreg::arange(0.0, 1.0, 0.0, DType::kFloat32),
                      Catch::StartsWith("arange(): step must be finite and nonzero, got 0"));
  REQUIRE_THROWS_WITH(
      opreg::arange(0.0, 1.0, -1.0, DType::kFloat32),
      Catch::StartsWith("arange(): step -1 has the wrong sign for start 0 and end 1"));
}

TEST_CASE("full and arange refuse values the dtype cannot hold, as torch's fill does") {
  // Each was silently saturated before (300 -> 127 in int8, NaN -> 0, 2^63 -> INT64_MAX).
  auto refused = [](auto make, const char* text) {
    try {
      make();
      FAIL("accepted; expected an error containing: " << text);
    } catch (const opreg::Error& e) {
      CHECK(e.kind() == opreg::ErrorKind::kValue);
      CHECK_THAT(e.what(), Catch::Contains(text));
    }
  };
  refused([] { opreg::full({3}, 300.0, DType::kInt8); },
          "full(): value 300 cannot be converted to type i8 without overflow");
  refused([] { opreg::full({3}, std::nan(""), DType::kInt8); }, "cannot be converted to type i8");
  refused([] { opreg::full({3}, 9223372036854775808.0, DType::kInt64); }, "type i64");
  refused([] { opreg::full({3}, 1e39, DType::kFloat32); }, "type f32");
  refused([] { opreg::full({3}, opreg::Scalar(int64_t{-256}), DType::kUInt8); }, "type u8");
  refused([] { opreg::arange(200, DType::kInt8); }, "arange(): last element: value 199");
  // What torch takes: truncation, NaN and inf floats, anything for bool, exact integers past
  // 2^53. (torch wraps -1 into uint8; opreg refuses it, as NumPy does.)
  CHECK(opreg::full({1}, 1.5, DType::kInt32).at({0}) == 1);
  refused([] { opreg::full({1}, opreg::Scalar(int64_t{-1}), DType::kUInt8); }, "type u8");
  CHECK(opreg::full({1}, opreg::Scalar(int64_t{255}), DType::kUInt8).at({0}) == 255);
  CHECK(std::isinf(opreg::full({1}, INFINITY, DType::kFloat16).at({0})));
  CHECK(opreg::full({1}, 2.0, DType::kBool).at({0}) == 1);
  const int64_t big = (int64_t{1} << 53) + 1;
  CHECK(opreg::full({1}, opreg::Scalar(big), DType::kInt64).data_ptr<int64_t>()[0] == big);
  CHECK(opreg::arange(128, DType::kInt8).numel() == 128);
}

TEST_CASE("empty_strided and from_blob") {
  Tensor s = opreg::empty_strided({2, 3}, {1, 2}, DType::kFloat32);
  CHECK(Vec(s.strides()) == std::vector<int64_t>{1, 2});
  CHECK(s.storage().nbytes() == 24);
  CHECK_FALSE(s.is_contiguous());
  REQUIRE_THROWS_WITH(opreg::empty_strided({2, 3}, {1}, DType::kFloat32),
                      Catch::StartsWith("empty_strided(): got 2 sizes [2, 3] but 1 strides [1]"));

  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  int deleted = 0;
  {
    Tensor b = opreg::from_blob(data.data(), {3, 2}, DType::kFloat32, Device::cpu(), [&](void* p) {
      CHECK(p == data.data());
      ++deleted;
    });
    CHECK(b.data_ptr() == data.data());
    CHECK(b.at({2, 1}) == 6.0);
    Tensor v = b.select(0, 1);
    b = Tensor();
    CHECK(deleted == 0);  // A view keeps the blob alive.
    CHECK(v.at({0}) == 3.0);
  }
  CHECK(deleted == 1);
  Tensor t = opreg::from_blob(data.data(), {2, 2}, {1, 2}, DType::kFloat32);  // Non-owning.
  CHECK(t.at({1, 0}) == 2.0);
  CHECK(t.storage().nbytes() == 16);
  REQUIRE_THROWS_WITH(
      opreg::from_blob(data.data(), {2}, {-1}, DType::kFloat32),
      Catch::StartsWith("from_blob(): negative stride -1 in dim 0 is not supported"));
}

TEST_CASE("a storage's buffer cannot be replaced, only a missing owner supplied") {
  std::vector<float> data = {1, 2, 3, 4};
  int released = 0;
  auto count = [](void* context) { ++*static_cast<int*>(context); };
  {
    Tensor t =
        opreg::from_blob(data.data(), {4}, {1}, DType::kFloat32, Device::cpu(), &released, count);
    opreg::StorageImpl* storage = t.storage().unsafe_get();
    // It has an owner: another is refused, and the buffer stays.
    CHECK_FALSE(storage->AdoptOwner(nullptr, nullptr));
    CHECK(storage->data() == data.data());
    CHECK(storage->nbytes() == 16);
  }
  CHECK(released == 1);
  // A non-owning storage takes an owner once, for the same buffer.
  Tensor borrowed = opreg::from_blob(data.data(), {4}, {1}, DType::kFloat32);
  CHECK(borrowed.storage().unsafe_get()->AdoptOwner(&released, count));
  CHECK_FALSE(borrowed.storage().unsafe_get()->AdoptOwner(&released, count));
  CHECK(borrowed.data_ptr() == data.data());
  borrowed = Tensor();
  CHECK(released == 2);
}

TEST_CASE("size, stride and dim wrapping") {
  Tensor t = opreg::empty({2, 3, 4}, DType::kFloat32);
  CHECK(t.size(0) == 2);
  CHECK(t.size(-1) == 4);
  CHECK(t.stride(-3) == 12);
  REQUIRE_THROWS_WITH(t.size(3), Catch::StartsWith("size(): dimension 3 out of range for a 3-d "
                                                   "tensor (expected in [-3, 2])"));
  REQUIRE_THROWS_WITH(t.stride(-4), Catch::StartsWith("stride(): dimension -4 out of range"));
  Tensor s = opreg::empty({}, DType::kFloat32);
  REQUIRE_THROWS_WITH(s.size(0), Catch::StartsWith("size(): dimension 0 out of range: the tensor "
                                                   "is 0-d (has no dimensions)"));
  try {
    t.size(5);
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kIndex);
  }
}

TEST_CASE("views share storage and count references") {
  Tensor t = Iota23();
  CHECK(t.use_count() == 1);
  const size_t storage_refs = t.storage().use_count();
  Tensor copy = t;
  CHECK(t.use_count() == 2);
  CHECK(t.storage().use_count() == storage_refs);  // Same TensorImpl, same storage handle.
  Tensor row = t.select(0, 1);
  CHECK(row.is_alias_of(t));
  CHECK(t.storage().use_count() == storage_refs + 1);
  CHECK(row.use_count() == 1);
  row.set({0}, 42.0);
  CHECK(t.at({1, 0}) == 42.0);  // Writes through the view.
  CHECK(row.storage_offset() == 3);
  CHECK_FALSE(t.is_alias_of(opreg::empty({2, 3}, DType::kFloat32)));
  copy = Tensor();
  CHECK(t.use_count() == 1);
}

TEST_CASE("narrow") {
  Tensor t = opreg::arange(12, DType::kFloat32).view({2, 6});
  Tensor n = t.narrow(1, 2, 3);
  CHECK(Vec(n.sizes()) == std::vector<int64_t>{2, 3});
  CHECK(Vec(n.strides()) == std::vector<int64_t>{6, 1});
  CHECK(n.storage_offset() == 2);
  CHECK(n.at({1, 0}) == 8.0);
  CHECK_FALSE(n.is_contiguous());
  CHECK(t.narrow(1, -2, 2).at({0, 0}) == 4.0);
  CHECK(t.narrow(0, 2, 0).numel() == 0);
  REQUIRE_THROWS_WITH(t.narrow(1, 5, 3),
                      Catch::StartsWith("narrow(): start 5 + length 3 exceeds size 6 of dim 1"));
  REQUIRE_THROWS_WITH(t.narrow(1, 7, 0),
                      Catch::StartsWith("narrow(): start 7 out of range for dim 1 of size 6"));
  REQUIRE_THROWS_WITH(t.narrow(0, 0, -1),
                      Catch::StartsWith("narrow(): length must be non-negative, got -1"));
  REQUIRE_THROWS_WITH(t.narrow(2, 0, 1), Catch::StartsWith("narrow(): dimension 2 out of range"));
}

TEST_CASE("select and unsqueeze") {
  Tensor t = Iota23();
  Tensor c = t.select(1, -1);
  CHECK(Vec(c.sizes()) == std::vector<int64_t>{2});
  CHECK(Vec(c.strides()) == std::vector<int64_t>{3});
  CHECK(c.at({1}) == 5.0);
  Tensor e = t.select(0, 0).select(0, 2);
  CHECK(e.dim() == 0);
  CHECK(e.item() == 2.0);
  REQUIRE_THROWS_WITH(t.select(1, 3),
                      Catch::StartsWith("select(): index 3 out of range for dim 1 of size 3"));
  REQUIRE_THROWS_WITH(t.select(0, -3),
                      Catch::StartsWith("select(): index -3 out of range for dim 0 of size 2"));

  Tensor u = t.unsqueeze(0);
  CHECK(Vec(u.sizes()) == std::vector<int64_t>{1, 2, 3});
  CHECK(Vec(u.strides()) == std::vector<int64_t>{6, 3, 1});
  Tensor w = t.unsqueeze(-1);
  CHECK(Vec(w.sizes()) == std::vector<int64_t>{2, 3, 1});
  CHECK(Vec(w.strides()) == std::vector<int64_t>{3, 1, 1});
  CHECK(t.unsqueeze(1).sizes()[1] == 1);
  CHECK(opreg::full({}, 1.0, DType::kFloat32).unsqueeze(0).dim() == 1);
  REQUIRE_THROWS_WITH(t.unsqueeze(3), Catch::StartsWith("unsqueeze(): dimension 3 out of range for "
                                                        "a 2-d tensor (expected in [-3, 2])"));
}

TEST_CASE("view") {
  Tensor t = opreg::arange(24, DType::kFloat32);
  Tensor v = t.view({2, -1, 4});
  CHECK(Vec(v.sizes()) == std::vector<int64_t>{2, 3, 4});
  CHECK(v.is_alias_of(t));
  CHECK(v.at({1, 2, 3}) == 23.0);
  // A transposed-like layout: viewable where dims stay within contiguous chunks.
  Tensor s = t.view({4, 6}).narrow(1, 0, 4);  // strides [6, 1], not contiguous
  CHECK(Vec(s.view({4, 2, 2}).strides()) == std::vector<int64_t>{6, 2, 1});
  REQUIRE_THROWS_WITH(s.view({16}),
                      Catch::StartsWith("view(): shape [16] is not compatible with the input's "
                                        "sizes [4, 4] and strides [6, 1]") &&
                          Catch::Contains("call contiguous() first, or use reshape()"));
  REQUIRE_THROWS_WITH(t.view({5, -1}),
                      Catch::StartsWith("view(): shape [5, -1] is invalid for input of size 24"));
  REQUIRE_THROWS_WITH(t.view({7, 3}),
                      Catch::StartsWith("view(): shape [7, 3] is invalid for input of size 24"));
  REQUIRE_THROWS_WITH(t.view({-1, -1}),
                      Catch::StartsWith("view(): only one dimension can be inferred (-1), got "
                                        "shape [-1, -1]"));
  REQUIRE_THROWS_WITH(t.view({-2, 12}),
                      Catch::StartsWith("view(): invalid size -2 in dim 0 of shape [-2, 12]"));
  Tensor empty = opreg::empty({0, 4}, DType::kFloat32);
  CHECK(Vec(empty.view({4, 0}).sizes()) == std::vector<int64_t>{4, 0});
  REQUIRE_THROWS_WITH(empty.view({0, -1}), Catch::StartsWith("view(): cannot infer the -1"));
  CHECK(opreg::full({}, 3.0, DType::kFloat32).view({1, 1}).at({0, 0}) == 3.0);
}

TEST_CASE("reshape views when it can and copies when it must") {
  Tensor t = opreg::arange(12, DType::kFloat32).view({3, 4});
  Tensor r = t.reshape({4, 3});
  CHECK(r.is_alias_of(t));
  Tensor cols = t.narrow(1, 1, 2);  // [3, 2], strides [4, 1]
  Tensor flat = cols.reshape({-1});
  CHECK_FALSE(flat.is_alias_of(t));
  CHECK(Vec(flat.sizes()) == std::vector<int64_t>{6});
  const double expected[] = {1, 2, 5, 6, 9, 10};
  for (int64_t i = 0; i < 6; ++i) CHECK(flat.at({i}) == expected[i]);
}

TEST_CASE("as_strided") {
  Tensor t = opreg::arange(6, DType::kFloat32);
  Tensor tr = t.as_strided({3, 2}, {1, 3}, 0);  // The transpose of a 2x3 view.
  CHECK(tr.at({2, 1}) == 5.0);
  CHECK(tr.is_alias_of(t));
  CHECK(t.as_strided({2}, {2}, 1).at({1}) == 3.0);
  CHECK(t.as_strided({3}, {2}, 1).at({2}) == 5.0);  // Reaches exactly the last element.
  REQUIRE_THROWS_WITH(t.as_strided({3}, {2}, 2),
                      Catch::StartsWith("as_strided(): sizes [3], strides [2] and offset 2 need a "
                                        "storage of at least 28 bytes, but it has 24"));
  REQUIRE_THROWS_WITH(t.as_strided({3}, {1, 1}, 0),
                      Catch::StartsWith("as_strided(): got 1 sizes but 2 strides"));
  REQUIRE_THROWS_WITH(t.as_strided({3}, {-1}, 0),
                      Catch::StartsWith("as_strided(): negative stride -1 in dim 0"));
}

TEST_CASE("contiguous and clone") {
  Tensor t = Iota23();
  CHECK(t.contiguous().unsafe_get_impl() == t.unsafe_get_impl());  // Returns *this.
  Tensor tr = t.as_strided({3, 2}, {1, 3}, 0);
  CHECK_FALSE(tr.is_contiguous());
  Tensor c = tr.contiguous();
  CHECK(c.is_contiguous());
  CHECK_FALSE(c.is_alias_of(t));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 2; ++j) CHECK(c.at({i, j}) == tr.at({i, j}));
  }
  Tensor cl = t.clone();
  CHECK_FALSE(cl.is_alias_of(t));
  cl.set({0, 0}, -1.0);
  CHECK(t.at({0, 0}) == 0.0);
  // Size-1 dims and empty tensors count as contiguous whatever their strides.
  CHECK(opreg::empty_strided({1, 3}, {7, 1}, DType::kFloat32).is_contiguous());
  CHECK(opreg::empty_strided({0, 3}, {1, 5}, DType::kFloat32).is_contiguous());
}

TEST_CASE("copy_ converts dtypes and handles strides") {
  Tensor src = Iota23();
  Tensor tr = src.as_strided({3, 2}, {1, 3}, 0);  // Non-contiguous source.
  const DType all[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,      DType::kBFloat16,
                       DType::kInt8,    DType::kUInt8,   DType::kInt16,        DType::kInt32,
                       DType::kInt64,   DType::kBool,    DType::kFloat8E4M3FN, DType::kFloat8E5M2,
                       DType::kUInt16,  DType::kUInt32,  DType::kUInt64};
  for (DType from : all) {
    Tensor typed = opreg::empty({3, 2}, from);
    typed.copy_(tr);
    for (DType to : all) {
      INFO(opreg::DTypeName(from) << " -> " << opreg::DTypeName(to));
      Tensor dst = opreg::empty({3, 2}, to);
      dst.copy_(typed);
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 2; ++j) {
          const double v = i + 3.0 * j;  // tr[i][j]
          const double want = (from == DType::kBool || to == DType::kBool) ? (v != 0) : v;
          CHECK(dst.at({i, j}) == want);
        }
      }
    }
  }
  // Float -> int truncates toward zero and saturates; NaN -> 0.
  Tensor f = opreg::empty({4}, DType::kFloat32);
  f.set({0}, -2.7);
  f.set({1}, 300.0);
  f.set({2}, std::nan(""));
  f.set({3}, -1e30);
  Tensor i8 = opreg::empty({4}, DType::kInt8);
  i8.copy_(f);
  CHECK(i8.at({0}) == -2.0);
  CHECK(i8.at({1}) == 127.0);
  CHECK(i8.at({2}) == 0.0);
  CHECK(i8.at({3}) == -128.0);
  // Into a non-contiguous destination.
  Tensor dst = opreg::zeros({2, 6}, DType::kFloat64);
  dst.narrow(1, 1, 3).copy_(src);
  CHECK(dst.at({1, 3}) == 5.0);
  CHECK(dst.at({1, 4}) == 0.0);
  CHECK(dst.at({0, 0}) == 0.0);
}

TEST_CASE("copy_ errors and overlap") {
  Tensor a = opreg::empty({2, 3}, DType::kFloat32);
  REQUIRE_THROWS_WITH(a.copy_(opreg::empty({3, 2}, DType::kFloat32)),
                      Catch::StartsWith("copy_(): shape mismatch: destination has shape [2, 3] but "
                                        "source has shape [3, 2]"));
  REQUIRE_THROWS_WITH(a.copy_(Tensor()), Catch::StartsWith("copy_(): source tensor is undefined"));
  Tensor expanded = opreg::empty({1}, DType::kFloat32).as_strided({4}, {0}, 0);
  REQUIRE_THROWS_WITH(
      expanded.copy_(opreg::zeros({4}, DType::kFloat32)),
      Catch::StartsWith("copy_(): destination has overlapping elements (stride 0 in "
                        "dim 0 of size 4)"));
  // Shifting within one buffer behaves as if the source were read first.
  Tensor t = opreg::arange(6, DType::kFloat32);
  t.narrow(0, 1, 5).copy_(t.narrow(0, 0, 5));
  const double want[] = {0, 0, 1, 2, 3, 4};
  for (int64_t i = 0; i < 6; ++i) CHECK(t.at({i}) == want[i]);
  t.copy_(t);  // Self copy is a no-op.
  CHECK(t.at({5}) == 4.0);
}

TEST_CASE("element access errors") {
  Tensor t = Iota23();
  REQUIRE_THROWS_WITH(t.at({0}), Catch::StartsWith("at(): got 1 indices for a 2-d tensor"));
  REQUIRE_THROWS_WITH(t.at({0, 3}),
                      Catch::StartsWith("at(): index 3 out of range for dim 1 of size 3"));
  REQUIRE_THROWS_WITH(t.item(), Catch::StartsWith("item(): the tensor has 6 elements; item() "
                                                  "needs exactly one"));
  CHECK(t.at({-1, -1}) == 5.0);
  CHECK(*t.data_ptr<float>() == 0.0f);
  REQUIRE_THROWS_WITH(t.data_ptr<int32_t>(),
                      Catch::StartsWith("data_ptr<i32>(): tensor has dtype f32"));
  Tensor h = opreg::full({1}, 1.5, DType::kFloat16);
  CHECK(static_cast<float>(*h.data_ptr<opreg::Half>()) == 1.5f);
}

TEST_CASE("meta tensors have shapes but no data") {
  const auto before = opreg::GetCpuAllocatorStats();
  Tensor m = opreg::empty({4, 8}, DType::kBFloat16, Device::meta());
  CHECK(m.is_meta());
  CHECK(m.data_ptr() == nullptr);
  CHECK(m.nbytes() == 64);
  CHECK(m.ToString() == "Tensor(shape=[4, 8], dtype=bf16, device=meta)");
  Tensor v = m.narrow(0, 1, 2).view({16});
  CHECK(v.is_alias_of(m));
  CHECK(v.data_ptr() == nullptr);
  CHECK_FALSE(m.is_alias_of(opreg::empty({4, 8}, DType::kBFloat16, Device::meta())));
  CHECK(opreg::zeros({3}, DType::kFloat32, Device::meta()).data_ptr() == nullptr);
  CHECK(opreg::arange(5, DType::kInt64, Device::meta()).numel() == 5);
  m.copy_(opreg::zeros({4, 8}, DType::kFloat32));  // Shape checks only.
  REQUIRE_THROWS_WITH(m.copy_(opreg::zeros({8, 4}, DType::kFloat32)),
                      Catch::StartsWith("copy_(): shape mismatch"));
  REQUIRE_THROWS_WITH(opreg::zeros({4, 8}, DType::kFloat32).copy_(m),
                      Catch::StartsWith("copy_(): cannot copy from a meta tensor (it has no data) "
                                        "into a cpu tensor"));
  REQUIRE_THROWS_WITH(m.at({0, 0}),
                      Catch::StartsWith("at(): element access needs a cpu tensor, got meta"));
  CHECK(m.clone().is_meta());
  CHECK(opreg::GetCpuAllocatorStats().allocations == before.allocations + 3);  // The three zeros().
}

TEST_CASE("cuda tensors need a device") {
  if (opreg::CudaAvailable()) return;
  CHECK_THROWS_AS(opreg::empty({2}, DType::kFloat32, Device::cuda(0)), opreg::Error);
}
