// add, mul (broadcasting) and split_add: functional, .out, errors.
#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/ops/checks.h"
#include "ops_test_util.h"

namespace {

using namespace opreg_test;  // NOLINT
namespace ops = opreg::ops;

// out = op(a, b) with NumPy broadcasting, in double.
std::vector<double> BroadcastRef(const Tensor& a, const Tensor& b,
                                 const std::function<double(double, double)>& op,
                                 std::vector<int64_t>* out_sizes) {
  const auto va = Values(a), vb = Values(b);
  const size_t nd = std::max(a.dim(), b.dim());
  std::vector<int64_t> sa(nd, 1), sb(nd, 1), so(nd);
  for (int64_t i = 0; i < a.dim(); ++i) sa[nd - a.dim() + i] = a.size(i);
  for (int64_t i = 0; i < b.dim(); ++i) sb[nd - b.dim() + i] = b.size(i);
  int64_t n = 1;
  for (size_t i = 0; i < nd; ++i) n *= (so[i] = std::max(sa[i], sb[i]));
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rem = flat, ia = 0, ib = 0, ma = 1, mb = 1;
    for (int64_t d = static_cast<int64_t>(nd) - 1; d >= 0; --d) {
      const int64_t idx = rem % so[d];
      rem /= so[d];
      ia += (sa[d] == 1 ? 0 : idx) * ma;
      ib += (sb[d] == 1 ? 0 : idx) * mb;
      ma *= sa[d];
      mb *= sb[d];
    }
    out[flat] = op(va[ia], vb[ib]);
  }
  *out_sizes = so;
  return out;
}

const DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

struct ShapePair {
  std::vector<int64_t> a, b;
};
const ShapePair kShapes[] = {
    {{1}, {1}},                  // size 1
    {{37}, {37}},                // odd, same shape
    {{3, 67}, {3, 67}},          // many elements per row
    {{513, 129}, {513, 129}},    // above the parallel threshold
    {{4, 5}, {5}},               // row broadcast
    {{4, 1}, {1, 7}},            // outer product broadcast
    {{2, 1, 3}, {5, 1}},         // rank difference both ways
    {{7}, {}},                   // 0-d other
    {{300, 1, 130}, {1, 9, 1}},  // big broadcast, strided inner
};

TEST_CASE("add and mul match the double reference for every dtype and shape", "[ops][add]") {
  for (DType dt : kDTypes) {
    uint32_t seed = 1;
    for (const ShapePair& s : kShapes) {
      const Tensor a = Rand(s.a, dt, seed++), b = Rand(s.b, dt, seed++);
      INFO(Name(dt) << " " << a.ToString() << " " << b.ToString());
      std::vector<int64_t> sizes;
      const auto add_ref = BroadcastRef(
          a, b, [](double x, double y) { return x + y; }, &sizes);
      Tensor y = ops::add(a, b);
      CHECK(std::vector<int64_t>(y.sizes().begin(), y.sizes().end()) == sizes);
      CHECK(y.dtype() == dt);
      CheckClose(Values(y), add_ref, Tol(dt));

      const auto axpy_ref = BroadcastRef(
          a, b, [](double x, double y) { return x - 2.5 * y; }, &sizes);
      CheckClose(Values(ops::add(a, b, -2.5)), axpy_ref, Tol(dt), 2.0);

      const auto mul_ref = BroadcastRef(
          a, b, [](double x, double y) { return x * y; }, &sizes);
      CheckClose(Values(ops::mul(a, b)), mul_ref, Tol(dt));

      // .out variants write the caller's buffer.
      Tensor out = opreg::empty(sizes, dt);
      Tensor& r = ops::mul_out(a, b, out);
      CHECK(&r == &out);
      CheckClose(Values(out), mul_ref, Tol(dt));
      Tensor out2 = opreg::empty(sizes, dt);
      ops::add_out(a, b, 1, out2);
      CheckClose(Values(out2), add_ref, Tol(dt));
    }
  }
}

