// The search: an element of `a` at index i and one of `b` at index j share a byte when
//   sum_k i_k * A_k + p  ==  delta + sum_k j_k * B_k + q,   0 <= p < a.item, 0 <= q < b.item,
// a bounded integer equation in the indices (A, B: byte strides). Comparing the byte ranges
// the two views span, as a first test, refuses views that interleave without sharing an
// element (q and k columns of one fused qkv buffer), which torch and vLLM kernels accept; this
// answers exactly instead, by a depth-first search over the variables, largest coefficient
// first, that prunes every branch whose remaining sum cannot reach what is left.
#include "memory_overlap.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace opreg::ops::internal {
namespace {

struct Variable {
  int64_t coef;   // bytes per step of the index (any sign)
  int64_t count;  // the index runs over [0, count)
};

class Search {
 public:
  Search(std::vector<Variable> vars, int64_t max_steps)
      : vars_(std::move(vars)), steps_left_(max_steps) {
    std::sort(vars_.begin(), vars_.end(), [](const Variable& x, const Variable& y) {
      return std::llabs(x.coef) > std::llabs(y.coef);
    });
    const size_t n = vars_.size();
    lo_.assign(n + 1, 0);
    hi_.assign(n + 1, 0);
    unit_from_.assign(n + 1, true);
    for (size_t k = n; k-- > 0;) {
      const int64_t reach = vars_[k].coef * (vars_[k].count - 1);
      lo_[k] = lo_[k + 1] + std::min<int64_t>(0, reach);
      hi_[k] = hi_[k + 1] + std::max<int64_t>(0, reach);
      unit_from_[k] = unit_from_[k + 1] && std::llabs(vars_[k].coef) == 1;
    }
  }

  // Whether sum_{v >= k} coef_v * x_v == r has a solution; true also when out of steps.
  bool Solvable(size_t k, int64_t r) {
    if (r < lo_[k] || r > hi_[k]) return false;
    // Unit coefficients from here on reach every value between their extremes.
    if (unit_from_[k]) return true;
    if (--steps_left_ < 0) return true;  // too many branches: assume the worst
    const Variable& v = vars_[k];
    // x such that r - coef * x stays within what the later variables can reach.
    int64_t x_min, x_max;
    if (v.coef > 0) {
      x_min = CeilDiv(r - hi_[k + 1], v.coef);
      x_max = FloorDiv(r - lo_[k + 1], v.coef);
    } else {
      x_min = CeilDiv(r - lo_[k + 1], v.coef);
      x_max = FloorDiv(r - hi_[k + 1], v.coef);
    }
    x_min = std::max<int64_t>(x_min, 0);
    x_max = std::min<int64_t>(x_max, v.count - 1);
    for (int64_t x = x_min; x <= x_max; ++x) {
      if (Solvable(k + 1, r - v.coef * x)) return true;
    }
    return false;
  }

 private:
  static int64_t FloorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
  static int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

  std::vector<Variable> vars_;
  std::vector<int64_t> lo_, hi_;  // extremes of sum_{v >= k} coef_v * x_v
  std::vector<bool> unit_from_;   // every coefficient from k on is +-1
  int64_t steps_left_;
};

void AddDims(const ByteView& view, int64_t sign, std::vector<Variable>* vars) {
  for (size_t d = 0; d < view.sizes.size(); ++d) {
    if (view.sizes[d] > 1 && view.byte_strides[d] != 0) {
      vars->push_back({sign * view.byte_strides[d], view.sizes[d]});
    }
  }
  vars->push_back({sign, view.item_bytes});  // the byte within the element
}

}  // namespace

bool ViewsShareAByte(const ByteView& a, const ByteView& b, int64_t delta, int64_t max_steps) {
  std::vector<Variable> vars;
  vars.reserve(a.sizes.size() + b.sizes.size() + 2);
  AddDims(a, 1, &vars);
  AddDims(b, -1, &vars);
  return Search(std::move(vars), max_steps).Solvable(0, delta);
}

}  // namespace opreg::ops::internal
