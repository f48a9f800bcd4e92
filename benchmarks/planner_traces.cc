#include "planner_traces.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace opreg::bench {

TraceBuilder::TraceBuilder(std::string name, std::string kind) {
  trace_.name = std::move(name);
  trace_.kind = std::move(kind);
}

int TraceBuilder::Output(int64_t bytes) {
  trace_.buffers.push_back({bytes, step_, step_});
  return static_cast<int>(trace_.buffers.size() - 1);
}

void TraceBuilder::Read(int v) {
  if (v < 0) return;  // a graph input: not a buffer
  BufferInterval& b = trace_.buffers[static_cast<size_t>(v)];
  b.last = std::max(b.last, step_);
}

void TraceBuilder::Step() { ++step_; }

int TraceBuilder::Op(std::initializer_list<int> inputs, int64_t bytes) {
  for (int v : inputs) Read(v);
  const int out = Output(bytes);
  Step();
  return out;
}

Trace TraceBuilder::Finish() && { return std::move(trace_); }

Trace PisarchykLeeExample() {
  return {"pisarchyk_lee_8",
          "model",
          {{32, 0, 1},
           {28, 1, 4},
           {36, 2, 5},
           {16, 3, 5},
           {8, 4, 5},
           {64, 5, 7},
           {10, 6, 8},
           {40, 7, 8}}};
}

Trace MobileNetV2(int batch) {
  TraceBuilder t("mobilenet_v2_b" + std::to_string(batch));
  const int64_t f = 4LL * batch;  // fp32 bytes per element per image
  int64_t hw = 112;
  int x = t.Op({-1}, f * 32 * hw * hw);  // stem conv 3x3 s2
  int64_t cin = 32;
  const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                         {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& c : cfg) {
    for (int i = 0; i < c[2]; ++i) {
      const int s = i == 0 ? c[3] : 1;
      const int64_t hidden = cin * c[0];
      const int e = c[0] == 1 ? x : t.Op({x}, f * hidden * hw * hw);  // expand 1x1
      const int64_t out_hw = hw / s;
      const int dw = t.Op({e}, f * hidden * out_hw * out_hw);                   // depthwise 3x3
      int y = t.Op({dw}, f * c[1] * out_hw * out_hw);                           // project 1x1
      if (s == 1 && cin == c[1]) y = t.Op({x, y}, f * c[1] * out_hw * out_hw);  // residual add
      x = y;
      cin = c[1];
      hw = out_hw;
    }
  }
  x = t.Op({x}, f * 1280 * hw * hw);  // conv 1x1 1280
  x = t.Op({x}, f * 1280);            // global average pool
  x = t.Op({x}, f * 1000);            // classifier
  t.Op({x}, f * 1000);                // softmax
  return std::move(t).Finish();
}

Trace ResNet50(int batch) {
  TraceBuilder t("resnet50_b" + std::to_string(batch));
  const int64_t f = 4LL * batch;
  int x = t.Op({-1}, f * 64 * 112 * 112);  // conv1 7x7 s2
  x = t.Op({x}, f * 64 * 56 * 56);         // maxpool
  int64_t hw = 56;
  const int stages[4][4] = {
      {64, 256, 3, 1}, {128, 512, 4, 2}, {256, 1024, 6, 2}, {512, 2048, 3, 2}};
  for (const auto& st : stages) {
    for (int i = 0; i < st[2]; ++i) {
      const int s = i == 0 ? st[3] : 1;
      const int64_t out_hw = hw / s;
      const int a = t.Op({x}, f * st[0] * hw * hw);                              // 1x1 reduce
      const int b = t.Op({a}, f * st[0] * out_hw * out_hw);                      // 3x3 (stride)
      const int c = t.Op({b}, f * st[1] * out_hw * out_hw);                      // 1x1 expand
      const int identity = i == 0 ? t.Op({x}, f * st[1] * out_hw * out_hw) : x;  // downsample
      x = t.Op({c, identity}, f * st[1] * out_hw * out_hw);                      // add + relu
      hw = out_hw;
    }
  }
  x = t.Op({x}, f * 2048);  // average pool
  t.Op({x}, f * 1000);      // fc
  return std::move(t).Finish();
}

