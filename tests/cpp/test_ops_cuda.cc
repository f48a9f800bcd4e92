// The built-in ops on CUDA, compared with the CPU kernels: the same inputs are copied to the
// device with copy_, both calls go through the dispatcher (typed handles of the `.out` ops, and
// the functional forms), and the results are compared with per-dtype tolerances. Odd sizes
// exercise the scalar tails of the vectorized kernels, offset views their unaligned paths.
//
// Every test is tagged [cuda]. Without a usable CUDA device (a build without CUDA, no driver, no
// GPU: any error from cudaGetDeviceCount) each test WARNs "SKIPPED: no CUDA device (<reason>)"
// and returns, so the suite passes on machines without a GPU.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cuda_test_util.h"
#include "opreg/core/allocator.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/dispatcher.h"

#if defined(OPREG_TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace {

using opreg::Device;
using opreg::Dispatcher;
using opreg::DType;
using opreg::Scalar;
using opreg::Tensor;
using Tensors = std::tuple<Tensor&, Tensor&>;

const DType kFloatDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

template <class Sig>
opreg::TypedOperatorHandle<Sig> Op(const char* name) {
  return Dispatcher::Get().FindOpOrThrow(name).typed<Sig>();
}

Tensor Rand(std::vector<int64_t> sizes, DType dtype, uint32_t seed, float lo = -2.f,
            float hi = 2.f) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& x : v) x = dist(gen);
  Tensor t = opreg::empty(sizes, dtype);
  t.copy_(opreg::from_blob(v.data(), sizes, DType::kFloat32));
  return t;
}

Tensor Cuda(const Tensor& cpu) {
  Tensor t = opreg::empty(cpu.sizes(), cpu.dtype(), Device::cuda(0));
  t.copy_(cpu.contiguous());
  return t;
}
Tensor Cpu(const Tensor& cuda) {
  Tensor t = opreg::empty(cuda.sizes(), cuda.dtype());
  t.copy_(cuda);  // Synchronous: also waits for the kernels that wrote `cuda`.
  return t;
}
Tensor EmptyCuda(opreg::IntArrayRef sizes, DType dtype) {
  return opreg::empty(sizes, dtype, Device::cuda(0));
}

std::vector<double> Values(const Tensor& cpu) {
  Tensor d = opreg::empty(cpu.sizes(), DType::kFloat64);
  d.copy_(cpu);
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

double Tol(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1.6e-2;
    default:
      return 2e-5;
  }
}

// |gpu - cpu| <= tol * (scale + |cpu|) elementwise (NaN only where the CPU has NaN).
void CheckClose(const Tensor& gpu_result, const Tensor& cpu_result, double tol,
                double scale = 1.0) {
  REQUIRE(gpu_result.sizes() == cpu_result.sizes());
  REQUIRE(gpu_result.dtype() == cpu_result.dtype());
  const std::vector<double> a = Values(Cpu(gpu_result));
  const std::vector<double> e = Values(cpu_result);
  for (size_t i = 0; i < a.size(); ++i) {
    const bool ok = (std::isnan(e[i]) && std::isnan(a[i])) ||
                    std::fabs(a[i] - e[i]) <= tol * (scale + std::fabs(e[i]));
    if (!ok) {
      INFO("element " << i << " of " << a.size() << ": cuda " << a[i] << ", cpu " << e[i]);
      CHECK(ok);
      return;
    }
  }
  SUCCEED();
}

void CheckEqual(const Tensor& gpu_result, const Tensor& cpu_result) {
  CheckClose(gpu_result, cpu_result, 0.0, 0.0);
}

// ---- Elementwise ---------------------------------------------------------------------------

