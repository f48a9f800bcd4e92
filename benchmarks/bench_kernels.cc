// bench_kernels: achieved memory bandwidth of opreg's memory-bound ops next to a plain copy of
// the same bytes (the practical limit), and linear's GFLOP/s next to the BLAS library called
// directly. Every op is called through the dispatcher (typed handles of the `.out` ops) with
// preallocated outputs, so allocation is never timed.
//
//   CPU:  bytes moved / median time of the op, against an OpenMP-parallel memcpy (one chunk per
//         thread, as many threads as the kernels use) of half those bytes: a copy reads and
//         writes each byte, so both move the same total. linear (f32, f16, bf16) against
//         cblas_sgemm (f32) on the same shapes.
//   CUDA: only when opreg::CudaAvailable(): the same ops on cuda:0 timed with CUDA events
//         around a batch of launches, against a device-to-device cudaMemcpyAsync of half the
//         bytes; linear against cublasGemmEx called directly (same dtypes, f32 compute).
//
// Sizes are the bytes of the op's main input (x / self): 1 MiB, 16 MiB and 256 MiB by default
// (--sizes-mib 1,16,256); binary ops get a second input of the same size. Row-wise ops use rows
// of 4096 elements (silu_and_mul: 2 x 4096). Bytes moved count every element read or written
// once (weights and scales included).
//
// Decode sizes (CPU): every op, linear included (x of rows x 4096 times a 4096 x 4096 weight), at
// 1, 8 and 64 rows x 4096 (--decode-rows) in f32 and bf16, microseconds per call (median of
// batches of calls), next to torch's CPU ops on the same shapes when built with
// OPREG_BENCH_TORCH (torch_ext/bench_kernels_torch.cc: the torch op, or its usual composite).
//
// Usage: bench_kernels [--json PATH] [--sizes-mib 1,16,256] [--dtypes f32,f16,bf16]
//                      [--min-time-s 0.2] [--no-linear] [--decode-rows 1,8,64] [--no-decode]
// Prints tables on stdout; --json writes a list of objects with op, dtype, device, numel,
// bytes, ms, gbps and copy_gbps (linear: m, n, k, gflops and blas_gflops instead; decode rows:
// "decode": true, rows, us and torch_us, null without torch).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "opreg/core/allocator.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/dispatcher.h"
#include "bench_timing.h"
#include "torch_decode_hook.h"

#if defined(OPREG_BENCH_HAVE_CUDA)
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