TEST_CASE("add and mul read strided inputs through their strides", "[ops][add]") {
  for (DType dt : kDTypes) {
    const Tensor base = Rand({6, 10}, dt, 7);
    // A column slice (non-contiguous rows) and a transposed view.
    const Tensor a = base.narrow(1, 1, 5);
    const Tensor bt = Rand({5, 6}, dt, 8).as_strided({6, 5}, {1, 6}, 0);
    REQUIRE_FALSE(a.is_contiguous());
    REQUIRE_FALSE(bt.is_contiguous());
    std::vector<int64_t> sizes;
    const auto ref = BroadcastRef(
        a, bt, [](double x, double y) { return x * y; }, &sizes);
    CheckClose(Values(ops::mul(a, bt)), ref, Tol(dt));
    const auto ref2 = BroadcastRef(
        a, bt, [](double x, double y) { return x + 3 * y; }, &sizes);
    CheckClose(Values(ops::add(a, bt, 3)), ref2, Tol(dt), 3.0);
    // Inputs are not touched.
    CHECK(Values(base) == Values(Rand({6, 10}, dt, 7)));
  }
}

TEST_CASE("split_add returns (x + y, x - y) in two fresh buffers", "[ops][split_add]") {
  for (DType dt : kDTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{1}, {13}, {3, 17}, {301, 257}}) {
      const Tensor x = Rand(shape, dt, 3), y = Rand(shape, dt, 4);
      const auto vx = Values(x), vy = Values(y);
      std::vector<double> s(vx.size()), d(vx.size());
      for (size_t i = 0; i < vx.size(); ++i) {
        s[i] = vx[i] + vy[i];
        d[i] = vx[i] - vy[i];
      }
      auto [sum, diff] = ops::split_add(x, y);
      CHECK_FALSE(sum.is_alias_of(diff));
      CheckClose(Values(sum), s, Tol(dt));
      CheckClose(Values(diff), d, Tol(dt));
      CHECK(Values(x) == vx);
      Tensor o0 = opreg::empty(shape, dt), o1 = opreg::empty(shape, dt);
      auto [r0, r1] = ops::split_add_out(x, y, o0, o1);
      CHECK(&r0 == &o0);
      CHECK(&r1 == &o1);
      CheckClose(Values(o0), s, Tol(dt));
      CheckClose(Values(o1), d, Tol(dt));
    }
  }
  // A strided y is made contiguous first.
  const Tensor x = Rand({4, 3}, DType::kFloat32, 1);
  const Tensor y = Rand({3, 4}, DType::kFloat32, 2).as_strided({4, 3}, {1, 4}, 0);
  auto [s, d] = ops::split_add(x, y);
  CHECK(s.at({3, 1}) == Approx(x.at({3, 1}) + y.at({3, 1})));
  CHECK(d.at({2, 2}) == Approx(x.at({2, 2}) - y.at({2, 2})));
}