TEST_CASE("cuda add.out / mul.out match the CPU kernels", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto add = Op<Tensor&(const Tensor&, const Tensor&, const Scalar&, Tensor&)>("opreg::add.out");
  auto mul = Op<Tensor&(const Tensor&, const Tensor&, Tensor&)>("opreg::mul.out");
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  const Case cases[] = {
      {{1001}, {1001}, {1001}},        // vectorized + scalar tail
      {{3, 37}, {3, 37}, {3, 37}},     // odd rows
      {{4099}, {4099}, {4099}},        // large odd
      {{5, 1, 7}, {4, 7}, {5, 4, 7}},  // broadcast
      {{6, 1}, {1, 9}, {6, 9}},        // outer-product broadcast
      {{1}, {33}, {33}},               // scalar-like
  };
  for (DType dt : kFloatDTypes) {
    for (const Case& c : cases) {
      DYNAMIC_SECTION(opreg::DTypeName(dt) << " " << c.out.size() << "d out " << c.out.back()) {
        Tensor a = Rand(c.a, dt, 1);
        Tensor b = Rand(c.b, dt, 2);
        Tensor cpu_out = opreg::empty(c.out, dt);
        Tensor gpu_out = EmptyCuda(c.out, dt);
        add.call(a, b, Scalar(2.5), cpu_out);
        Tensor ga = Cuda(a), gb = Cuda(b);
        Tensor& r = add.call(ga, gb, Scalar(2.5), gpu_out);
        CHECK(r.is_alias_of(gpu_out));
        CheckClose(gpu_out, cpu_out, Tol(dt));
        add.call(a, b, Scalar(1), cpu_out);
        add.call(ga, gb, Scalar(1), gpu_out);
        CheckClose(gpu_out, cpu_out, Tol(dt));
        mul.call(a, b, cpu_out);
        mul.call(ga, gb, gpu_out);
        CheckClose(gpu_out, cpu_out, Tol(dt));
      }
    }
  }
}

TEST_CASE("cuda add/mul read strided and unaligned views", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto add = Op<Tensor&(const Tensor&, const Tensor&, const Scalar&, Tensor&)>("opreg::add.out");
  auto mul = Op<Tensor&(const Tensor&, const Tensor&, Tensor&)>("opreg::mul.out");
  for (DType dt : kFloatDTypes) {
    DYNAMIC_SECTION(opreg::DTypeName(dt)) {
      // Offset by one element: contiguous but not 16-byte aligned (scalar path).
      Tensor a = Rand({1000}, dt, 3), b = Rand({1000}, dt, 4);
      Tensor av = a.narrow(0, 1, 999), bv = b.narrow(0, 1, 999);
      Tensor ga = Cuda(a).narrow(0, 1, 999), gb = Cuda(b).narrow(0, 1, 999);
      Tensor cpu_out = opreg::empty({999}, dt), gpu_out = EmptyCuda({999}, dt);
      add.call(av, bv, Scalar(-0.5), cpu_out);
      add.call(ga, gb, Scalar(-0.5), gpu_out);
      CheckClose(gpu_out, cpu_out, Tol(dt));
      // A column slice of a matrix: non-contiguous (broadcast kernel with real strides).
      Tensor m = Rand({9, 20}, dt, 5), n = Rand({9, 7}, dt, 6);
      Tensor mv = m.narrow(1, 3, 7);
      Tensor gm = Cuda(m).narrow(1, 3, 7);
      Tensor cpu2 = opreg::empty({9, 7}, dt), gpu2 = EmptyCuda({9, 7}, dt);
      mul.call(mv, n, cpu2);
      mul.call(gm, Cuda(n), gpu2);
      CheckClose(gpu2, cpu2, Tol(dt));
    }
  }
}

