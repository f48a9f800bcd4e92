// The at:: ops past whole-tensor glue that kernel libraries call (directly, or through torch's
// stable ABI: torch_stable's aten table runs these): broadcasting binary ops (sub, bitwise,
// shifts, floor_divide), amax over dims, index_select, matmul and sort. Like tensor_math.cc they
// run on the host, on CUDA tensors through host copies; values are computed in double for
// floating types and in int64 for integral ones (exact for every integral dtype opreg has but
// uint64 above 2^63), then converted to the result dtype. Each follows libtorch's semantics and
// its error messages: type promotion, broadcasting, NaN handling, shift and division rules.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <vector>

#include "host_staging.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/torch_compat/tensor.h"
#include "wrap_dim.h"

namespace at {
namespace {

using ::opreg::DType;

// t's values as a contiguous CPU tensor of `dtype` (float64 or int64), converted.
::opreg::Tensor HostValues(const Tensor& t, DType dtype) {
  ::opreg::Tensor out = ::opreg::empty(t.sizes(), dtype);
  if (out.numel() > 0) detail::StageCopy(out, t.opreg());
  return out;
}

// Writes host `values` (float64 or int64, out's sizes) into `out` (any dtype, device).
void Store(const Tensor& out, const ::opreg::Tensor& values) {
  if (out.numel() > 0 && !out.is_meta()) detail::StageCopy(out.opreg(), values);
}

bool Integral(ScalarType t) { return isIntegralType(t, /*include_bool=*/true); }

// The broadcast of two shapes (numpy's rule), or libtorch's error naming the dimension.
std::vector<int64_t> BroadcastSizes(IntArrayRef a, IntArrayRef b) {
  const int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  const int64_t n = std::max(na, nb);
  std::vector<int64_t> shape(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t da = i - (n - na), db = i - (n - nb);
    const int64_t sa = da >= 0 ? a[da] : 1, sb = db >= 0 ? b[db] : 1;
    TORCH_CHECK(sa == sb || sa == 1 || sb == 1, "The size of tensor a (", sa,
                ") must match the size of tensor b (", sb, ") at non-singleton dimension ", i);
    shape[i] = sa == 1 ? sb : sa;
  }
  return shape;
}

std::vector<int64_t> BroadcastShape(const Tensor& a, const Tensor& b) {
  return BroadcastSizes(a.sizes(), b.sizes());
}

// a (op) b with broadcasting, the result of dtype `result`; `integral` picks int64 arithmetic.
template <class IntOp, class FloatOp>
Tensor Binary(const Tensor& a, const Tensor& b, ScalarType result, IntOp int_op, FloatOp float_op) {
  TORCH_CHECK(a.device() == b.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              a.device(), " and ", b.device(), "!");
  const std::vector<int64_t> shape = BroadcastShape(a, b);
  Tensor out = empty(shape, a.options().dtype(result));
  if (out.is_meta() || out.numel() == 0) return out;
  const bool integral = Integral(a.scalar_type()) && Integral(b.scalar_type());
  const DType work = integral ? DType::kInt64 : DType::kFloat64;
  ::opreg::Tensor va = HostValues(a.expand(shape).contiguous(), work);
  ::opreg::Tensor vb = HostValues(b.expand(shape).contiguous(), work);
  ::opreg::Tensor r = ::opreg::empty(shape, work);
  const int64_t n = r.numel();
  if (integral) {
    const int64_t *pa = va.data_ptr<int64_t>(), *pb = vb.data_ptr<int64_t>();
    int64_t* pr = r.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) pr[i] = int_op(pa[i], pb[i]);
  } else {
    const double *pa = va.data_ptr<double>(), *pb = vb.data_ptr<double>();
    double* pr = r.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) pr[i] = float_op(pa[i], pb[i]);
  }
  Store(out, r);
  return out;
}

// x rounded to a floating dtype's precision (as libtorch rounds each step of an elementwise
// op on reduced and single-precision types); double stays as is.
double RoundTo(ScalarType t, double x) {
  switch (t) {
    case ScalarType::Float:
      return static_cast<float>(x);
    case ScalarType::Half:
      return static_cast<float>(Half(static_cast<float>(x)));
    case ScalarType::BFloat16:
      return static_cast<float>(BFloat16(static_cast<float>(x)));
    default:
      return x;
  }
}

