// The search: an element of `a` at index i and one of `b` at index j share a byte when
//   sum_k i_k * A_k + p  ==  delta + sum_k j_k * B_k + q,   0 <= p < a.item, 0 <= q < b.item,
// a bounded integer equation in the indices (A, B: byte strides). Comparing the byte ranges
// the two views span, as a first test, refuses views that interleave without sharing an
// element (q and k columns of one fused qkv buffer), which torch and vLLM kernels accept; this
// answers exactly instead. Terms with the same stride magnitude are merged first: a sum of
// integers each in an interval takes every value of the summed interval, so i_k * A - j_k * A is
// one variable over [-(n_b - 1), n_a - 1] (the views of one buffer share their strides, and the
// merge makes their search as short as their rank). Then a depth-first search over the merged
// variables, largest stride first, prunes every branch whose remaining terms cannot reach what
// is left.
#include "memory_overlap.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace opreg::ops::internal {
namespace {

// Inline room for two views of up to 7 dims (each dim a term, plus the byte within the
// element): the built-in ops run this on every call whose out shares a buffer with an input
// (a slice of a fused qkv), so it stays off the heap there.
template <class T>
using Terms = absl::InlinedVector<T, 16>;

struct Variable {
  int64_t coef;  // bytes per step of the value (positive)
  int64_t lo;    // the value runs over [lo, hi]
  int64_t hi;
};

class Search {
 public:
  Search(Terms<Variable> vars, int64_t max_steps) : vars_(std::move(vars)), steps_left_(max_steps) {
    std::sort(vars_.begin(), vars_.end(),
              [](const Variable& x, const Variable& y) { return x.coef > y.coef; });
    const size_t n = vars_.size();
    lo_.assign(n + 1, 0);
    hi_.assign(n + 1, 0);
    unit_from_.assign(n + 1, true);
    for (size_t k = n; k-- > 0;) {
      const Variable& v = vars_[k];
      int64_t low = 0, high = 0;
      overflow_ = overflow_ || __builtin_mul_overflow(v.coef, v.lo, &low) ||
                  __builtin_mul_overflow(v.coef, v.hi, &high) ||
                  __builtin_add_overflow(lo_[k + 1], low, &lo_[k]) ||
                  __builtin_add_overflow(hi_[k + 1], high, &hi_[k]);
      unit_from_[k] = unit_from_[k + 1] && v.coef == 1;
    }
  }

  // Whether sum_{v >= k} coef_v * x_v == r has a solution; true also when out of steps, or
  // when the sums do not fit in 64 bits (no real tensor's do).
  bool Solvable(size_t k, int64_t r) {
    if (overflow_) return true;
    if (r < lo_[k] || r > hi_[k]) return false;
    // Unit coefficients from here on reach every value between their extremes.
    if (unit_from_[k]) return true;
    if (--steps_left_ < 0) return true;  // too many branches: assume the worst
    const Variable& v = vars_[k];
    // x such that r - coef * x stays within what the later variables can reach.
    const int64_t x_min = std::max(v.lo, CeilDiv(r - hi_[k + 1], v.coef));
    const int64_t x_max = std::min(v.hi, FloorDiv(r - lo_[k + 1], v.coef));
    for (int64_t x = x_min; x <= x_max; ++x) {
      if (Solvable(k + 1, r - v.coef * x)) return true;
    }
    return false;
  }

 private:
  static int64_t FloorDiv(int64_t a, int64_t b) {  // b > 0
    int64_t q = a / b;
    if (a % b != 0 && a < 0) --q;
    return q;
  }
  static int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

  Terms<Variable> vars_;
  Terms<int64_t> lo_, hi_;  // extremes of sum_{v >= k} coef_v * x_v
  Terms<bool> unit_from_;   // every coefficient from k on is 1
  int64_t steps_left_;
  bool overflow_ = false;
};

// Adds `sign` * (the index of each dim of `view`, in bytes) and the byte within its element,
// merged into the variable of the same stride magnitude if there is one.
void AddView(const ByteView& view, int64_t sign, Terms<Variable>* vars) {
  auto add = [&](int64_t stride, int64_t count) {
    const int64_t s = sign * stride;  // x * s = (x * sgn(s)) * |s|
    const int64_t coef = s < 0 ? -s : s;
    const int64_t lo = s < 0 ? -(count - 1) : 0, hi = s < 0 ? 0 : count - 1;
    for (Variable& v : *vars) {
      if (v.coef == coef) {
        v.lo += lo;
        v.hi += hi;
        return;
      }
    }
    vars->push_back({coef, lo, hi});
  };
  for (size_t d = 0; d < view.sizes.size(); ++d) {
    if (view.sizes[d] > 1 && view.byte_strides[d] != 0) add(view.byte_strides[d], view.sizes[d]);
  }
  add(1, view.item_bytes);  // the byte within the element
}

}  // namespace

bool ViewsShareAByte(const ByteView& a, const ByteView& b, int64_t delta, int64_t max_steps) {
  Terms<Variable> vars;
  vars.reserve(a.sizes.size() + b.sizes.size() + 2);
  AddView(a, 1, &vars);
  AddView(b, -1, &vars);
  return Search(std::move(vars), max_steps).Solvable(0, delta);
}

}  // namespace opreg::ops::internal
