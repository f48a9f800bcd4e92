// Large outputs: the CPU kernels write outputs of kStreamBytes (8 MiB) or more with streaming
// (non-temporal) stores through a buffer, a path small tensors never take. Every op that has it
// must give bitwise the same result as the same inputs computed in pieces below the threshold
// (narrowed views of the same tensors: each piece takes the cached-store path). Odd lengths and
// a hidden size that is not a multiple of any vector width exercise the unaligned edges.
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>

#include "ops_test_util.h"

namespace {

using opreg::DType;
using opreg::Tensor;
using opreg_test::Name;
using opreg_test::Rand;

const DType kFloatDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0;
}

// Runs fn(lo, n) over [0, total) in pieces of `piece`.
void InPieces(int64_t total, int64_t piece, const std::function<void(int64_t, int64_t)>& fn) {
  for (int64_t lo = 0; lo < total; lo += piece) fn(lo, std::min(piece, total - lo));
}

constexpr int64_t kBigBytes = int64_t{9} << 20;  // above the 8 MiB threshold for every dtype

TEST_CASE("large add / mul / split_add equal the same ops computed in pieces", "[ops][large]") {
  for (DType dt : kFloatDTypes) {
    DYNAMIC_SECTION(Name(dt)) {
      const int64_t n = kBigBytes / static_cast<int64_t>(opreg::ItemSize(dt)) + 3;  // odd tail
      Tensor a = Rand({n}, dt, 1), b = Rand({n}, dt, 2);
      Tensor big_add = opreg::ops::add(a, b, 0.5), big_mul = opreg::ops::mul(a, b);
      auto [big_s, big_d] = opreg::ops::split_add(a, b);
      Tensor add = opreg::empty({n}, dt), mul = opreg::empty({n}, dt);
      Tensor s = opreg::empty({n}, dt), d = opreg::empty({n}, dt);
      InPieces(n, n / 16 + 1, [&](int64_t lo, int64_t len) {
        Tensor al = a.narrow(0, lo, len), bl = b.narrow(0, lo, len);
        Tensor o1 = add.narrow(0, lo, len), o2 = mul.narrow(0, lo, len);
        Tensor o3 = s.narrow(0, lo, len), o4 = d.narrow(0, lo, len);
        opreg::ops::add_out(al, bl, 0.5, o1);
        opreg::ops::mul_out(al, bl, o2);
        opreg::ops::split_add_out(al, bl, o3, o4);
      });
      CHECK(SameBytes(big_add, add));
      CHECK(SameBytes(big_mul, mul));
      CHECK(SameBytes(big_s, s));
      CHECK(SameBytes(big_d, d));
    }
  }
}

TEST_CASE("large row ops equal the same ops computed in pieces of rows", "[ops][large]") {
  const int64_t hidden = 4099;
  for (DType dt : kFloatDTypes) {
    DYNAMIC_SECTION(Name(dt)) {
      const int64_t rows = kBigBytes / (hidden * 2) + 1;  // >= 9 MiB of 16-bit output
      const int64_t piece = 64;
      Tensor x = Rand({rows, hidden}, dt, 3);
      Tensor x2 = Rand({rows, 2 * hidden}, dt, 4);
      Tensor w = Rand({hidden}, dt, 5, 0.5, 1.5);
      Tensor big_norm = opreg::ops::rms_norm(x, w, 1e-6);
      Tensor big_silu = opreg::ops::silu_and_mul(x2);
      Tensor big_soft = opreg::ops::softmax(x, -1);
      Tensor norm = opreg::empty({rows, hidden}, dt), silu = opreg::empty({rows, hidden}, dt);
      Tensor soft = opreg::empty({rows, hidden}, dt);
      InPieces(rows, piece, [&](int64_t lo, int64_t len) {
        Tensor o1 = norm.narrow(0, lo, len), o2 = silu.narrow(0, lo, len);
        Tensor o3 = soft.narrow(0, lo, len);
        opreg::ops::rms_norm_out(x.narrow(0, lo, len), w, 1e-6, o1);
        opreg::ops::silu_and_mul_out(x2.narrow(0, lo, len), o2);
        opreg::ops::softmax_out(x.narrow(0, lo, len), -1, o3);
      });
      CHECK(SameBytes(big_norm, norm));
      CHECK(SameBytes(big_silu, silu));
      CHECK(SameBytes(big_soft, soft));
    }
  }
}

TEST_CASE("large per_token_quant equals the same op computed in pieces of rows", "[ops][large]") {
  const int64_t hidden = 4099;
  const int64_t rows = kBigBytes / hidden + 1;  // >= 9 MiB of 1-byte output
  for (DType qt : {DType::kInt8, DType::kFloat8E4M3FN}) {
    for (DType dt : kFloatDTypes) {
      DYNAMIC_SECTION(Name(dt) << " -> " << Name(qt)) {
        Tensor x = Rand({rows, hidden}, dt, 6);
        auto [big_q, big_scale] = opreg::ops::per_token_quant(x, qt);
        Tensor q = opreg::empty({rows, hidden}, qt),
               scale = opreg::empty({rows, 1}, DType::kFloat32);
        InPieces(rows, 256, [&](int64_t lo, int64_t len) {
          Tensor ql = q.narrow(0, lo, len), sl = scale.narrow(0, lo, len);
          opreg::ops::per_token_quant_out(x.narrow(0, lo, len), qt, ql, sl);
        });
        CHECK(SameBytes(big_q, q));
        CHECK(SameBytes(big_scale, scale));
      }
    }
  }
}

}  // namespace
