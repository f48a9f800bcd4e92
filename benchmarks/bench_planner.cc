// bench_planner: arena placement vs the lower bound and the allocator baselines on synthetic
// traces (planner_traces.h), plus plan time for 10,000 buffers.
//
//   bench_planner [--json PATH] [--plot DIR] [--runs N]
//                 [--budget-ms N] [--minimalloc DIR] [--minimalloc-bin PATH] [--exact-json PATH]
//
// Table on stdout: per trace the no-reuse total ("naive"), the caching-allocator model's reserved
// peak, exact-size reuse with the #159530 rule, the arena, the LB, arena/LB and the plan time
// (best of N runs). --json writes a list of objects (keys: trace, kind, buffers, steps,
// alignment, naive_bytes, eager_bytes, caching_bytes, caching_segments, reuse_bytes,
// reuse_avoided, reuse_no_rule_bytes, arena_bytes, lb_bytes, arena_over_lb, plan_ms, strategy,
// verified, live_bytes). --plot writes DIR/<trace>.png (live bytes per step, arena and LB lines)
// when built with libpng. Exit status 1 when a placement fails to verify.
//
// --budget-ms N adds the exact-mode section (planner_exact_section.h): the model traces, ten
// guillotine instances with a known optimum (LB = W) and every `*.csv` of MiniMalloc's
// benchmark (google/minimalloc, benchmarks/challenging/, Apache-2.0; kept in
// tests/data/minimalloc, or --minimalloc DIR), each placed by the heuristics and by the exact
// search, side by side; --minimalloc-bin PATH (a MiniMalloc solver built from google/minimalloc)
// also times MiniMalloc on each of its instances at their capacity, in the same run.
// --exact-json PATH writes that section's rows.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "opreg/planner/allocator_baselines.h"
#include "planner_exact_section.h"
#include "planner_traces.h"

#ifdef OPREG_BENCH_HAVE_PNG
#include <png.h>
#endif

namespace {

using opreg::BufferInterval;
using opreg::TraceSummary;
using opreg::bench::Trace;

// Live bytes per step (sizes rounded to the alignment): the curve the LB is the maximum of.
std::vector<int64_t> LiveBytes(const std::vector<BufferInterval>& b, int64_t alignment) {
  int64_t steps = 0;
  for (const auto& x : b) steps = std::max<int64_t>(steps, x.last + 1);
  std::vector<int64_t> live(static_cast<size_t>(steps) + 1, 0);
  for (const auto& x : b) {
    const int64_t s = opreg::AlignUp(x.size, alignment);
    live[static_cast<size_t>(x.first)] += s;
    live[static_cast<size_t>(x.last) + 1] -= s;
  }
  for (size_t i = 1; i < live.size(); ++i) live[i] += live[i - 1];
  live.pop_back();
  return live;
}

std::string Mib(int64_t bytes) {
  char buf[32];
  if (bytes < 1 << 20) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return buf;
}

#ifdef OPREG_BENCH_HAVE_PNG
// A tiny rasterizer: live bytes as filled columns (blue), the arena (red) and LB (green, dashed)
// as horizontal lines, axes in black. No text: the file name says which trace it is.
bool WritePlot(const std::string& path, const std::vector<int64_t>& live, int64_t arena,
               int64_t lb) {
  const int w = 1000, h = 400, left = 40, right = 10, top = 10, bottom = 30;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3, 255);
  auto put = [&](int x, int y, uint8_t r, uint8_t g, uint8_t b) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    uint8_t* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
    p[0] = r;
    p[1] = g;
    p[2] = b;
  };
  const int pw = w - left - right, ph = h - top - bottom;
  const double ymax = std::max<double>(1.0, static_cast<double>(std::max(arena, lb)) * 1.08);
  auto ypix = [&](double v) { return top + ph - static_cast<int>(v / ymax * ph); };
  const size_t n = std::max<size_t>(1, live.size());
  for (int x = 0; x < pw; ++x) {
    // The steps this column covers; draw their maximum.
    const size_t s0 = static_cast<size_t>(static_cast<double>(x) * n / pw);
    const size_t s1 = std::max(s0 + 1, static_cast<size_t>(static_cast<double>(x + 1) * n / pw));
    int64_t v = 0;
    for (size_t s = s0; s < s1 && s < live.size(); ++s) v = std::max(v, live[s]);
    for (int y = ypix(static_cast<double>(v)); y < top + ph; ++y) put(left + x, y, 70, 110, 200);
  }
  for (int x = 0; x < pw; ++x) {
    put(left + x, ypix(static_cast<double>(arena)), 220, 30, 30);
    put(left + x, ypix(static_cast<double>(arena)) - 1, 220, 30, 30);
    if ((x / 6) % 2 == 0) put(left + x, ypix(static_cast<double>(lb)) + 1, 20, 150, 40);
  }
  for (int x = left - 1; x < w - right; ++x) put(x, top + ph, 0, 0, 0);
  for (int y = top; y <= top + ph; ++y) put(left - 1, y, 0, 0, 0);

  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (png == nullptr || info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    return false;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < h; ++y) png_write_row(png, &rgb[static_cast<size_t>(y) * w * 3]);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(f);
  return true;
}
#endif

