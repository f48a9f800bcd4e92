// opreg::torch_compat's CPU-backend glue, as vLLM's CPU kernels use it: at::cpu's capability
// queries (checked against the compiler's own CPU detection and glibc), argmax / argmin, the
// autograd mode guards, c10::SmallVector, at::vec's portable Vectorized and its functional
// helpers, cpublas's brgemm and gemm, and the ATen/native/cpu/utils.h index helpers. The argmax /
// argmin expectations are what torch 2.15 returns for the same inputs.
#include <ATen/cpu/Utils.h>
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>
#include <ATen/native/CPUBlas.h>
#include <ATen/native/cpu/utils.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Logging.h>
#include <c10/util/SmallVector.h>
#include <torch/all.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace opreg_test {
void TorchCompatCheck(bool condition);  // torch_compat_check_helper.cc
}  // namespace opreg_test

namespace {

at::Tensor FromValues(const std::vector<float>& v, at::IntArrayRef shape) {
  at::Tensor t = torch::empty(shape, at::kFloat);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<float>()[i] = v[i];
  return t;
}

std::vector<int64_t> Values(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  REQUIRE(c.scalar_type() == at::kLong);
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

TEST_CASE("get_cpu_capabilities agrees with the compiler's CPU detection and glibc",
          "[torch_compat][cpu]") {
  const auto caps = at::cpu::get_cpu_capabilities();
  for (const char* key : {"architecture", "cpu_name", "l1d_cache_size", "l2_cache_size",
                          "num_logical_cores", "num_physical_cores", "num_sockets", "avx2",
                          "avx512_f", "avx512_bf16", "amx_tile", "amx_bf16"}) {
    INFO(key);
    CHECK(caps.count(key) == 1);
  }
  CHECK(caps.at("num_logical_cores").toInt() == sysconf(_SC_NPROCESSORS_ONLN));
  CHECK(caps.at("l2_cache_size").toInt() == std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE)));
  CHECK(caps.at("num_physical_cores").toInt() <= caps.at("num_logical_cores").toInt());
#if defined(__x86_64__)
  CHECK(caps.at("architecture").toStringRef() == "x86_64");
  __builtin_cpu_init();
  CHECK(caps.at("sse4_2").toBool() == (__builtin_cpu_supports("sse4.2") != 0));
  CHECK(caps.at("avx2").toBool() == (__builtin_cpu_supports("avx2") != 0));
  CHECK(caps.at("fma3").toBool() == (__builtin_cpu_supports("fma") != 0));
  CHECK(caps.at("avx512_f").toBool() == (__builtin_cpu_supports("avx512f") != 0));
  CHECK(caps.at("avx512_bw").toBool() == (__builtin_cpu_supports("avx512bw") != 0));
  CHECK(caps.at("avx512_vnni").toBool() == (__builtin_cpu_supports("avx512vnni") != 0));
  CHECK(at::cpu::is_avx512_vnni_supported() == caps.at("avx512_vnni").toBool());
  if (!caps.at("amx_tile").toBool()) CHECK_FALSE(at::cpu::init_amx());
#endif
}

TEST_CASE("argmax and argmin follow libtorch's ties, NaN and shape rules",
          "[torch_compat][tensor]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  at::Tensor x = FromValues({1, 5, 5, -2, 0, 7, 7, -9, 3, nan, 2, nan}, {3, 4});
  CHECK(Values(x.argmax(1)) == std::vector<int64_t>{1, 1, 1});  // ties: the first; NaN wins
  CHECK(Values(x.argmin(1)) == std::vector<int64_t>{3, 3, 1});  // NaN wins for argmin too
  CHECK(Values(x.argmax(0)) == std::vector<int64_t>{2, 2, 1, 2});
  CHECK(Values(x.argmax(-1, /*keepdim=*/true).view({-1})) == std::vector<int64_t>{1, 1, 1});
  CHECK(x.argmax(-1, true).sizes() == std::vector<int64_t>{3, 1});
  CHECK(Values(x.argmax()) == std::vector<int64_t>{9});  // flattened: the first NaN
  CHECK(x.argmax().dim() == 0);
  CHECK(x.argmax(std::nullopt, true).sizes() == std::vector<int64_t>{1, 1});
  at::Tensor y = FromValues({4, 1, 8, 2, 6, 0}, {2, 3});
  CHECK(Values(at::argmax(y.t(), 1)) == std::vector<int64_t>{0, 1, 0});  // strided input
  CHECK(Values(y.argmin()) == std::vector<int64_t>{5});
  CHECK_THROWS_WITH(y.argmax(2), Catch::Contains("Dimension out of range"));
  CHECK_THROWS_WITH(torch::empty({2, 0}, at::kFloat).argmax(1),
                    Catch::Contains("to have non-zero size"));
}