namespace {

using bench_timing::MicrosPerCall;
using bench_timing::Seconds;
using bench_timing::TimeHost;
using bench_timing::TimeHostPair;
using opreg::Device;
using opreg::DType;
using opreg::Scalar;
using opreg::Tensor;
using Tensors = std::tuple<Tensor&, Tensor&>;

struct Options {
  std::string json;
  std::vector<double> sizes_mib = {1, 16, 256};
  std::vector<DType> dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  double min_time_s = 0.2;
  bool linear = true;
  std::vector<int64_t> decode_rows = {1, 8, 64};
};

struct Row {
  std::string op, dtype, device;
  int64_t numel = 0;
  double bytes = 0, ms = 0;
  double gbps = 0, copy_gbps = 0;  // Memory-bound ops.
  int64_t m = 0, n = 0, k = 0;     // linear.
  double gflops = 0, blas_gflops = 0;
  bool is_linear = false;
  bool is_decode = false;         // decode size: rows, us, torch_us (< 0: no torch figure)
  int64_t rows = 0;
  double us = 0, torch_us = -1;
};

template <class Sig>
opreg::TypedOperatorHandle<Sig> Op(const char* name) {
  return opreg::Dispatcher::Get().FindOpOrThrow(name).typed<Sig>();
}

Tensor RandCpu(std::vector<int64_t> sizes, DType dtype, uint32_t seed, float lo = -2.f,
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

// A memcpy of `n` bytes split into one chunk per OpenMP thread.
void ParallelMemcpy(char* dst, const char* src, size_t n) {
#pragma omp parallel
  {
    const size_t threads = static_cast<size_t>(omp_get_num_threads());
    const size_t id = static_cast<size_t>(omp_get_thread_num());
    const size_t chunk = (n + threads - 1) / threads / 64 * 64 + 64;
    const size_t begin = std::min(n, id * chunk);
    const size_t end = std::min(n, begin + chunk);
    if (end > begin) std::memcpy(dst + begin, src + begin, end - begin);
  }
}

// ---- Memory-bound ops ------------------------------------------------------------------------

// One prepared call: its bytes moved and a closure calling the op.
struct Prepared {
  int64_t numel;
  double bytes;
  std::function<void()> call;
};

// Builds the op's inputs and outputs on `device` for a main input of `input_bytes` bytes.
std::optional<Prepared> Prepare(const std::string& op, DType dt, double input_bytes, Device device,
                                std::vector<Tensor>* keep) {
  const int64_t item = static_cast<int64_t>(opreg::ItemSize(dt));
  const int64_t hidden = 4096;
  int64_t numel = static_cast<int64_t>(input_bytes) / item;
  auto on = [&](Tensor cpu) {
    if (device.is_cpu()) return cpu;
    Tensor t = opreg::empty(cpu.sizes(), cpu.dtype(), device);
    t.copy_(cpu);
    return t;
  };
  auto empty = [&](std::vector<int64_t> s, DType d) { return opreg::empty(s, d, device); };
  auto hold = [&](std::initializer_list<Tensor> ts) {
    for (const Tensor& t : ts) keep->push_back(t);
  };
  if (op == "add" || op == "mul" || op == "split_add") {
    Tensor a = on(RandCpu({numel}, dt, 1)), b = on(RandCpu({numel}, dt, 2));
    Tensor o0 = empty({numel}, dt), o1 = empty({numel}, dt);
    hold({a, b, o0, o1});
    if (op == "add") {
      auto h = Op<Tensor&(const Tensor&, const Tensor&, const Scalar&, Tensor&)>("opreg::add.out");
      return Prepared{numel, 3.0 * numel * item, [=]() mutable { h.call(a, b, Scalar(1), o0); }};
    }
    if (op == "mul") {
      auto h = Op<Tensor&(const Tensor&, const Tensor&, Tensor&)>("opreg::mul.out");
      return Prepared{numel, 3.0 * numel * item, [=]() mutable { h.call(a, b, o0); }};
    }
    auto h = Op<Tensors(const Tensor&, const Tensor&, Tensor&, Tensor&)>("opreg::split_add.out");
    return Prepared{numel, 4.0 * numel * item, [=]() mutable { h.call(a, b, o0, o1); }};
  }
  const int64_t last = op == "silu_and_mul" ? 2 * hidden : hidden;
  const int64_t rows = std::max<int64_t>(1, numel / last);
  numel = rows * last;
  Tensor x = on(RandCpu({rows, last}, dt, 3));
  if (op == "rms_norm") {
    Tensor w = on(RandCpu({hidden}, dt, 4, 0.5f, 1.5f)), out = empty({rows, hidden}, dt);
    hold({x, w, out});
    auto h = Op<Tensor&(const Tensor&, const Tensor&, double, Tensor&)>("opreg::rms_norm.out");
    return Prepared{numel, (2.0 * numel + hidden) * item,
                    [=]() mutable { h.call(x, w, 1e-6, out); }};
  }
  if (op == "fused_add_rms_norm_") {
    Tensor r = on(RandCpu({rows, hidden}, dt, 5)), w = on(RandCpu({hidden}, dt, 6, 0.5f, 1.5f));
    hold({x, r, w});
    auto h = Op<void(Tensor&, Tensor&, const Tensor&, double)>("opreg::fused_add_rms_norm_");
    return Prepared{numel, (4.0 * numel + hidden) * item, [=]() mutable { h.call(x, r, w, 1e-6); }};
  }
  if (op == "silu_and_mul") {
    Tensor out = empty({rows, hidden}, dt);
    hold({x, out});
    auto h = Op<Tensor&(const Tensor&, Tensor&)>("opreg::silu_and_mul.out");
    return Prepared{numel, 1.5 * numel * item, [=]() mutable { h.call(x, out); }};
  }
  if (op == "per_token_quant") {
    Tensor q = empty({rows, hidden}, DType::kInt8), s = empty({rows, 1}, DType::kFloat32);
    hold({x, q, s});
    auto h = Op<Tensors(const Tensor&, DType, Tensor&, Tensor&)>("opreg::per_token_quant.out");
    return Prepared{numel, static_cast<double>(numel) * (item + 1) + rows * 4.0,
                    [=]() mutable { h.call(x, DType::kInt8, q, s); }};
  }
  if (op == "softmax") {
    Tensor out = empty({rows, hidden}, dt);
    hold({x, out});
    auto h = Op<Tensor&(const Tensor&, int64_t, Tensor&)>("opreg::softmax.out");
    return Prepared{numel, 2.0 * numel * item, [=]() mutable { h.call(x, -1, out); }};
  }
  return std::nullopt;
}

const char* kMemoryOps[] = {"add",
                            "mul",
                            "split_add",
                            "rms_norm",
                            "fused_add_rms_norm_",
                            "silu_and_mul",
                            "per_token_quant",
                            "softmax"};

#if defined(OPREG_BENCH_HAVE_CUDA)
void CudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Milliseconds per call: CUDA events around batches of calls on stream 0 (one warm-up call),
// repeated until min_time_s; the median batch.
double TimeCuda(const std::function<void()>& fn, double min_time_s) {
  fn();
  CudaCheck(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  // Batch size: enough calls for ~1 ms per batch.
  cudaEventRecord(a, nullptr);
  fn();
  cudaEventRecord(b, nullptr);
  cudaEventSynchronize(b);
  float one = 0;
  cudaEventElapsedTime(&one, a, b);
  const int batch = std::max(1, std::min(1000, static_cast<int>(1.0 / std::max(one, 1e-3f))));
  std::vector<double> per_call;
  double total = 0;
  while (per_call.size() < 5 || (total < min_time_s && per_call.size() < 200)) {
    cudaEventRecord(a, nullptr);
    for (int i = 0; i < batch; ++i) fn();
    cudaEventRecord(b, nullptr);
    CudaCheck(cudaEventSynchronize(b), "kernel");
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    per_call.push_back(ms / batch);
    total += ms / 1000.0;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}
#endif

void BenchMemory(const Options& o, Device device, std::vector<Row>* rows) {
  for (double mib : o.sizes_mib) {
    const double in_bytes = mib * 1024 * 1024;
    for (DType dt : o.dtypes) {
      for (const char* op : kMemoryOps) {
        std::vector<Tensor> keep;
        std::optional<Prepared> p = Prepare(op, dt, in_bytes, device, &keep);
        if (!p) continue;
        const size_t copy_bytes = static_cast<size_t>(p->bytes / 2);
        Row r;
        r.op = op;
        r.dtype = std::string(opreg::DTypeName(dt));
        r.device = device.str();
        r.numel = p->numel;
        r.bytes = p->bytes;
        double copy_s = 0;
        if (device.is_cpu()) {
          Tensor src = opreg::empty({static_cast<int64_t>(copy_bytes)}, DType::kUInt8);
          Tensor dst = opreg::empty({static_cast<int64_t>(copy_bytes)}, DType::kUInt8);
          std::memset(src.data_ptr(), 1, copy_bytes);
          std::memset(dst.data_ptr(), 0, copy_bytes);
          char* d = static_cast<char*>(dst.data_ptr());
          const char* s = static_cast<const char*>(src.data_ptr());
          const auto [op_s, ref_s] = TimeHostPair(
              p->call, [&] { ParallelMemcpy(d, s, copy_bytes); }, o.min_time_s);
          r.ms = op_s * 1e3;
          copy_s = ref_s;
        } else {
#if defined(OPREG_BENCH_HAVE_CUDA)
          r.ms = TimeCuda(p->call, o.min_time_s);
          Tensor src = opreg::empty({static_cast<int64_t>(copy_bytes)}, DType::kUInt8, device);
          Tensor dst = opreg::empty({static_cast<int64_t>(copy_bytes)}, DType::kUInt8, device);
          void* d = dst.data_ptr();
          const void* s = src.data_ptr();
          copy_s =
              TimeCuda(
                  [&] { cudaMemcpyAsync(d, s, copy_bytes, cudaMemcpyDeviceToDevice, nullptr); },
                  o.min_time_s) /
              1e3;
#endif
        }
        r.gbps = r.bytes / (r.ms * 1e-3) / 1e9;
        r.copy_gbps = 2.0 * copy_bytes / copy_s / 1e9;
        rows->push_back(r);
        std::printf("%-20s %-5s %-7s %12lld %10.2f %10.4f %9.2f %9.2f %6.0f%%\n", r.op.c_str(),
                    r.dtype.c_str(), r.device.c_str(), static_cast<long long>(r.numel),
                    r.bytes / (1024.0 * 1024.0), r.ms, r.gbps, r.copy_gbps,
                    100.0 * r.gbps / r.copy_gbps);
        std::fflush(stdout);
      }
    }
  }
}

// ---- linear --------------------------------------------------------------------------------

struct Shape {
  int64_t m, n, k;
};
const Shape kLinearShapes[] = {{16, 4096, 4096}, {128, 4096, 4096}, {1024, 1024, 1024}};

void BenchLinear(const Options& o, Device device, std::vector<Row>* rows) {
  auto h = Op<Tensor&(const Tensor&, const Tensor&, const std::optional<Tensor>&, Tensor&)>(
      "opreg::linear.out");
  for (const Shape& s : kLinearShapes) {
    const double flops = 2.0 * s.m * s.n * s.k;
    // The BLAS reference, once per shape (f32 on CPU; per dtype on CUDA below).
    double cpu_blas_s = 0;
    if (device.is_cpu()) {
      Tensor a = RandCpu({s.m, s.k}, DType::kFloat32, 7, -1, 1);
      Tensor b = RandCpu({s.n, s.k}, DType::kFloat32, 8, -1, 1);
      Tensor c = opreg::empty({s.m, s.n}, DType::kFloat32);
      const float* pa = a.data_ptr<float>();
      const float* pb = b.data_ptr<float>();
      float* pc = c.data_ptr<float>();
      cpu_blas_s = TimeHost(
          [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s.m),
                        static_cast<int>(s.n), static_cast<int>(s.k), 1.f, pa,
                        static_cast<int>(s.k), pb, static_cast<int>(s.k), 0.f, pc,
                        static_cast<int>(s.n));
          },
          o.min_time_s);
    }
    for (DType dt : o.dtypes) {
      auto on = [&](Tensor cpu) {
        if (device.is_cpu()) return cpu;
        Tensor t = opreg::empty(cpu.sizes(), cpu.dtype(), device);
        t.copy_(cpu);
        return t;
      };
      Tensor x = on(RandCpu({s.m, s.k}, dt, 9, -1, 1));
      Tensor w = on(RandCpu({s.n, s.k}, dt, 10, -1, 1));
      Tensor out = opreg::empty({s.m, s.n}, dt, device);
      const std::optional<Tensor> none;
      auto call = [&] { h.call(x, w, none, out); };
      Row r;
      r.is_linear = true;
      r.op = "linear";
      r.dtype = std::string(opreg::DTypeName(dt));
      r.device = device.str();
      r.m = s.m;
      r.n = s.n;
      r.k = s.k;
      r.numel = s.m * s.n;
      double blas_s = cpu_blas_s;
      if (device.is_cpu()) {
        r.ms = TimeHost(call, o.min_time_s) * 1e3;
      } else {
#if defined(OPREG_BENCH_HAVE_CUDA)
        r.ms = TimeCuda(call, o.min_time_s);
        cublasHandle_t handle;
        cublasCreate(&handle);
        const cudaDataType_t t = dt == DType::kFloat32   ? CUDA_R_32F
                                 : dt == DType::kFloat16 ? CUDA_R_16F
                                                         : CUDA_R_16BF;
        const float alpha = 1.f, beta = 0.f;
        blas_s = TimeCuda(
                     [&] {
                       cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.n),
                                    static_cast<int>(s.m), static_cast<int>(s.k), &alpha,
                                    w.data_ptr(), t, static_cast<int>(s.k), x.data_ptr(), t,
                                    static_cast<int>(s.k), &beta, out.data_ptr(), t,
                                    static_cast<int>(s.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
                     },
                     o.min_time_s) /
                 1e3;
        cublasDestroy(handle);
#endif
      }
      r.gflops = flops / (r.ms * 1e-3) / 1e9;
      r.blas_gflops = flops / blas_s / 1e9;
      rows->push_back(r);
      std::printf("%-20s %-5s %-7s %5lldx%5lldx%5lld %10.3f %9.1f GF/s %9.1f GF/s %6.0f%%\n",
                  "linear", r.dtype.c_str(), r.device.c_str(), static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), r.ms, r.gflops,
                  r.blas_gflops, 100.0 * r.gflops / r.blas_gflops);
      std::fflush(stdout);
    }
  }
}

// ---- Decode sizes ---------------------------------------------------------------------------

}  // namespace