// Bits of an integral dtype, and whether it is signed.
int Bits(ScalarType t) { return static_cast<int>(elementSize(t) * 8); }
bool Signed(ScalarType t) {
  return t == ScalarType::Char || t == ScalarType::Short || t == ScalarType::Int ||
         t == ScalarType::Long;
}

// x (an int64 holding a value of dtype t) wrapped to t's range, as the stored result would be.
int64_t WrapTo(int64_t x, ScalarType t) {
  const int bits = Bits(t);
  if (bits >= 64 || t == ScalarType::Bool) return x;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(x) & mask;
  if (Signed(t) && (u >> (bits - 1)) != 0) u |= ~mask;
  return static_cast<int64_t>(u);
}

Tensor BitwiseOp(const Tensor& a, const Tensor& b, const char* name, int which) {
  const ScalarType r = promoteTypes(a.scalar_type(), b.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(Integral(r), "\"", name, "_cpu\" not implemented for '", toString(r),
                              "'");
  auto float_op = [](double, double) { return 0.0; };  // never called: integral only
  switch (which) {
    case 0:
      return Binary(
          a, b, r, [](int64_t x, int64_t y) { return x & y; }, float_op);
    default:
      return Binary(
          a, b, r, [](int64_t x, int64_t y) { return x | y; }, float_op);
  }
}

Tensor ShiftOp(const Tensor& a, const Tensor& b, bool left) {
  const ScalarType r = promoteTypes(a.scalar_type(), b.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(Integral(r) && r != ScalarType::Bool, "\"",
                              left ? "lshift_cpu" : "rshift_cpu", "\" not implemented for '",
                              toString(r), "'");
  const int bits = Bits(r);
  const bool is_signed = Signed(r);
  auto float_op = [](double, double) { return 0.0; };
  if (left) {
    // libtorch: a negative or too large shift gives 0; otherwise the bits shifted out are lost.
    return Binary(
        a, b, r,
        [=](int64_t x, int64_t y) -> int64_t {
          if (y < 0 || y >= bits) return 0;
          return WrapTo(static_cast<int64_t>(static_cast<uint64_t>(x) << y), r);
        },
        float_op);
  }
  // libtorch: a negative or too large shift shifts by the most there is (sign fill for signed).
  const int max_shift = bits - (is_signed ? 1 : 0);
  return Binary(
      a, b, r,
      [=](int64_t x, int64_t y) -> int64_t {
        if (y < 0 || y >= max_shift) return is_signed && x < 0 ? -1 : 0;
        return is_signed ? x >> y : static_cast<int64_t>(static_cast<uint64_t>(x) >> y);
      },
      float_op);
}

// Python's a // b for doubles, as libtorch's div_floor_floating computes it.
double FloorDivide(double a, double b) {
  if (b == 0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

// The odometer walk of sum() in tensor_math.cc, for amax: out index of each input element.
std::vector<bool> ReducedDims(const Tensor& t, IntArrayRef dim, const char* name) {
  const int64_t n = t.dim();
  std::vector<bool> reduced(n, dim.empty());
  for (int64_t d : dim) {
    const int64_t w = detail::WrapDim(d, n, name);
    if (n == 0) continue;
    TORCH_CHECK(!reduced[w], "dim ", w, " appears multiple times in the list of dims");
    reduced[w] = true;
  }
  return reduced;
}

}  // namespace

Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      self.scalar_type() != ScalarType::Bool || other.scalar_type() != ScalarType::Bool,
      "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
      "`^` or `logical_xor()` operator instead.");
  TORCH_CHECK_NOT_IMPLEMENTED(
      self.scalar_type() != ScalarType::Bool && other.scalar_type() != ScalarType::Bool,
      "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
      "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  const ScalarType r = promoteTypes(self.scalar_type(), other.scalar_type());
  TORCH_CHECK(!Integral(r) || !alpha.isFloatingPoint(),
              "For integral input tensors, argument alpha must not be a floating point number.");
  const int64_t ia = Integral(r) ? alpha.toInt() : 0;
  const double fa = alpha.toDouble();
  return Binary(
      self, other, r,
      [=](int64_t x, int64_t y) {
        return static_cast<int64_t>(static_cast<uint64_t>(x) -
                                    static_cast<uint64_t>(y) * static_cast<uint64_t>(ia));
      },
      // libtorch rounds alpha * other to the result's precision before subtracting.
      [=](double x, double y) { return x - (fa == 1 ? y : RoundTo(r, fa * y)); });
}

Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return sub(self, other, alpha);
}

Tensor bitwise_and(const Tensor& self, const Tensor& other) {
  return BitwiseOp(self, other, "bitwise_and", 0);
}
Tensor bitwise_or(const Tensor& self, const Tensor& other) {
  return BitwiseOp(self, other, "bitwise_or", 1);
}
Tensor bitwise_left_shift(const Tensor& self, const Tensor& other) {
  return ShiftOp(self, other, /*left=*/true);
}
Tensor bitwise_right_shift(const Tensor& self, const Tensor& other) {
  return ShiftOp(self, other, /*left=*/false);
}

Tensor floor_divide(const Tensor& self, const Tensor& other) {
  const ScalarType r = promoteTypes(self.scalar_type(), other.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(r != ScalarType::Bool,
                              "\"div_floor_cpu\" not implemented for 'Bool'");
  if (Integral(r) && other.numel() > 0 && !other.is_meta()) {
    const ::opreg::Tensor divisors = HostValues(other, DType::kInt64);
    const int64_t* p = divisors.data_ptr<int64_t>();
    TORCH_CHECK(std::none_of(p, p + divisors.numel(), [](int64_t v) { return v == 0; }),
                "ZeroDivisionError");
  }
  return Binary(
      self, other, r,
      [r](int64_t a, int64_t b) {
        // Python's floor division; INT64_MIN // -1 wraps as in libtorch.
        if (b == -1) return WrapTo(static_cast<int64_t>(0 - static_cast<uint64_t>(a)), r);
        const int64_t q = a / b, m = a % b;
        return (m != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
      },
      FloorDivide);
}

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const int64_t n = self.dim();
  const std::vector<bool> reduced = ReducedDims(self, dim, "amax");
  std::vector<int64_t> kept_shape, out_shape;
  for (int64_t d = 0; d < n; ++d) {
    kept_shape.push_back(reduced[d] ? 1 : self.size(d));
    if (!reduced[d]) out_shape.push_back(self.size(d));
    TORCH_CHECK_INDEX(!reduced[d] || self.size(d) > 0, "amax(): Expected reduction dim ", d,
                      " to have non-zero size.");
  }
  Tensor out = empty(keepdim ? kept_shape : out_shape, self.options());
  if (out.is_meta() || self.numel() == 0) return out;
  std::vector<int64_t> out_strides(n, 0);
  for (int64_t d = n - 1, stride = 1; d >= 0; --d) {
    if (reduced[d]) continue;
    out_strides[d] = stride;
    stride *= self.size(d);
  }
  const bool integral = Integral(self.scalar_type());
  ::opreg::Tensor v = HostValues(self, integral ? DType::kInt64 : DType::kFloat64);
  ::opreg::Tensor acc = ::opreg::empty(out.sizes(), v.dtype());
  std::vector<char> seen(static_cast<size_t>(acc.numel()), 0);
  std::vector<int64_t> index(n, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < v.numel(); ++i) {
    if (integral) {
      int64_t& m = acc.data_ptr<int64_t>()[o];
      const int64_t x = v.data_ptr<int64_t>()[i];
      if (!seen[o] || x > m) m = x;
    } else {
      // NaN wins and stays.
      double& m = acc.data_ptr<double>()[o];
      const double x = v.data_ptr<double>()[i];
      if (!seen[o] || (!std::isnan(m) && (std::isnan(x) || x > m))) m = x;
    }
    seen[o] = 1;
    for (int64_t d = n - 1; d >= 0; --d) {
      o += out_strides[d];
      if (++index[d] < self.size(d)) break;
      o -= out_strides[d] * index[d];
      index[d] = 0;
    }
  }
  Store(out, acc);
  return out;
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == ScalarType::Long || index.scalar_type() == ScalarType::Int,
              "index_select(): Expected dtype int32/int64 for index");
  TORCH_CHECK(self.device() == index.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              self.device(), " and ", index.device(), "!");
  const int64_t n = self.dim();
  const int64_t d = n == 0 ? 0 : detail::WrapDim(dim, n, "index_select");
  const int64_t count = index.numel();
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (n > 0) shape[d] = count;
  Tensor out = empty(shape, self.options());
  if (out.is_meta()) return out;
  const ::opreg::Tensor ids = HostValues(index, DType::kInt64);
  const int64_t len = n == 0 ? 1 : self.size(d);
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = ids.data_ptr<int64_t>()[k];
    TORCH_CHECK_INDEX(i >= 0 && i < len, "index out of range in self");
  }
  if (out.numel() == 0) return out;
  // Byte copies of whole rows: exact for every dtype.
  const ::opreg::Tensor src = detail::OnHost(self.opreg()).contiguous();
  ::opreg::Tensor dst = ::opreg::empty(shape, src.dtype());
  const size_t item = src.itemsize();
  int64_t inner = 1, outer = 1;
  for (int64_t i = d + 1; i < n; ++i) inner *= self.size(i);
  for (int64_t i = 0; i < d; ++i) outer *= self.size(i);
  const auto* from = static_cast<const char*>(src.data_ptr());
  auto* to = static_cast<char*>(dst.data_ptr());
  const size_t row = static_cast<size_t>(inner) * item;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < count; ++k) {
      std::memcpy(to + (o * count + k) * row, from + (o * len + ids.data_ptr<int64_t>()[k]) * row,
                  row);
    }
  }
  detail::StageCopy(out.opreg(), dst);
  return out;
}