struct Row {
  Trace trace;
  int64_t alignment;
  TraceSummary s;
  std::vector<int64_t> live;
};

void WriteJson(std::ostream& os, const std::vector<Row>& rows) {
  os << "[\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const TraceSummary& s = r.s;
    char ratio[32], ms[32];
    std::snprintf(ratio, sizeof ratio, "%.6f",
                  s.lb_bytes > 0 ? static_cast<double>(s.arena_bytes) / s.lb_bytes : 1.0);
    std::snprintf(ms, sizeof ms, "%.4f", s.plan_ms);
    os << "  {\"trace\": \"" << r.trace.name << "\", \"kind\": \"" << r.trace.kind
       << "\", \"buffers\": " << s.buffers << ", \"steps\": " << s.steps
       << ", \"alignment\": " << s.alignment << ", \"naive_bytes\": " << s.no_reuse_bytes
       << ", \"eager_bytes\": " << s.eager_bytes
       << ", \"caching_bytes\": " << s.caching.reserved_peak
       << ", \"caching_segments\": " << s.caching.segments
       << ", \"reuse_bytes\": " << s.reuse.peak_bytes << ", \"reuse_avoided\": " << s.reuse.reused
       << ", \"reuse_no_rule_bytes\": " << s.reuse_no_rule_bytes
       << ", \"arena_bytes\": " << s.arena_bytes << ", \"lb_bytes\": " << s.lb_bytes
       << ", \"arena_over_lb\": " << ratio << ", \"plan_ms\": " << ms << ", \"strategy\": \""
       << s.strategy << "\", \"verified\": " << (s.verified ? "true" : "false")
       << ", \"live_bytes\": [";
    for (size_t k = 0; k < r.live.size(); ++k) os << (k ? "," : "") << r.live[k];
    os << "]}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  os << "]\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path, plot_dir, minimalloc_dir, exact_json_path, minimalloc_bin;
  int runs = 5;
  double budget_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--json" || a == "--plot" || a == "--runs" || a == "--budget-ms" ||
         a == "--minimalloc" || a == "--exact-json" || a == "--minimalloc-bin") &&
        i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--json") json_path = v;
      if (a == "--plot") plot_dir = v;
      if (a == "--runs") runs = std::max(1, std::atoi(v.c_str()));
      if (a == "--budget-ms") budget_ms = std::max(0.0, std::atof(v.c_str()));
      if (a == "--minimalloc") minimalloc_dir = v;
      if (a == "--exact-json") exact_json_path = v;
      if (a == "--minimalloc-bin") minimalloc_bin = v;
    } else {
      std::cerr << "usage: bench_planner [--json PATH] [--plot DIR] [--runs N] [--budget-ms N] "
                   "[--minimalloc DIR] [--minimalloc-bin PATH] [--exact-json PATH]\n";
      return 2;
    }
  }
#ifndef OPREG_BENCH_HAVE_PNG
  if (!plot_dir.empty()) {
    std::cerr << "bench_planner: built without libpng, --plot ignored\n";
    plot_dir.clear();
  }