// Every 16-bit pattern (NaNs with payloads, subnormals, infinities, signed zeros) through add, mul
// and split_add, against one float operation and the scalar conversion in the test, bit for bit
// (NaN signs aside):
// the vector paths (AVX-512 and the portable loops, see the _portable ctest runs) must round and
// canonicalize NaNs exactly as Half / BFloat16 do.
template <class T>
void CheckAllPatterns(DType dt) {
  constexpr int64_t kN = 65536;
  Tensor a = opreg::empty({kN}, dt), b = opreg::empty({kN}, dt);
  auto* pa = static_cast<uint16_t*>(a.data_ptr());
  auto* pb = static_cast<uint16_t*>(b.data_ptr());
  for (int64_t i = 0; i < kN; ++i) {
    pa[i] = static_cast<uint16_t>(i);
    pb[i] = static_cast<uint16_t>((i * 40503) ^ 0x5a5a);  // every pattern again, shuffled
  }
  auto value = [](uint16_t bits) { return static_cast<float>(T(bits, opreg::kFromBits)); };
  const Tensor sum = ops::add(a, b), prod = ops::mul(a, b);
  auto [s2, d2] = ops::split_add(a, b);
  const auto* ps = static_cast<const uint16_t*>(sum.data_ptr());
  const auto* pp = static_cast<const uint16_t*>(prod.data_ptr());
  const auto* ps2 = static_cast<const uint16_t*>(s2.data_ptr());
  const auto* pd2 = static_cast<const uint16_t*>(d2.data_ptr());
  // Which NaN operand an operation returns (and so the sign of a NaN result) is the compiler's
  // choice, as it may swap the operands of + and *: NaN results must be the canonical quiet NaN
  // (what T::FromFloat makes of any NaN) of either sign.
  const uint16_t nan_bits = T::FromFloat(std::numeric_limits<float>::quiet_NaN()) & 0x7fff;
  auto same = [&](uint16_t got, uint16_t want) {
    return (want & 0x7fff) == nan_bits ? (got & 0x7fff) == nan_bits : got == want;
  };
  int64_t bad = 0;
  for (int64_t i = 0; i < kN; ++i) {
    const float x = value(pa[i]), y = value(pb[i]);
    const uint16_t s = T::FromFloat(x + y), p = T::FromFloat(x * y), d = T::FromFloat(x - y);
    if (!same(ps[i], s) || !same(pp[i], p) || !same(ps2[i], s) || !same(pd2[i], d)) {
      if (++bad <= 5) {
        UNSCOPED_INFO(opreg::DTypeName(dt)
                      << " a=" << pa[i] << " b=" << pb[i] << ": add " << ps[i] << " vs " << s
                      << ", mul " << pp[i] << " vs " << p << ", split " << ps2[i] << "/" << pd2[i]
                      << " vs " << s << "/" << d);
      }
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("16-bit elementwise results round every input pattern like Half and BFloat16",
          "[ops][add][split_add]") {
  CheckAllPatterns<opreg::Half>(DType::kFloat16);
  CheckAllPatterns<opreg::BFloat16>(DType::kBFloat16);
}

TEST_CASE("elementwise ops refuse bad arguments with precise messages", "[ops][errors]") {
  const Tensor f = Rand({4, 3}, DType::kFloat32, 1);
  const Tensor h = Rand({4, 3}, DType::kFloat16, 2);
  const Tensor i = opreg::zeros({4, 3}, DType::kInt32);
  CHECK_THROWS_WITH(ops::add(f, h),
                    "[opreg::add] argument 'other' (#1): expected dtype f32, got f16");
  CHECK_THROWS_WITH(ops::mul(i, i),
                    "[opreg::mul] argument 'self' (#0): expected dtype f32, f16 or bf16, got i32");
  CHECK_THROWS_WITH(ops::add(f, Rand({2}, DType::kFloat32, 3)),
                    "[opreg::add] argument 'other' (#1): expected a shape broadcastable with "
                    "[4, 3] (argument 'self' (#0)), got [2]");
  CHECK_THROWS_WITH(ops::split_add(f, Rand({3, 4}, DType::kFloat32, 3)),
                    "[opreg::split_add] argument 'y' (#1): expected shape [4, 3] (that of "
                    "argument 'x' (#0)), got [3, 4]");
  CHECK_THROWS_AS(ops::add(f, h), opreg::Error);
  try {
    ops::add(f, h);
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kType);
  }

  // Outs: shape, dtype, device, layout.
  Tensor wrong_shape = opreg::empty({3, 4}, DType::kFloat32);
  CHECK_THROWS_WITH(ops::add_out(f, f, 1, wrong_shape),
                    "[opreg::add.out] argument 'out' (#3): expected shape [4, 3], got [3, 4]");
  Tensor wrong_dtype = opreg::empty({4, 3}, DType::kBFloat16);
  CHECK_THROWS_WITH(ops::mul_out(f, f, wrong_dtype),
                    "[opreg::mul.out] argument 'out' (#2): expected dtype f32, got bf16");
  // A strided out is written (through a contiguous temporary on the CPU), as torch's outs are;
  // an expanded one (stride 0) would write one element many times: refused.
  Tensor strided = opreg::empty({3, 4}, DType::kFloat32).as_strided({4, 3}, {1, 4}, 0);
  ops::mul_out(f, f, strided);
  CHECK(Values(strided) == Values(ops::mul(f, f)));
  Tensor expanded = opreg::empty({1, 3}, DType::kFloat32).as_strided({4, 3}, {0, 1}, 0);
  CHECK_THROWS_WITH(ops::mul_out(f, f, expanded),
                    "[opreg::mul.out] argument 'out' (#2): expected a tensor whose elements do "
                    "not overlap, got stride 0 in dim 0 (an expanded tensor)");
  Tensor meta_out = opreg::empty({4, 3}, DType::kFloat32, Device::meta());
  CHECK_THROWS_WITH(
      ops::add_out(f, f, 1, meta_out),
      "[opreg::add.out] expected all tensor arguments on one device, but argument 'self' "
      "(#0) is on cpu and argument 'out' (#3) on meta");
  // A meta tensor where a CPU one is expected.
  const Tensor m = opreg::empty({4, 3}, DType::kFloat32, Device::meta());
  CHECK_THROWS_WITH(
      ops::add(f, m),
      "[opreg::add] expected all tensor arguments on one device, but argument 'self' (#0) "
      "is on cpu and argument 'other' (#1) on meta");

  // Aliasing outs.
  Tensor x = Rand({4, 3}, DType::kFloat32, 5);
  CHECK_THROWS_WITH(ops::add_out(x, f, 1, x),
                    "[opreg::add.out] argument 'out' (#3): expected a tensor that does not "
                    "overlap argument 'self' (#0), got one that shares its memory");
  Tensor big = opreg::empty({2, 4, 3}, DType::kFloat32);
  Tensor first = big.select(0, 0), second = big.select(0, 1);
  first.copy_(f);
  // Disjoint halves of one storage are fine; overlapping ones are not.
  ops::mul_out(first, f, second);
  CHECK(second.at({1, 2}) == Approx(f.at({1, 2}) * f.at({1, 2})));
  Tensor o = opreg::empty({4, 3}, DType::kFloat32);
  CHECK_THROWS_WITH(ops::split_add_out(f, f, o, o),
                    "[opreg::split_add.out] argument 'out1' (#3): expected a tensor that does "
                    "not overlap argument 'out0' (#2), got one that shares its memory");
  CHECK(Values(f) == Values(Rand({4, 3}, DType::kFloat32, 1)));  // nothing written
}

TEST_CASE("meta calls compute shapes without data", "[ops][meta]") {
  const Tensor a = opreg::empty({4, 1, 3}, DType::kBFloat16, Device::meta());
  const Tensor b = opreg::empty({5, 1}, DType::kBFloat16, Device::meta());
  Tensor y = ops::add(a, b);
  CHECK(y.is_meta());
  CHECK(y.sizes() == opreg::IntArrayRef{4, 5, 3});
  auto [s, d] = ops::split_add(a, a);
  CHECK(d.sizes() == a.sizes());
  Tensor out = opreg::empty({4, 5, 3}, DType::kBFloat16, Device::meta());
  CHECK(&ops::mul_out(a, b, out) == &out);
}

}  // namespace

namespace {

// The address of every byte an element of `t` covers.
std::vector<int64_t> BytesOf(const Tensor& t) {
  std::vector<int64_t> bytes;
  const int64_t item = static_cast<int64_t>(t.itemsize());
  const auto first = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data_ptr()));
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  for (int64_t n = 0; n < t.numel(); ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < t.dim(); ++d) offset += index[static_cast<size_t>(d)] * t.stride(d);
    for (int64_t b = 0; b < item; ++b) bytes.push_back(first + offset * item + b);
    for (int64_t d = t.dim() - 1; d >= 0; --d) {  // next index, last dim fastest
      if (++index[static_cast<size_t>(d)] < t.size(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  std::sort(bytes.begin(), bytes.end());
  return bytes;
}

bool ShareAByte(const Tensor& a, const Tensor& b) {
  const std::vector<int64_t> x = BytesOf(a), y = BytesOf(b);
  std::vector<int64_t> both;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
  return !both.empty();
}

}  // namespace

TEST_CASE("overlap is decided element by element, not by the span of the bytes", "[ops][errors]") {
  // The q and k columns of one fused qkv buffer: their spans interleave, no element is shared.
  Tensor qkv = Rand({4, 24}, DType::kFloat32, 1);
  const Tensor q = qkv.narrow(1, 0, 8), k = qkv.narrow(1, 8, 8);
  Tensor v = qkv.narrow(1, 16, 8);
  CHECK_FALSE(ops::MemoryOverlaps(q, k));
  CHECK_FALSE(ops::MemoryOverlaps(q, v));
  CHECK(ops::MemoryOverlaps(q, qkv.narrow(1, 4, 8)));  // shifted by half a slice: shared
  // Interleaved even and odd elements; a transposed view of the same bytes.
  Tensor buf = Rand({32}, DType::kFloat32, 2);
  const Tensor even = buf.as_strided({16}, {2}, 0), odd = buf.as_strided({16}, {2}, 1);
  CHECK_FALSE(ops::MemoryOverlaps(even, odd));
  CHECK(ops::MemoryOverlaps(buf.as_strided({4, 8}, {8, 1}, 0), buf.as_strided({8, 4}, {1, 8}, 0)));
  // As many rows as a long prefill: the answer stays exact (no search budget runs out).
  const Tensor big = opreg::empty({100000, 24}, DType::kFloat32);
  CHECK_FALSE(ops::MemoryOverlaps(big.narrow(1, 0, 8), big.narrow(1, 8, 8)));
  CHECK(ops::MemoryOverlaps(big.narrow(1, 0, 8), big.narrow(1, 4, 8)));
  const Tensor flat = big.view({-1});
  CHECK_FALSE(ops::MemoryOverlaps(flat.as_strided({1200000}, {2}, 0),
                                  flat.as_strided({1200000}, {2}, 1)));

  // The writes the byte-span test refused now run, and only the written slice changes.
  const auto before = Values(qkv);
  ops::mul_out(q, k, v);
  const auto after = Values(qkv);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 24; ++c) {
      const double was = before[static_cast<size_t>(r * 24 + c)];
      const double now = after[static_cast<size_t>(r * 24 + c)];
      if (c < 16) {
        CHECK(now == was);
      } else {
        CHECK(now == Approx(before[static_cast<size_t>(r * 24 + c - 16)] *
                            before[static_cast<size_t>(r * 24 + c - 8)]));
      }
    }
  }
  Tensor shifted = qkv.narrow(1, 4, 8);
  CHECK_THROWS_WITH(ops::mul_out(q, k, shifted),
                    "[opreg::mul.out] argument 'out' (#2): expected a tensor that does not "
                    "overlap argument 'self' (#0), got one that shares its memory");
}

