// opreg::torch_compat's CPU-backend glue, as vLLM's CPU kernels use it: at::cpu's capability
// queries (checked against the compiler's own CPU detection and glibc), argmax / argmin, the
// autograd mode guards and c10::SmallVector. The argmax / argmin expectations are what torch
// 2.15 returns for the same inputs.
#include <ATen/cpu/Utils.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/SmallVector.h>
#include <torch/all.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

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
