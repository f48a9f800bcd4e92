// Helpers for the op tests: seeded random tensors, values as doubles, dtype tolerances.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "opreg/core/tensor_factories.h"
#include "opreg/ops/ops.h"

namespace opreg_test {

using opreg::Device;
using opreg::DType;
using opreg::Tensor;

// A tensor of `sizes` and `dtype` with uniform values in [lo, hi) (rounded to the dtype).
inline Tensor Rand(std::vector<int64_t> sizes, DType dtype, uint32_t seed, double lo = -2.0,
                   double hi = 2.0) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(static_cast<float>(lo), static_cast<float>(hi));
  for (float& x : v) x = dist(gen);
  Tensor src = opreg::from_blob(v.data(), sizes, DType::kFloat32);
  Tensor t = opreg::empty(sizes, dtype);
  t.copy_(src);
  return t;
}

// The values of a CPU tensor of any dtype, row-major, as doubles (strided tensors included).
inline std::vector<double> Values(const Tensor& t) {
  Tensor d = opreg::empty(t.sizes(), DType::kFloat64);
  d.copy_(t);
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

// A tensor of `dtype` holding `v` (rounded to the dtype).
inline Tensor FromValues(const std::vector<double>& v, std::vector<int64_t> sizes, DType dtype) {
  std::vector<double> copy = v;
  Tensor src = opreg::from_blob(copy.data(), sizes, DType::kFloat64);
  Tensor t = opreg::empty(sizes, dtype);
  t.copy_(src);
  return t;
}

// Relative tolerance of one result rounded to `dtype` plus f32 accumulation slack.
inline double Tol(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1.6e-2;
    default:
      return 2e-5;
  }
}

// Every |actual - expected| <= tol * (scale + |expected|); reports the first mismatch.
inline void CheckClose(const std::vector<double>& actual, const std::vector<double>& expected,
                       double tol, double scale = 1.0) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double err = std::fabs(actual[i] - expected[i]);
    if (!(err <= tol * (scale + std::fabs(expected[i])))) {
      INFO("element " << i << ": got " << actual[i] << ", expected " << expected[i]);
      CHECK(err <= tol * (scale + std::fabs(expected[i])));
      return;
    }
  }
  SUCCEED();
}

inline std::string Name(DType d) { return std::string(opreg::DTypeName(d)); }

}  // namespace opreg_test