TEST_CASE("cuda split_add.out matches the CPU kernel", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<Tensors(const Tensor&, const Tensor&, Tensor&, Tensor&)>("opreg::split_add.out");
  for (DType dt : kFloatDTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{7, 129}, {2048}, {3}}) {
      DYNAMIC_SECTION(opreg::DTypeName(dt) << " numel " << shape.back() * shape.front()) {
        Tensor x = Rand(shape, dt, 7), y = Rand(shape, dt, 8);
        Tensor c0 = opreg::empty(shape, dt), c1 = opreg::empty(shape, dt);
        Tensor g0 = EmptyCuda(shape, dt), g1 = EmptyCuda(shape, dt);
        op.call(x, y, c0, c1);
        auto [r0, r1] = op.call(Cuda(x), Cuda(y), g0, g1);
        CHECK(r0.is_alias_of(g0));
        CHECK(r1.is_alias_of(g1));
        CheckClose(g0, c0, Tol(dt));
        CheckClose(g1, c1, Tol(dt));
      }
    }
  }
}

TEST_CASE("cuda silu_and_mul.out matches the CPU kernel", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<Tensor&(const Tensor&, Tensor&)>("opreg::silu_and_mul.out");
  for (DType dt : kFloatDTypes) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{4, 2 * 1024}, {3, 2 * 37}, {2, 5, 2 * 4103}, {1, 2}}) {
      DYNAMIC_SECTION(opreg::DTypeName(dt) << " last " << shape.back()) {
        Tensor x = Rand(shape, dt, 9, -6.f, 6.f);
        std::vector<int64_t> os = shape;
        os.back() /= 2;
        Tensor c = opreg::empty(os, dt), g = EmptyCuda(os, dt);
        op.call(x, c);
        op.call(Cuda(x), g);
        CheckClose(g, c, Tol(dt));
      }
    }
  }
}

// ---- Row-wise ------------------------------------------------------------------------------

TEST_CASE("cuda rms_norm matches the CPU kernel (out and functional)", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto out_op = Op<Tensor&(const Tensor&, const Tensor&, double, Tensor&)>("opreg::rms_norm.out");
  auto fn_op = Op<Tensor(const Tensor&, const Tensor&, double)>("opreg::rms_norm");
  for (DType dt : kFloatDTypes) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{5, 4096}, {3, 1007}, {2, 3, 64}, {1, 1}, {17, 8200}}) {
      DYNAMIC_SECTION(opreg::DTypeName(dt) << " hidden " << shape.back()) {
        Tensor x = Rand(shape, dt, 10);
        Tensor w = Rand({shape.back()}, dt, 11, 0.5f, 1.5f);
        Tensor c = opreg::empty(shape, dt), g = EmptyCuda(shape, dt);
        out_op.call(x, w, 1e-6, c);
        Tensor gx = Cuda(x), gw = Cuda(w);
        out_op.call(gx, gw, 1e-6, g);
        CheckClose(g, c, Tol(dt) * 2);
        Tensor gf = fn_op.call(gx, gw, 1e-5);
        CHECK(gf.is_cuda());
        CheckClose(gf, fn_op.call(x, w, 1e-5), Tol(dt) * 2);
      }
    }
  }
}

TEST_CASE("cuda fused_add_rms_norm_ updates input and residual in place like the CPU", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<void(Tensor&, Tensor&, const Tensor&, double)>("opreg::fused_add_rms_norm_");
  for (DType dt : kFloatDTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{6, 2048}, {3, 999}, {2, 2, 40}}) {
      DYNAMIC_SECTION(opreg::DTypeName(dt) << " hidden " << shape.back()) {
        Tensor x = Rand(shape, dt, 12), res = Rand(shape, dt, 13);
        Tensor w = Rand({shape.back()}, dt, 14, 0.5f, 1.5f);
        Tensor gx = Cuda(x), gres = Cuda(res), gw = Cuda(w);
        const void* gx_data = gx.data_ptr();
        const void* gres_data = gres.data_ptr();
        op.call(x, res, w, 1e-6);
        op.call(gx, gres, gw, 1e-6);
        CHECK(gx.data_ptr() == gx_data);  // In place: same buffers, no reallocation.
        CHECK(gres.data_ptr() == gres_data);
        CheckClose(gres, res, Tol(dt));  // residual = input + residual
        CheckClose(gx, x, Tol(dt) * 2);  // input = rms_norm(residual)
      }
    }
  }
}