TEST_CASE("MemoryOverlaps agrees with enumerating the bytes of random views of one buffer",
          "[ops]") {
  // Views of 1-3 dims with strides 1..12 and offsets 0..20 over one 512-element f32 buffer,
  // against views of the same buffer, or of its bytes as 1024 f16 elements through a second
  // storage (elements of two sizes, compared by address).
  Tensor buf = opreg::empty({512}, DType::kFloat32);
  uint64_t state = 12345;
  auto next = [&](int64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
  };
  auto random_view = [&](const Tensor& base) {
    const int64_t dims = 1 + next(3);
    std::vector<int64_t> sizes, strides;
    for (int64_t d = 0; d < dims; ++d) {
      sizes.push_back(1 + next(5));
      strides.push_back(1 + next(12));
    }
    return base.as_strided(sizes, strides, next(21));
  };
  Tensor buf16 = opreg::from_blob(buf.data_ptr(), {1024}, DType::kFloat16);
  int agreed = 0, overlapping = 0;
  for (int i = 0; i < 3000; ++i) {
    const Tensor a = random_view(buf);
    const Tensor b = random_view(i % 2 == 0 ? buf : buf16);
    const bool expected = ShareAByte(a, b);
    INFO("a " << ops::ShapeString(a.sizes()) << ops::ShapeString(a.strides()) << "+"
              << a.storage_offset() << " b " << ops::ShapeString(b.sizes())
              << ops::ShapeString(b.strides()) << "+" << b.storage_offset());
    CHECK(ops::MemoryOverlaps(a, b) == expected);
    agreed += 1;
    overlapping += expected ? 1 : 0;
  }
  CHECK(agreed == 3000);
  CHECK(overlapping > 300);  // both answers are exercised
  CHECK(overlapping < 2700);
}