#endif

  std::vector<Trace> traces = opreg::bench::AllTraces();
  traces.push_back(opreg::bench::ScalingRandom(10000, 42));
  std::vector<Row> rows;
  bool all_verified = true;
  std::printf("%-24s %-7s %6s %12s %12s %12s %12s %12s %8s %9s  %s\n", "trace", "kind", "#bufs",
              "naive", "caching", "reuse", "arena", "LB", "arena/LB", "plan ms", "strategy");
  for (Trace& t : traces) {
    const int64_t alignment = t.name == "pisarchyk_lee_8" ? 1 : 64;
    Row r{std::move(t), alignment, {}, {}};
    r.s = opreg::SummarizeTrace(r.trace.buffers, alignment, runs);
    r.live = LiveBytes(r.trace.buffers, alignment);
    all_verified = all_verified && r.s.verified;
    const TraceSummary& s = r.s;
    std::printf("%-24s %-7s %6lld %12s %12s %12s %12s %12s %8.3f %9.3f  %s%s\n",
                r.trace.name.c_str(), r.trace.kind.c_str(), static_cast<long long>(s.buffers),
                Mib(s.no_reuse_bytes).c_str(), Mib(s.caching.reserved_peak).c_str(),
                Mib(s.reuse.peak_bytes).c_str(), Mib(s.arena_bytes).c_str(),
                Mib(s.lb_bytes).c_str(),
                s.lb_bytes > 0 ? static_cast<double>(s.arena_bytes) / s.lb_bytes : 1.0, s.plan_ms,
                s.strategy.c_str(), s.verified ? "" : "  NOT VERIFIED");
#ifdef OPREG_BENCH_HAVE_PNG
    if (!plot_dir.empty() &&
        !WritePlot(plot_dir + "/" + r.trace.name + ".png", r.live, s.arena_bytes, s.lb_bytes)) {
      std::cerr << "bench_planner: cannot write " << plot_dir << "/" << r.trace.name << ".png\n";
    }
#endif
    rows.push_back(std::move(r));
  }

  // Targets (issue 4): arena == LB on the model traces, median arena/LB <= 1.35 on the hard set,
  // plan time < 50 ms for 10,000 buffers.
  bool models_at_lb = true;
  std::vector<double> hard;
  double scaling_ms = 0;
  for (const Row& r : rows) {
    if (r.trace.kind == "model") models_at_lb = models_at_lb && r.s.arena_bytes == r.s.lb_bytes;
    if (r.trace.kind == "hard") hard.push_back(static_cast<double>(r.s.arena_bytes) / r.s.lb_bytes);
    if (r.trace.kind == "scaling") scaling_ms = r.s.plan_ms;
  }
  std::sort(hard.begin(), hard.end());
  const double median = hard.empty() ? 0 : hard[hard.size() / 2];
  std::printf("\ntargets:\n");
  std::printf("  arena == LB on every model trace:          %s\n", models_at_lb ? "yes" : "NO");
  std::printf("  hard set arena/LB median %.3f (min %.3f, max %.3f) <= 1.35: %s\n", median,
              hard.empty() ? 0 : hard.front(), hard.empty() ? 0 : hard.back(),
              median <= 1.35 ? "yes" : "NO");
  std::printf("  plan time for 10,000 buffers %.2f ms < 50 ms: %s\n", scaling_ms,
              scaling_ms < 50 ? "yes" : "NO");
  std::printf("  every placement verified:                  %s\n", all_verified ? "yes" : "NO");

  if (!json_path.empty()) {
    std::ofstream out(json_path);
    if (!out) {
      std::cerr << "bench_planner: cannot write " << json_path << "\n";
      return 2;
    }
    WriteJson(out, rows);
  }
  if (budget_ms > 0) {
    std::vector<opreg::bench::ExactCase> cases;
    for (const Row& r : rows) {
      if (r.trace.kind == "model") cases.push_back({r.trace, r.alignment, 0});
    }
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      cases.push_back({opreg::bench::Guillotine(seed, 7), 1, 0});
    }
#ifdef OPREG_MINIMALLOC_DIR
    if (minimalloc_dir.empty() && std::filesystem::is_directory(OPREG_MINIMALLOC_DIR)) {
      minimalloc_dir = OPREG_MINIMALLOC_DIR;
    }
#endif
    if (!minimalloc_dir.empty()) {
      std::vector<std::string> files;
      for (const auto& entry : std::filesystem::directory_iterator(minimalloc_dir)) {
        if (entry.path().extension() == ".csv") files.push_back(entry.path().string());
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        std::cerr << "bench_planner: no .csv files in " << minimalloc_dir << "\n";
        return 2;
      }
      for (const std::string& f : files) {
        opreg::bench::ExactCase c;
        try {
          c.trace = opreg::bench::ReadMiniMallocCsv(f, &c.capacity);
        } catch (const std::exception& e) {
          std::cerr << "bench_planner: " << e.what() << "\n";
          return 2;
        }
        c.alignment = 1;
        c.source_csv = f;
        cases.push_back(std::move(c));
      }
    }
    std::ofstream exact_json;
    if (!exact_json_path.empty()) {
      exact_json.open(exact_json_path);
      if (!exact_json) {
        std::cerr << "bench_planner: cannot write " << exact_json_path << "\n";
        return 2;
      }
    }
    all_verified =
        opreg::bench::RunExactSection(
            cases, budget_ms, exact_json_path.empty() ? nullptr : &exact_json, minimalloc_bin) &&
        all_verified;
  }
  return all_verified ? 0 : 1;
}