Trace Gpt2(int batch, int seq, int layers, bool fused_attention) {
  TraceBuilder t(std::string("gpt2s_b") + std::to_string(batch) + "_t" + std::to_string(seq) +
                 (fused_attention ? "_fused" : "_eager"));
  const int64_t d = 768, heads = 12, mlp = 3072, h = 2;  // fp16
  const int64_t btd = batch * seq * d * h;
  int x = -1;  // the embeddings: a graph input
  for (int l = 0; l < layers; ++l) {
    const int ln1 = t.Op({x}, btd);
    t.Read(ln1);  // qkv: one op, three outputs
    const int q = t.Output(btd), k = t.Output(btd), v = t.Output(btd);
    t.Step();
    int ctx;
    if (fused_attention) {
      t.Read(q);
      t.Read(k);
      t.Read(v);
      ctx = t.Output(btd);
      t.Output(batch * heads * seq * 4);  // fp32 log-sum-exp, nobody reads it
      t.Step();
    } else {
      const int scores = t.Op({q, k}, batch * heads * seq * seq * h);
      const int probs = t.Op({scores}, batch * heads * seq * seq * h);
      ctx = t.Op({probs, v}, btd);
    }
    const int proj = t.Op({ctx}, btd);
    const int add1 = t.Op({x, proj}, btd);
    const int ln2 = t.Op({add1}, btd);
    const int fc1 = t.Op({ln2}, batch * seq * mlp * h);
    const int gelu = t.Op({fc1}, batch * seq * mlp * h);
    const int fc2 = t.Op({gelu}, btd);
    x = t.Op({add1, fc2}, btd);
  }
  t.Op({x}, btd);  // final layer norm (the graph output)
  return std::move(t).Finish();
}

Trace MlpTraining(int batch, int width) {
  TraceBuilder t("mlp_fwd_bwd_b" + std::to_string(batch));
  const int64_t act = 4LL * batch * width, grad_w = 4LL * width * width;
  // Forward: 4 linear layers, ReLU after the first three; activations saved for backward.
  const int h1 = t.Op({-1}, act), a1 = t.Op({h1}, act);
  const int h2 = t.Op({a1}, act), a2 = t.Op({h2}, act);
  const int h3 = t.Op({a2}, act), a3 = t.Op({h3}, act);
  const int logits = t.Op({a3}, act);
  const int loss = t.Op({logits}, 4);
  // Backward.
  const int g_logits = t.Op({logits, loss}, act);
  const int g_w4 = t.Op({g_logits, a3}, grad_w);
  const int g_a3 = t.Op({g_logits}, act);
  const int g_h3 = t.Op({g_a3, h3}, act);
  const int g_w3 = t.Op({g_h3, a2}, grad_w);
  const int g_a2 = t.Op({g_h3}, act);
  const int g_h2 = t.Op({g_a2, h2}, act);
  const int g_w2 = t.Op({g_h2, a1}, grad_w);
  const int g_a1 = t.Op({g_h2}, act);
  const int g_h1 = t.Op({g_a1, h1}, act);
  const int g_w1 = t.Op({g_h1}, grad_w);
  // The optimizer step reads every weight gradient (gradient-norm clipping: one scalar out).
  t.Op({g_w1, g_w2, g_w3, g_w4}, 4);
  return std::move(t).Finish();
}

Trace ServingLoop(int calls, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> len(1, 16);
  Trace all{"serving_loop_" + std::to_string(calls), "model", {}};
  int offset = 0;
  for (int c = 0; c < calls; ++c) {
    Trace one = Gpt2(1, 128 * len(rng), 2, /*fused_attention=*/true);
    int steps = 0;
    for (BufferInterval b : one.buffers) {
      steps = std::max(steps, b.last + 1);
      b.first += offset;
      b.last += offset;
      all.buffers.push_back(b);
    }
    offset += steps;
  }
  return all;
}

Trace HardRandom(int n, uint64_t seed, const std::string& name) {
  std::mt19937_64 rng(seed);
  const int steps = std::max(2, n / 2);
  std::uniform_int_distribution<int> first(0, steps - 1), len(0, steps / 4);
  std::uniform_real_distribution<double> log_size(std::log(1024.0), std::log(65536.0));
  Trace tr{name, "hard", {}};
  for (int i = 0; i < n; ++i) {
    const int f = first(rng);
    const int64_t size = (static_cast<int64_t>(std::exp(log_size(rng))) + 63) / 64 * 64;
    tr.buffers.push_back({size, f, std::min(steps - 1, f + len(rng))});
  }
  return tr;
}

Trace ScalingRandom(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> first(0, n - 1), pct(0, 99);
  std::uniform_int_distribution<int> short_len(0, 4), mid_len(5, 100), long_len(101, 2000);
  std::uniform_real_distribution<double> log_size(std::log(4096.0), std::log(16.0 * (1 << 20)));
  Trace tr{"scaling_random_" + std::to_string(n), "scaling", {}};
  for (int i = 0; i < n; ++i) {
    const int f = first(rng);
    const int p = pct(rng);
    const int l = p < 90 ? short_len(rng) : (p < 99 ? mid_len(rng) : long_len(rng));
    tr.buffers.push_back(
        {static_cast<int64_t>(std::exp(log_size(rng))), f, std::min(n - 1, f + l)});
  }
  return tr;
}