TEST_CASE("cuda softmax matches the CPU kernel along every dim", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<Tensor&(const Tensor&, int64_t, Tensor&)>("opreg::softmax.out");
  for (DType dt : kFloatDTypes) {
    struct Case {
      std::vector<int64_t> shape;
      int64_t dim;
    };
    for (const Case& c : {Case{{7, 1000}, -1}, Case{{3, 5, 11}, 1}, Case{{3, 5, 11}, 0},
                          Case{{4, 32768}, 1}, Case{{2, 3}, -1}, Case{{9, 13}, 1}}) {
      DYNAMIC_SECTION(opreg::DTypeName(dt) << " n " << c.shape.back() << " dim " << c.dim) {
        Tensor x = Rand(c.shape, dt, 15, -8.f, 8.f);
        Tensor cpu = opreg::empty(c.shape, dt), gpu = EmptyCuda(c.shape, dt);
        op.call(x, c.dim, cpu);
        op.call(Cuda(x), c.dim, gpu);
        CheckClose(gpu, cpu, Tol(dt), 1e-3);
      }
    }
  }
}

TEST_CASE("cuda per_token_quant matches the CPU kernel (i8 and f8e4m3fn)", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<Tensors(const Tensor&, DType, Tensor&, Tensor&)>("opreg::per_token_quant.out");
  for (DType dt : kFloatDTypes) {
    for (DType qt : {DType::kInt8, DType::kFloat8E4M3FN}) {
      for (std::vector<int64_t> shape : {std::vector<int64_t>{5, 4096}, {3, 1001}, {2, 2, 17}}) {
        DYNAMIC_SECTION(opreg::DTypeName(dt)
                        << " -> " << opreg::DTypeName(qt) << " hidden " << shape.back()) {
          Tensor x = Rand(shape, dt, 16, -3.f, 3.f);
          // Row 0 all zeros: scale 0, q 0.
          x.narrow(0, 0, 1).copy_(opreg::zeros(x.narrow(0, 0, 1).sizes(), dt));
          const int64_t rows = x.numel() / shape.back();
          Tensor cq = opreg::empty(shape, qt), cs = opreg::empty({rows, 1}, DType::kFloat32);
          Tensor gq = EmptyCuda(shape, qt), gs = EmptyCuda({rows, 1}, DType::kFloat32);
          op.call(x, qt, cq, cs);
          op.call(Cuda(x), qt, gq, gs);
          CheckClose(gs, cs, 1e-6);
          CHECK(Values(Cpu(gs))[0] == 0.0);
          const std::vector<double> a = Values(Cpu(gq));
          const std::vector<double> e = Values(cq);
          // q = x / scale may round differently by one step when x / scale lands on a tie.
          const double step_rel = qt == DType::kInt8 ? 0.0 : 0.125;
          size_t bad = 0;
          for (size_t i = 0; i < a.size(); ++i) {
            // f8e4m3fn: one step is at most 2^-3 relative, 2^-9 absolute among subnormals.
            const double allowed =
                qt == DType::kInt8 ? 1.0 : std::max(step_rel * std::fabs(e[i]), 0x1p-9) + 1e-12;
            if (std::fabs(a[i] - e[i]) > allowed) ++bad;
          }
          CHECK(bad == 0);
        }
      }
    }
  }
}