TEST_CASE("InferenceMode and NoGradGuard set the thread's mode until they end",
          "[torch_compat][grad_mode]") {
  CHECK_FALSE(c10::InferenceMode::is_enabled());
  CHECK(c10::GradMode::is_enabled());
  {
    c10::InferenceMode guard;
    CHECK(c10::InferenceMode::is_enabled());
    CHECK_FALSE(c10::GradMode::is_enabled());
    bool other_thread_inference = true;
    std::thread([&] { other_thread_inference = c10::InferenceMode::is_enabled(); }).join();
    CHECK_FALSE(other_thread_inference);
    {
      c10::InferenceMode off(false);
      CHECK_FALSE(c10::InferenceMode::is_enabled());
    }
    CHECK(c10::InferenceMode::is_enabled());
  }
  CHECK_FALSE(c10::InferenceMode::is_enabled());
  CHECK(c10::GradMode::is_enabled());
  {
    torch::NoGradGuard no_grad;
    CHECK_FALSE(c10::GradMode::is_enabled());
  }
  CHECK(c10::GradMode::is_enabled());
}

TEST_CASE("c10::SmallVector keeps its first elements inline and grows past them",
          "[torch_compat][values]") {
  c10::SmallVector<int64_t, 4> v(3, 7);
  CHECK(v.size() == 3);
  CHECK(v[2] == 7);
  for (int64_t i = 0; i < 10; ++i) v.push_back(i);
  CHECK(v.size() == 13);
  CHECK(v.back() == 9);
  c10::SmallVector<float> defaults;  // libtorch's default inline capacity
  defaults.resize(100, 1.5f);
  CHECK(defaults[99] == 1.5f);
}

TEST_CASE("at::vec::Vectorized: lanes, loads, masks and math as libtorch's portable form",
          "[torch_compat][vec]") {
  using fVec = at::vec::Vectorized<float>;
  using bVec = at::vec::Vectorized<at::BFloat16>;
  STATIC_REQUIRE(fVec::size() == 8);
  STATIC_REQUIRE(bVec::size() == 16);
  STATIC_REQUIRE(at::vec::is_reduced_floating_point_v<at::Half>);
  float data[8] = {1, -2, 3, -4, 5, -6, 7, -8};
  fVec x = fVec::loadu(data);
  fVec partial = fVec::loadu(data, 3);
  CHECK(partial[2] == 3);
  CHECK(partial[3] == 0);
  CHECK((x * fVec(2.f) + fVec(1.f))[1] == -3);
  CHECK(at::vec::fmadd(x, x, fVec(1.f))[3] == 17);
  CHECK(x.abs()[5] == 6);
  CHECK(x.exp()[0] == std::exp(1.f));
  CHECK(fVec::arange(2.f, 3)[4] == 14);
  fVec mask = x > fVec(0.f);
  fVec picked = fVec::blendv(fVec(0.f), x, mask);
  CHECK(picked[0] == 1);
  CHECK(picked[1] == 0);
  CHECK(fVec::blend<0b10>(fVec(1.f), fVec(9.f))[1] == 9);
  CHECK(x.gt(fVec(0.f))[2] == 1);
  float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(at::vec::maximum(fVec(nan), fVec(1.f))[0]));
  CHECK(at::vec::clamp(x, fVec(-3.f), fVec(3.f))[6] == 3);
  float out[8];
  x.store(out, 2);
  CHECK(out[1] == -2);
  at::BFloat16 halves[16];
  for (int i = 0; i < 16; ++i) halves[i] = at::BFloat16(static_cast<float>(i) + 0.5f);
  auto [lo, hi] = at::vec::convert_to_float(bVec::loadu(halves));
  CHECK(lo[1] == 1.5f);
  CHECK(hi[0] == 8.5f);
  bVec back = at::vec::convert_from_float<at::BFloat16>(lo, hi);
  CHECK(static_cast<float>(back[15]) == 15.5f);
  fVec loaded;
  at::vec::load_fp32_from_bf16(halves + 8, loaded);
  CHECK(loaded[0] == 8.5f);
  // BFloat16 lanes compute in float and round after the operation.
  CHECK(static_cast<float>((bVec(at::BFloat16(1.f)) / bVec(at::BFloat16(3.f)))[0]) ==
        static_cast<float>(at::BFloat16(1.f / 3.f)));
}