Tensor matmul(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.dim() > 0 && other.dim() > 0,
              "both arguments to matmul need to be at least 1D, "
              "but they are ",
              self.dim(), "D and ", other.dim(), "D");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", toString(self.scalar_type()),
              " != ", toString(other.scalar_type()));
  TORCH_CHECK(self.device() == other.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              self.device(), " and ", other.device(), "!");
  // As 2-D batches: a vector is a 1 x k row (left) or a k x 1 column (right), dropped after.
  const bool row = self.dim() == 1, col = other.dim() == 1;
  const Tensor a = row ? self.unsqueeze(0) : self;
  const Tensor b = col ? other.unsqueeze(1) : other;
  const int64_t m = a.size(-2), k = a.size(-1), k2 = b.size(-2), p = b.size(-1);
  TORCH_CHECK(k == k2, "mat1 and mat2 shapes cannot be multiplied (", m, "x", k, " and ", k2, "x",
              p, ")");
  // Broadcast the batch dims.
  const std::vector<int64_t> batch =
      BroadcastSizes(a.sizes().slice(0, a.dim() - 2), b.sizes().slice(0, b.dim() - 2));
  std::vector<int64_t> a_shape(batch), b_shape(batch), out_shape(batch);
  a_shape.insert(a_shape.end(), {m, k});
  b_shape.insert(b_shape.end(), {k, p});
  if (!row) out_shape.push_back(m);
  if (!col) out_shape.push_back(p);
  Tensor out = empty(out_shape, self.options());
  if (out.is_meta() || out.numel() == 0) return out;
  const bool integral = Integral(self.scalar_type());
  const DType work = integral ? DType::kInt64 : DType::kFloat64;
  ::opreg::Tensor va = HostValues(a.expand(a_shape).contiguous(), work);
  ::opreg::Tensor vb = HostValues(b.expand(b_shape).contiguous(), work);
  ::opreg::Tensor r = ::opreg::empty(out_shape, work);
  const int64_t batches = out.numel() / (m * p);
  auto run = [&](auto* pa, auto* pb, auto* pr) {
    using T = std::remove_pointer_t<decltype(pr)>;
    // Integers wrap as libtorch's do: unsigned arithmetic (a signed overflow would be UB).
    using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
    for (int64_t s = 0; s < batches; ++s) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < p; ++j) {
          Acc acc = 0;
          for (int64_t t = 0; t < k; ++t) {
            acc += static_cast<Acc>(pa[(s * m + i) * k + t]) *
                   static_cast<Acc>(pb[(s * k + t) * p + j]);
          }
          pr[(s * m + i) * p + j] = static_cast<T>(acc);
        }
      }
    }
  };
  if (integral) {
    run(va.data_ptr<int64_t>(), vb.data_ptr<int64_t>(), r.data_ptr<int64_t>());
  } else {
    run(va.data_ptr<double>(), vb.data_ptr<double>(), r.data_ptr<double>());
  }
  Store(out, r);
  return out;
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> /*stable*/, int64_t dim,
                                bool descending) {
  const int64_t n = self.dim();
  const int64_t d = n == 0 ? 0 : detail::WrapDim(dim, n, "sort");
  Tensor values = empty(self.sizes(), self.options());
  Tensor indices = empty(self.sizes(), self.options().dtype(ScalarType::Long));
  if (values.is_meta() || self.numel() == 0) return {values, indices};
  const bool integral = Integral(self.scalar_type());
  ::opreg::Tensor v = HostValues(self.contiguous(), integral ? DType::kInt64 : DType::kFloat64);
  ::opreg::Tensor sorted = ::opreg::empty(self.sizes(), v.dtype());
  ::opreg::Tensor order = ::opreg::empty(self.sizes(), DType::kInt64);
  const int64_t len = n == 0 ? 1 : self.size(d);
  int64_t inner = 1;
  for (int64_t i = d + 1; i < n; ++i) inner *= self.size(i);
  const int64_t outer = self.numel() / (len * inner);
  std::vector<int64_t> perm(static_cast<size_t>(len));
  auto sort_lines = [&](auto* in, auto* out) {
    // libtorch: NaN sorts above every number; equal elements keep their order (its CPU sort is
    // stable whatever `stable` says).
    auto less = [](auto x, auto y) {
      if constexpr (std::is_floating_point_v<decltype(x)>) {
        if (std::isnan(x)) return false;
        if (std::isnan(y)) return true;
      }
      return x < y;
    };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
          const auto vx = in[base + x * inner], vy = in[base + y * inner];
          return descending ? less(vy, vx) : less(vx, vy);
        });
        for (int64_t j = 0; j < len; ++j) {
          out[base + j * inner] = in[base + perm[j] * inner];
          order.data_ptr<int64_t>()[base + j * inner] = perm[j];
        }
      }
    }
  };
  if (integral) {
    sort_lines(v.data_ptr<int64_t>(), sorted.data_ptr<int64_t>());
  } else {
    sort_lines(v.data_ptr<double>(), sorted.data_ptr<double>());
  }
  Store(values, sorted);
  Store(indices, order);
  return {values, indices};
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return sort(self, std::nullopt, dim, descending);
}

}  // namespace at

namespace at {

Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const { return at::amax(*this, dim, keepdim); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  return at::sub(*this, other, alpha);
}
Tensor Tensor::subtract(const Tensor& other, const Scalar& alpha) const {
  return at::sub(*this, other, alpha);
}
Tensor Tensor::bitwise_and(const Tensor& other) const { return at::bitwise_and(*this, other); }
Tensor Tensor::bitwise_or(const Tensor& other) const { return at::bitwise_or(*this, other); }
Tensor Tensor::bitwise_left_shift(const Tensor& other) const {
  return at::bitwise_left_shift(*this, other);
}
Tensor Tensor::bitwise_right_shift(const Tensor& other) const {
  return at::bitwise_right_shift(*this, other);
}
Tensor Tensor::floor_divide(const Tensor& other) const { return at::floor_divide(*this, other); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return at::index_select(*this, dim, index);
}
Tensor Tensor::matmul(const Tensor& other) const { return at::matmul(*this, other); }
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return at::sort(*this, std::nullopt, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t dim,
                                        bool descending) const {
  return at::sort(*this, stable, dim, descending);
}

}  // namespace at