std::vector<Trace> AllTraces() {
  std::vector<Trace> traces;
  traces.push_back(PisarchykLeeExample());
  traces.push_back(MobileNetV2(1));
  traces.push_back(ResNet50(1));
  traces.push_back(ResNet50(32));
  traces.push_back(Gpt2(8, 1024, 12, /*fused_attention=*/false));
  traces.push_back(Gpt2(8, 1024, 12, /*fused_attention=*/true));
  traces.push_back(MlpTraining(64, 4096));
  traces.push_back(ServingLoop(60, 7));
  const int sizes[11] = {154, 190, 230, 270, 310, 350, 380, 410, 430, 450, 300};
  for (int i = 0; i < 11; ++i) {
    traces.push_back(HardRandom(sizes[i], 1000 + static_cast<uint64_t>(i),
                                std::string("hard_") + static_cast<char>('A' + i)));
  }
  return traces;
}

namespace {
void Cut(std::mt19937_64& rng, int64_t x0, int64_t x1, int32_t t0, int32_t t1, int depth,
         std::vector<BufferInterval>* out) {
  const bool can_cut_x = x1 - x0 >= 2, can_cut_t = t1 - t0 >= 2;
  if (depth == 0 || (!can_cut_x && !can_cut_t) || (depth < 4 && rng() % 4 == 0)) {
    out->push_back({x1 - x0, t0, t1 - 1});
    return;
  }
  if (can_cut_x && (!can_cut_t || rng() % 2 == 0)) {
    const int64_t x = x0 + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(x1 - x0 - 1));
    Cut(rng, x0, x, t0, t1, depth - 1, out);
    Cut(rng, x, x1, t0, t1, depth - 1, out);
  } else {
    const int32_t t = t0 + 1 + static_cast<int32_t>(rng() % static_cast<uint64_t>(t1 - t0 - 1));
    Cut(rng, x0, x1, t0, t, depth - 1, out);
    Cut(rng, x0, x1, t, t1, depth - 1, out);
  }
}
}  // namespace

Trace Guillotine(uint64_t seed, int depth) {
  std::mt19937_64 rng(seed);
  const int64_t width = 1000 + static_cast<int64_t>(rng() % 9000);
  const int32_t steps = 20 + static_cast<int32_t>(rng() % 80);
  Trace tr{"guillotine_" + std::to_string(seed), "guillotine", {}};
  Cut(rng, 0, width, 0, steps, depth, &tr.buffers);
  std::shuffle(tr.buffers.begin(), tr.buffers.end(), rng);
  return tr;
}

Trace ReadMiniMallocCsv(const std::string& path, int64_t* capacity) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::string file = path.substr(path.find_last_of('/') + 1);
  const std::string stem = file.substr(0, file.find('.'));
  *capacity = 0;
  const size_t dot = file.find('.');
  if (dot != std::string::npos) *capacity = std::atoll(file.c_str() + dot + 1);
  Trace tr{"minimalloc_" + stem, "minimalloc", {}};
  std::string line;
  std::vector<std::string> header;
  int lower = -1, upper = -1, size = -1;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
    if (header.empty()) {
      header = fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i] == "lower" || fields[i] == "begin") lower = static_cast<int>(i);
        if (fields[i] == "upper" || fields[i] == "end") upper = static_cast<int>(i);
        if (fields[i] == "size") size = static_cast<int>(i);
      }
      if (lower < 0 || upper < 0 || size < 0) {
        throw std::runtime_error(path + ": expected the columns lower, upper and size");
      }
      continue;
    }
    const size_t need = static_cast<size_t>(std::max({lower, upper, size}));
    if (fields.size() <= need) throw std::runtime_error(path + ": short line: " + line);
    const long long lo = std::atoll(fields[static_cast<size_t>(lower)].c_str());
    const long long hi = std::atoll(fields[static_cast<size_t>(upper)].c_str());
    if (lo < 0 || hi <= lo || hi > (1LL << 30)) {
      throw std::runtime_error(path + ": bad lifetime in line: " + line);
    }
    tr.buffers.push_back({std::atoll(fields[static_cast<size_t>(size)].c_str()),
                          static_cast<int32_t>(lo), static_cast<int32_t>(hi - 1)});
  }
  return tr;
}

}  // namespace opreg::bench