TEST_CASE("cuda topk matches the CPU kernel (values and indices)", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<Tensors(const Tensor&, int64_t, int64_t, bool, Tensor&, Tensor&)>("opreg::topk.out");
  struct Case {
    std::vector<int64_t> shape;
    int64_t k, dim;
  };
  for (DType dt : kFloatDTypes) {
    for (const Case& c : {Case{{6, 1000}, 5, -1}, Case{{50, 3}, 4, 0}, Case{{2, 20000}, 3, 1},
                          Case{{4, 7, 9}, 7, 1}, Case{{3, 129}, 129, -1}, Case{{5, 4}, 0, 1}}) {
      for (bool largest : {true, false}) {
        DYNAMIC_SECTION(opreg::DTypeName(dt)
                        << " n " << c.shape[c.dim < 0 ? c.shape.size() - 1 : c.dim] << " k " << c.k
                        << " largest " << largest) {
          Tensor x = Rand(c.shape, dt, 17, -100.f, 100.f);  // Ties allowed: lower index first.
          std::vector<int64_t> os = c.shape;
          os[c.dim < 0 ? os.size() - 1 : c.dim] = c.k;
          Tensor cv = opreg::empty(os, dt), ci = opreg::empty(os, DType::kInt64);
          Tensor gv = EmptyCuda(os, dt), gi = EmptyCuda(os, DType::kInt64);
          op.call(x, c.k, c.dim, largest, cv, ci);
          op.call(Cuda(x), c.k, c.dim, largest, gv, gi);
          CheckEqual(gv, cv);
          CheckEqual(gi, ci);
        }
      }
    }
  }
}

TEST_CASE("cuda topk: NaN ranks above every number; k beyond the limit is refused", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<Tensors(const Tensor&, int64_t, int64_t, bool, Tensor&, Tensor&)>("opreg::topk.out");
  std::vector<float> v = {1.f, NAN, 3.f, -2.f, 3.f, 0.f};
  Tensor x = opreg::empty({6}, DType::kFloat32);
  x.copy_(opreg::from_blob(v.data(), {6}, DType::kFloat32));
  for (bool largest : {true, false}) {
    Tensor cv = opreg::empty({4}, DType::kFloat32), ci = opreg::empty({4}, DType::kInt64);
    Tensor gv = EmptyCuda({4}, DType::kFloat32), gi = EmptyCuda({4}, DType::kInt64);
    op.call(x, 4, 0, largest, cv, ci);
    op.call(Cuda(x), 4, 0, largest, gv, gi);
    CheckEqual(gv, cv);
    CheckEqual(gi, ci);
  }
  Tensor big = Cuda(Rand({1, 3000}, DType::kFloat32, 18));
  Tensor gv = EmptyCuda({1, 2000}, DType::kFloat32), gi = EmptyCuda({1, 2000}, DType::kInt64);
  CHECK_THROWS_WITH(op.call(big, 2000, -1, true, gv, gi),
                    Catch::Contains("selects at most k = 1024"));
}

// ---- linear --------------------------------------------------------------------------------

TEST_CASE("cuda linear (cuBLAS) matches the CPU kernel, with and without bias", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto op = Op<Tensor&(const Tensor&, const Tensor&, const std::optional<Tensor>&, Tensor&)>(
      "opreg::linear.out");
  struct Case {
    std::vector<int64_t> x;
    int64_t n;
  };
  for (DType dt : kFloatDTypes) {
    for (const Case& c :
         {Case{{7, 33}, 17}, Case{{2, 3, 64}, 128}, Case{{1, 1}, 1}, Case{{65, 257}, 31}}) {
      DYNAMIC_SECTION(opreg::DTypeName(dt) << " K " << c.x.back() << " N " << c.n) {
        const int64_t k = c.x.back();
        Tensor x = Rand(c.x, dt, 19, -1.f, 1.f);
        Tensor w = Rand({c.n, k}, dt, 20, -1.f, 1.f);
        Tensor b = Rand({c.n}, dt, 21, -1.f, 1.f);
        std::vector<int64_t> os = c.x;
        os.back() = c.n;
        const double scale = std::sqrt(static_cast<double>(k));  // Magnitude of a dot product.
        const double tol = dt == DType::kFloat32 ? 1e-5 : Tol(dt) * 1.5;
        for (bool with_bias : {false, true}) {
          std::optional<Tensor> cb = with_bias ? std::optional<Tensor>(b) : std::nullopt;
          std::optional<Tensor> gb = with_bias ? std::optional<Tensor>(Cuda(b)) : std::nullopt;
          Tensor cpu = opreg::empty(os, dt), gpu = EmptyCuda(os, dt);
          op.call(x, w, cb, cpu);
          op.call(Cuda(x), Cuda(w), gb, gpu);
          CheckClose(gpu, cpu, tol, scale);
        }
      }
    }
  }
}