namespace bench_kernels {
TorchDecode& TorchDecodeHook() {
  static TorchDecode hook;
  return hook;
}
}  // namespace bench_kernels

namespace {

void BenchDecode(const Options& o, std::vector<Row>* rows) {
  const int64_t hidden = 4096;
  const auto& torch = bench_kernels::TorchDecodeHook();
  std::printf("\nDecode sizes (CPU, rows x %lld): microseconds per call, opreg (typed .out call "
              "through the dispatcher) and torch %s (its op or usual composite, same shapes)\n",
              static_cast<long long>(hidden),
              torch.make ? torch.version.c_str() : "(not built: OPREG_BENCH_TORCH found no torch)");
  std::printf("%-20s %-5s %5s %10s %10s %9s\n", "op", "dtype", "rows", "opreg us", "torch us",
              "torch/opreg");
  std::vector<std::string> ops(std::begin(kMemoryOps), std::end(kMemoryOps));
  if (o.linear) ops.push_back("linear");
  for (const std::string& op : ops) {
    for (DType dt : {DType::kFloat32, DType::kBFloat16}) {
      const std::string dtype(opreg::DTypeName(dt));
      for (int64_t n : o.decode_rows) {
        std::vector<Tensor> keep;
        std::function<void()> call;
        if (op == "linear") {
          Tensor x = RandCpu({n, hidden}, dt, 11, -1, 1), w = RandCpu({hidden, hidden}, dt, 12);
          Tensor out = opreg::empty({n, hidden}, dt);
          auto h = Op<Tensor&(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                              Tensor&)>("opreg::linear.out");
          call = [=]() mutable { h.call(x, w, std::nullopt, out); };
        } else {
          const int64_t last = op == "silu_and_mul" ? 2 * hidden : hidden;
          std::optional<Prepared> p = Prepare(
              op, dt, static_cast<double>(n * last * opreg::ItemSize(dt)), Device::cpu(), &keep);
          if (!p) continue;
          call = p->call;
        }
        Row r;
        r.is_decode = true;
        r.op = op;
        r.dtype = dtype;
        r.device = "cpu";
        r.rows = n;
        r.numel = n * hidden;
        r.us = MicrosPerCall(call, o.min_time_s);
        if (torch.make) {
          if (std::function<void()> t = torch.make(op, dtype, n, hidden)) {
            r.torch_us = MicrosPerCall(t, o.min_time_s);
          }
        }
        rows->push_back(r);
        char torch_col[32] = "-", ratio[32] = "-";
        if (r.torch_us >= 0) {
          std::snprintf(torch_col, sizeof(torch_col), "%10.2f", r.torch_us);
          std::snprintf(ratio, sizeof(ratio), "%8.2fx", r.torch_us / r.us);
        }
        std::printf("%-20s %-5s %5lld %10.2f %10s %9s\n", op.c_str(), dtype.c_str(),
                    static_cast<long long>(n), r.us, torch_col, ratio);
        std::fflush(stdout);
      }
    }
  }
}

void WriteJson(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << "[\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    char buf[512];
    if (r.is_decode) {
      char torch_us[32] = "null";
      if (r.torch_us >= 0) std::snprintf(torch_us, sizeof(torch_us), "%.6g", r.torch_us);
      std::snprintf(buf, sizeof(buf),
                    "  {\"decode\": true, \"op\": \"%s\", \"dtype\": \"%s\", \"device\": "
                    "\"%s\", \"rows\": %lld, \"numel\": %lld, \"us\": %.6g, \"torch_us\": %s}",
                    r.op.c_str(), r.dtype.c_str(), r.device.c_str(),
                    static_cast<long long>(r.rows), static_cast<long long>(r.numel), r.us,
                    torch_us);
    } else if (r.is_linear) {
      std::snprintf(buf, sizeof(buf),
                    "  {\"op\": \"%s\", \"dtype\": \"%s\", \"device\": \"%s\", \"numel\": %lld, "
                    "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"ms\": %.6g, \"gflops\": %.6g, "
                    "\"blas_gflops\": %.6g}",
                    r.op.c_str(), r.dtype.c_str(), r.device.c_str(),
                    static_cast<long long>(r.numel), static_cast<long long>(r.m),
                    static_cast<long long>(r.n), static_cast<long long>(r.k), r.ms, r.gflops,
                    r.blas_gflops);
    } else {
      std::snprintf(buf, sizeof(buf),
                    "  {\"op\": \"%s\", \"dtype\": \"%s\", \"device\": \"%s\", \"numel\": %lld, "
                    "\"bytes\": %.0f, \"ms\": %.6g, \"gbps\": %.6g, \"copy_gbps\": %.6g}",
                    r.op.c_str(), r.dtype.c_str(), r.device.c_str(),
                    static_cast<long long>(r.numel), r.bytes, r.ms, r.gbps, r.copy_gbps);
    }
    f << buf << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  f << "]\n";
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t c = s.find(',', start);
    out.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "bench_kernels: %s\nusage: bench_kernels [--json PATH] [--sizes-mib 1,16,256] "
               "[--dtypes f32,f16,bf16] [--min-time-s 0.2] [--no-linear] [--decode-rows 1,8,64] "
               "[--no-decode]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--json") {
      o.json = value();
    } else if (a == "--sizes-mib") {
      o.sizes_mib.clear();
      for (const std::string& s : SplitComma(value())) o.sizes_mib.push_back(std::atof(s.c_str()));
    } else if (a == "--dtypes") {
      o.dtypes.clear();
      for (const std::string& s : SplitComma(value())) {
        auto d = opreg::ParseDType(s);
        if (!d.ok()) Usage(("unknown dtype " + s).c_str());
        o.dtypes.push_back(*d);
      }
    } else if (a == "--min-time-s") {
      o.min_time_s = std::atof(value().c_str());
    } else if (a == "--no-linear") {
      o.linear = false;
    } else if (a == "--decode-rows") {
      o.decode_rows.clear();
      for (const std::string& s : SplitComma(value())) o.decode_rows.push_back(std::atoll(s.c_str()));
    } else if (a == "--no-decode") {
      o.decode_rows.clear();
    } else {
      Usage(("unknown argument " + a).c_str());
    }
  }
  std::vector<Row> rows;
  std::printf("CPU: %d OpenMP threads (kernels and the reference copy)\n", omp_get_max_threads());
  std::printf("%-20s %-5s %-7s %12s %10s %10s %9s %9s %7s\n", "op", "dtype", "device", "numel",
              "MiB moved", "ms", "GB/s", "copy GB/s", "of copy");
  BenchMemory(o, Device::cpu(), &rows);
  if (o.linear) {
    std::printf("%-20s %-5s %-7s %17s %10s %14s %14s %7s\n", "op", "dtype", "device", "MxNxK", "ms",
                "opreg", "cblas_sgemm f32", "of BLAS");
    BenchLinear(o, Device::cpu(), &rows);
  }
  if (!o.decode_rows.empty()) BenchDecode(o, &rows);
  if (opreg::CudaAvailable()) {
#if defined(OPREG_BENCH_HAVE_CUDA)
    std::printf("\nCUDA (cuda:0): CUDA events; reference: D2D cudaMemcpyAsync / cublasGemmEx\n");
    BenchMemory(o, Device::cuda(0), &rows);
    if (o.linear) BenchLinear(o, Device::cuda(0), &rows);
#endif
  } else {
    std::printf("\nCUDA: skipped (no CUDA device: opreg::CudaAvailable() is false)\n");
  }
  if (!o.json.empty()) WriteJson(o.json, rows);
  return 0;
}