TEST_CASE("at::vec reductions and maps cover whole vectors and tails", "[torch_compat][vec]") {
  using fVec = at::vec::Vectorized<float>;
  std::vector<float> v(21);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 10.f;
  auto add = [](fVec& a, fVec& b) { return a + b; };  // non-const refs, as vLLM's lambdas take
  CHECK(at::vec::reduce_all<float>(add, v.data(), 21) == 0.f);
  CHECK(at::vec::reduce_all<float>([](fVec a, fVec b) { return at::vec::maximum(a, b); }, v.data(),
                                   21) == 10.f);
  CHECK(at::vec::reduce_all<float>(add, v.data(), 5) == -40.f);
  CHECK(at::vec::map_reduce_all<float>([](fVec a) { return a * a; }, add, v.data(), 21) == 770.f);
  std::vector<float> out(21);
  at::vec::map<float>([](fVec a) { return a.abs(); }, out.data(), v.data(), 21);
  CHECK(out[20] == 10.f);
  at::vec::map2<float>([](fVec a, fVec b) { return a - b; }, out.data(), v.data(), v.data(), 21);
  CHECK(out[17] == 0.f);
  CHECK(at::vec::vec_reduce_all<float>(add, fVec::arange(1.f, 1.f), 4) == 10.f);
}

TEST_CASE("cpublas::brgemm in plain and VNNI layouts, gemm column-major", "[torch_compat][blas]") {
  const int64_t M = 3, N = 5, K = 4;
  std::vector<float> a(M * K), b(K * N), expected(M * N, 0.f);
  for (int64_t i = 0; i < M * K; ++i) a[i] = static_cast<float>(i % 7) - 3.f;
  for (int64_t i = 0; i < K * N; ++i) b[i] = static_cast<float>(i % 5) - 2.f;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = 0; k < K; ++k) expected[m * N + n] += a[m * K + k] * b[k * N + n];
    }
  }
  std::vector<float> c(M * N, 100.f);
  at::native::cpublas::brgemm(M, N, K, K, N, N, /*add_C=*/false, a.data(), b.data(), c.data());
  CHECK(c == expected);
  // BFloat16 with B in VNNI pairs: element (k, n) at [(k / 2) * N * 2 + n * 2 + k % 2].
  std::vector<at::BFloat16> a16(a.begin(), a.end()), vnni(K * N);
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t n = 0; n < N; ++n) vnni[(k / 2) * N * 2 + n * 2 + k % 2] = b[k * N + n];
  }
  std::vector<float> c16(M * N, 1.f);
  at::native::cpublas::brgemm(M, N, K, K, N, N, /*add_C=*/true, a16.data(), vnni.data(),
                              c16.data());
  for (int64_t i = 0; i < M * N; ++i) CHECK(c16[i] == expected[i] + 1.f);
  CHECK_FALSE(at::native::cpublas::could_pack(at::kBFloat16));
  CHECK_THROWS_AS(
      at::native::cpublas::pack(K, N, N, N, at::kBFloat16, at::kBFloat16, nullptr, nullptr),
      opreg::Error);
  // Column-major: C^T = B^T A^T with the row-major buffers, as a BLAS caller writes it.
  std::vector<float> ct(M * N, 7.f);
  at::native::cpublas::gemm_no_downcast_stub(
      at::kCPU, at::kFloat, at::native::TransposeType::NoTranspose,
      at::native::TransposeType::NoTranspose, N, M, K, at::Scalar(1.0), b.data(), N, a.data(), K,
      at::Scalar(0.0), ct.data(), N);
  CHECK(ct == expected);
}

TEST_CASE("data_index_init / data_index_step walk a flattened range", "[torch_compat][utils]") {
  int64_t i = 0, j = 0;
  const int64_t I = 3, J = 4;
  at::native::data_index_init<int64_t>(6, i, I, j, J);
  CHECK(i == 1);
  CHECK(j == 2);
  at::native::data_index_step(i, I, j, J);
  at::native::data_index_step(i, I, j, J);
  CHECK(i == 2);
  CHECK(j == 0);
  CHECK(at::native::utils::CeilLog2<int64_t>(17) == 5);
}

TEST_CASE("CHECK raises and t[i] = value fills a row", "[torch_compat][check]") {
  CHECK_NOTHROW(opreg_test::TorchCompatCheck(true));
  CHECK_THROWS_WITH(opreg_test::TorchCompatCheck(false),
                    Catch::Contains("Check failed: condition == true"));
  at::Tensor t = torch::zeros({3, 2}, at::kFloat);
  t[1] = 4;
  CHECK(t.sum().item<double>() == 8.0);
}
