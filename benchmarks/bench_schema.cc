// Schema parse / print throughput over a corpus of real schemas (one per line).
//
//   bench_schema [--corpus=FILE] [--json PATH] [Google Benchmark flags]
//
// Prints Google Benchmark's table; `--json PATH` (the same as `--benchmark_out=PATH
// --benchmark_out_format=json`) also writes the figures as JSON. `items_per_second` is schemas
// per second.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "opreg/schema/schema_parser.h"

namespace {

std::vector<std::string>& Corpus() {
  static std::vector<std::string> corpus;
  return corpus;
}

bool LoadCorpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  for (std::string line; std::getline(in, line);) {
    // The corpus is written without namespaces; parse it as ATen's.
    if (!line.empty())
      Corpus().push_back(line.find("::") == std::string::npos ? "aten::" + line : line);
  }
  return !Corpus().empty();
}

void BM_Parse(benchmark::State& state) {
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const std::string& s : Corpus()) {
      auto parsed = opreg::ParseSchema(s);
      benchmark::DoNotOptimize(parsed);
      bytes += static_cast<int64_t>(s.size());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(Corpus().size()));
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);

void BM_Print(benchmark::State& state) {
  std::vector<opreg::FunctionSchema> schemas;
  for (const std::string& s : Corpus()) schemas.push_back(*opreg::ParseSchema(s));
  for (auto _ : state) {
    for (const opreg::FunctionSchema& s : schemas) {
      std::string text = s.str();
      benchmark::DoNotOptimize(text);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(schemas.size()));
}
BENCHMARK(BM_Print)->Unit(benchmark::kMillisecond);

void BM_ParsePrint(benchmark::State& state) {
  for (auto _ : state) {
    for (const std::string& s : Corpus()) {
      std::string text = opreg::ParseSchema(s)->str();
      benchmark::DoNotOptimize(text);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(Corpus().size()));
}
BENCHMARK(BM_ParsePrint)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  std::string corpus = OPREG_CORPUS_DIR "/aten_schemas.txt";
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--corpus=", 0) == 0) {
      corpus = a.substr(9);
    } else if ((a == "--json" || a == "--corpus") && i + 1 < argc) {
      if (a == "--corpus") {
        corpus = argv[++i];
      } else {
        args.push_back(std::string("--benchmark_out=") + argv[++i]);
        args.push_back("--benchmark_out_format=json");
      }
    } else {
      args.push_back(a);
    }
  }
  std::vector<char*> rest;
  for (std::string& a : args) rest.push_back(a.data());
  if (!LoadCorpus(corpus)) {
    std::cerr << "bench_schema: cannot read a schema corpus from " << corpus
              << " (pass --corpus=FILE)\n";
    return 2;
  }
  for (const std::string& s : Corpus()) {
    if (!opreg::ParseSchema(s).ok()) {
      std::cerr << "bench_schema: corpus schema does not parse: " << s << "\n";
      return 2;
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::AddCustomContext("corpus", corpus);
  benchmark::AddCustomContext("schemas", std::to_string(Corpus().size()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