// ---- Errors --------------------------------------------------------------------------------

TEST_CASE("cuda kernels refuse what they cannot handle, naming the argument", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  auto rms = Op<Tensor&(const Tensor&, const Tensor&, double, Tensor&)>("opreg::rms_norm.out");
  Tensor x = Cuda(Rand({4, 16}, DType::kFloat32, 22));
  Tensor w = Cuda(Rand({8}, DType::kFloat32, 23));
  Tensor out = EmptyCuda({4, 8}, DType::kFloat32);
  // A strided (column-sliced) input: the CUDA row kernels need contiguous rows.
  CHECK_THROWS_WITH(rms.call(x.narrow(1, 0, 8), w, 1e-6, out),
                    Catch::Contains("[opreg::rms_norm.out] argument 'input' (#0): expected a "
                                    "contiguous tensor") &&
                        Catch::Contains("got strides [16, 1]"));
  // Mixed devices: a CPU weight with a CUDA input.
  Tensor wc = Rand({16}, DType::kFloat32, 24);
  Tensor out16 = EmptyCuda({4, 16}, DType::kFloat32);
  CHECK_THROWS_WITH(rms.call(x, wc, 1e-6, out16), Catch::Contains("argument 'weight' (#1)"));
}

}  // namespace

// ---- Streams ---------------------------------------------------------------------------------

#if defined(OPREG_TEST_HAVE_CUDA)
TEST_CASE("cuda ops launch on the caller's current stream, without synchronizing", "[cuda]") {
  OPREG_SKIP_WITHOUT_CUDA();
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  cudaEvent_t done = nullptr;
  REQUIRE(cudaEventCreate(&done) == cudaSuccess);
  auto fn_op = Op<Tensor(const Tensor&, const Tensor&, double)>("opreg::rms_norm");
  Tensor x = Rand({64, 4096}, DType::kFloat32, 40);
  Tensor w = Rand({4096}, DType::kFloat32, 41, 0.5f, 1.5f);
  Tensor gx = Cuda(x), gw = Cuda(w);
  {
    opreg::CudaStreamGuard guard(0, stream);
    REQUIRE(opreg::CurrentCudaStream(0) == stream);
    // Hold `stream` with a host function that waits for `release`: the op must still return
    // (it only queues work there), and its work must not be done until the stream moves on.
    // The watchdog releases the stream after 20 s so a regression fails instead of hanging.
    std::atomic<bool> release{false};
    REQUIRE(cudaLaunchHostFunc(
                stream,
                [](void* flag) {
                  while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
                },
                &release) == cudaSuccess);
    std::thread watchdog([&release] {
      for (int i = 0; i < 2000 && !release.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      release = true;
    });
    Tensor gy = fn_op.call(gx, gw, 1e-6);
    REQUIRE(cudaEventRecord(done, stream) == cudaSuccess);
    const bool queued_behind_hold = !release.load() && cudaEventQuery(done) == cudaErrorNotReady;
    release = true;
    watchdog.join();
    CHECK(queued_behind_hold);
    // copy_ under the guard is ordered on `stream` too (and synchronizes it).
    CheckClose(gy, fn_op.call(x, w, 1e-6), Tol(DType::kFloat32) * 2);
  }
  CHECK(opreg::CurrentCudaStream(0) == nullptr);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  cudaEventDestroy(done);
  cudaStreamDestroy(stream);
}
#endif
