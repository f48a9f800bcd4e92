#include "plan_command.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "opreg/core/string_util.h"

namespace opreg::cli {
namespace {

constexpr char kUsage[] =
    "usage: opreg plan [--alignment N] [--json] [--offsets] TRACE.json\n"
    "Places the trace's buffers in one arena (greedy by size / lifetime / area + online best\n"
    "fit, best kept) and prints: no-reuse total (naive), the CUDA caching-allocator model's\n"
    "reserved peak, exact-size reuse with the no-peak-increase rule, the arena, the lower bound\n"
    "(max live bytes), arena/LB, plan time and the winning strategy.\n"
    "  --alignment N  offset alignment in bytes (default: the file's, else 64)\n"
    "  --json         print one JSON object instead of the table row\n"
    "  --offsets      also print each buffer's offset\n"
    "Trace format: {\"alignment\": 64, \"buffers\": [{\"size\": 1024, \"first\": 0, \"last\": 3}, ...]}"
    " (docs/trace_format.md)\n";

// ---- A small JSON reader: enough for trace files, with positions in its errors ----------------

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool boolean = false;
  std::string text;     // string value, or the number's literal
  bool integer = false; // number without fraction or exponent
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
  int line = 1, column = 1;
};

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  absl::StatusOr<Json> Document() {
    Json v;
    if (absl::Status st = Value(&v, 0); !st.ok()) return st;
    Skip();
    if (pos_ < s_.size()) return Error("unexpected text after the JSON value");
    return v;
  }

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(StrCat("line ", line_, ", column ", column_, ": ", what));
  }

 private:
  void Advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  void Skip() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      Advance();
    }
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    for (size_t i = 0; i < word.size(); ++i) Advance();
    return true;
  }

  absl::Status Value(Json* v, int depth) {
    if (depth > 64) return Error("nesting too deep");
    Skip();
    v->line = line_;
    v->column = column_;
    if (pos_ >= s_.size()) return Error("unexpected end of input, expected a value");
    const char c = s_[pos_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v->kind = Json::kString;
      return String(&v->text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Number(v);
    if (Literal("true")) {
      v->kind = Json::kBool;
      v->boolean = true;
      return absl::OkStatus();
    }
    if (Literal("false")) {
      v->kind = Json::kBool;
      return absl::OkStatus();
    }
    if (Literal("null")) return absl::OkStatus();
    return Error(StrCat("unexpected character '", std::string(1, c), "'"));
  }

  absl::Status Object(Json* v, int depth) {
    v->kind = Json::kObject;
    Advance();  // {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      Advance();
      return absl::OkStatus();
    }
    while (true) {
      Skip();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a string key");
      std::string key;
      if (absl::Status st = String(&key); !st.ok()) return st;
      Skip();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Error("expected ':' after a key");
      Advance();
      Json member;
      if (absl::Status st = Value(&member, depth + 1); !st.ok()) return st;
      v->members.emplace_back(std::move(key), std::move(member));
      Skip();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        Advance();
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        Advance();
        return absl::OkStatus();
      }
      return Error("expected ',' or '}' in an object");
    }
  }

  absl::Status Array(Json* v, int depth) {
    v->kind = Json::kArray;
    Advance();  // [
    Skip();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      Advance();
      return absl::OkStatus();
    }
    while (true) {
      Json item;
      if (absl::Status st = Value(&item, depth + 1); !st.ok()) return st;
      v->items.push_back(std::move(item));
      Skip();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        Advance();
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        Advance();
        return absl::OkStatus();
      }
      return Error("expected ',' or ']' in an array");
    }
  }

  absl::Status String(std::string* out) {
    Advance();  // "
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '"') {
        Advance();
        return absl::OkStatus();
      }
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
      if (c == '\\') {
        Advance();
        if (pos_ >= s_.size()) break;
        const char e = s_[pos_];
        switch (e) {
          case '"': case '\\': case '/': out->push_back(e); break;
          case 'b': out->push_back('\b'); break;
          case 'f': out->push_back('\f'); break;
          case 'n': out->push_back('\n'); break;
          case 'r': out->push_back('\r'); break;
          case 't': out->push_back('\t'); break;
          case 'u':  // kept as written: names are labels only
            out->append("\\u");
            break;
          default:
            return Error("bad escape in a string");
        }
        Advance();
        continue;
      }
      out->push_back(c);
      Advance();
    }
    return Error("unterminated string");
  }

  absl::Status Number(Json* v) {
    v->kind = Json::kNumber;
    v->integer = true;
    const size_t start = pos_;
    if (s_[pos_] == '-') Advance();
    size_t digits = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      Advance();
      ++digits;
    }
    if (digits == 0) return Error("expected digits in a number");
    while (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E' ||
                                s_[pos_] == '+' || s_[pos_] == '-' ||
                                (s_[pos_] >= '0' && s_[pos_] <= '9'))) {
      v->integer = false;
      Advance();
    }
    v->text = std::string(s_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1, column_ = 1;
};

absl::Status At(const Json& v, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("line ", v.line, ", column ", v.column, ": ", what));
}

// An integer in [lo, hi].
absl::StatusOr<int64_t> Integer(const Json& v, std::string_view name, int64_t lo, int64_t hi) {
  if (v.kind != Json::kNumber || !v.integer) {
    return At(v, StrCat("expected an integer for \"", name, "\""));
  }
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.text.c_str(), &end, 10);
  if (errno == ERANGE || x < lo || x > hi) {
    return At(v, StrCat("\"", name, "\" = ", v.text, " is out of range [", lo, ", ", hi, "]"));
  }
  return static_cast<int64_t>(x);
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

absl::StatusOr<PlanTrace> ParsePlanTrace(std::string_view text) {
  Reader reader(text);
  absl::StatusOr<Json> doc = reader.Document();
  if (!doc.ok()) return doc.status();
  if (doc->kind != Json::kObject) return At(*doc, "a trace is a JSON object with \"buffers\"");
  PlanTrace trace;
  const Json* buffers = nullptr;
  for (const auto& [key, value] : doc->members) {
    if (key == "buffers") {
      buffers = &value;
    } else if (key == "alignment") {
      absl::StatusOr<int64_t> a = Integer(value, "alignment", 1, int64_t{1} << 30);
      if (!a.ok()) return a.status();
      trace.alignment = *a;
    } else if (key == "name") {
      if (value.kind != Json::kString) return At(value, "expected a string for \"name\"");
      trace.name = value.text;
    }
  }
  if (buffers == nullptr) return At(*doc, "missing \"buffers\"");
  if (buffers->kind != Json::kArray) return At(*buffers, "\"buffers\" must be an array");
  constexpr int64_t kMaxStep = std::numeric_limits<int32_t>::max() - 1;
  constexpr int64_t kMaxSize = int64_t{1} << 56;
  constexpr int64_t kMaxTotal = int64_t{1} << 60;
  int64_t total = 0;
  for (size_t i = 0; i < buffers->items.size(); ++i) {
    const Json& b = buffers->items[i];
    const Json* fields[3] = {nullptr, nullptr, nullptr};
    static const char* const kNames[3] = {"size", "first", "last"};
    if (b.kind == Json::kArray) {
      if (b.items.size() != 3) return At(b, StrCat("buffer ", i, ": expected [size, first, last]"));
      for (int k = 0; k < 3; ++k) fields[k] = &b.items[static_cast<size_t>(k)];
    } else if (b.kind == Json::kObject) {
      for (const auto& [key, value] : b.members) {
        for (int k = 0; k < 3; ++k) {
          if (key == kNames[k]) fields[k] = &value;
        }
      }
      for (int k = 0; k < 3; ++k) {
        if (fields[k] == nullptr) {
          return At(b, StrCat("buffer ", i, ": missing \"", kNames[k], "\""));
        }
      }
    } else {
      return At(b, StrCat("buffer ", i, ": expected an object or [size, first, last]"));
    }
    int64_t v[3];
    for (int k = 0; k < 3; ++k) {
      absl::StatusOr<int64_t> x = Integer(*fields[k], kNames[k], 0, k == 0 ? kMaxSize : kMaxStep);
      if (!x.ok()) return x.status();
      v[k] = *x;
    }
    if (v[1] > v[2]) {
      return At(b, StrCat("buffer ", i, ": first (", v[1], ") is after last (", v[2], ")"));
    }
    total += v[0];
    if (total > kMaxTotal) {
      return At(b, StrCat("buffer ", i, ": the sizes add up to more than 2^60 bytes"));
    }
    trace.buffers.push_back({v[0], static_cast<int32_t>(v[1]), static_cast<int32_t>(v[2])});
  }
  return trace;
}

int RunPlanCommand(const std::vector<std::string>& args) {
  std::string path;
  bool json = false, offsets = false;
  int64_t alignment = 0;  // 0: the file's
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--offsets") {
      offsets = true;
    } else if (a == "--alignment") {
      char* end = nullptr;
      const long long v = i + 1 < args.size() ? std::strtoll(args[i + 1].c_str(), &end, 10) : 0;
      if (i + 1 >= args.size() || end == args[i + 1].c_str() || *end != '\0' || v < 1 ||
          v > (1LL << 30)) {
        std::cerr << "opreg plan: --alignment needs an integer in [1, 2^30]\n" << kUsage;
        return 2;
      }
      alignment = v;
      ++i;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::cerr << "opreg plan: unknown option " << a << "\n" << kUsage;
      return 2;
    } else if (path.empty()) {
      path = a;
    } else {
      std::cerr << "opreg plan: give one trace file\n" << kUsage;
      return 2;
    }
  }
  if (path.empty()) {
    std::cerr << "opreg plan: missing TRACE.json\n" << kUsage;
    return 2;
  }
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "opreg plan: cannot read " << path << "\n";
      return 2;
    }
    text << in.rdbuf();
  }
  absl::StatusOr<PlanTrace> trace = ParsePlanTrace(text.str());
  if (!trace.ok()) {
    std::cerr << "opreg plan: " << path << ": " << trace.status().message() << "\n";
    return 2;
  }
  if (alignment > 0) trace->alignment = alignment;
  if (trace->name.empty()) trace->name = path;

  TraceSummary s;
  try {
    s = SummarizeTrace(trace->buffers, trace->alignment, 3);
  } catch (const std::exception& e) {
    std::cerr << "opreg plan: " << path << ": " << e.what() << "\n";
    return 2;
  }
  const double ratio = s.lb_bytes > 0 ? static_cast<double>(s.arena_bytes) / s.lb_bytes : 1.0;
  if (json) {
    std::string name;
    for (char c : trace->name) {
      if (c == '"' || c == '\\') name.push_back('\\');
      name.push_back(c);
    }
    std::cout << "{\"trace\": \"" << name << "\", \"buffers\": " << s.buffers
              << ", \"steps\": " << s.steps << ", \"alignment\": " << s.alignment
              << ", \"naive_bytes\": " << s.no_reuse_bytes << ", \"eager_bytes\": " << s.eager_bytes
              << ", \"caching_bytes\": " << s.caching.reserved_peak
              << ", \"caching_segments\": " << s.caching.segments
              << ", \"reuse_bytes\": " << s.reuse.peak_bytes
              << ", \"reuse_avoided\": " << s.reuse.reused << ", \"arena_bytes\": " << s.arena_bytes
              << ", \"lb_bytes\": " << s.lb_bytes << ", \"arena_over_lb\": " << Fixed(ratio, 6)
              << ", \"plan_ms\": " << Fixed(s.plan_ms, 4) << ", \"strategy\": \"" << s.strategy
              << "\", \"verified\": " << (s.verified ? "true" : "false");
    if (offsets) {
      std::cout << ", \"offsets\": [";
      for (size_t i = 0; i < s.placement.offsets.size(); ++i) {
        std::cout << (i ? "," : "") << s.placement.offsets[i];
      }
      std::cout << "]";
    }
    std::cout << "}\n";
  } else {
    char line[512];
    std::snprintf(line, sizeof line, "%-24s %6s %14s %14s %14s %14s %14s %8s %9s  %s\n", "trace",
                  "#bufs", "naive", "caching", "reuse", "arena", "LB", "arena/LB", "plan ms",
                  "strategy");
    std::cout << line;
    std::snprintf(line, sizeof line, "%-24s %6lld %14lld %14lld %14lld %14lld %14lld %8.3f %9.3f  ",
                  trace->name.c_str(), static_cast<long long>(s.buffers),
                  static_cast<long long>(s.no_reuse_bytes),
                  static_cast<long long>(s.caching.reserved_peak),
                  static_cast<long long>(s.reuse.peak_bytes),
                  static_cast<long long>(s.arena_bytes), static_cast<long long>(s.lb_bytes), ratio,
                  s.plan_ms);
    std::cout << line << s.strategy << "\n";
    if (offsets) {
      for (size_t i = 0; i < s.placement.offsets.size(); ++i) {
        std::cout << "buffer " << i << ": offset " << s.placement.offsets[i] << "\n";
      }
    }
  }
  std::cout.flush();
  if (!s.verified) {
    std::cerr << "opreg plan: internal error: the placement does not verify\n";
    return 1;
  }
  return 0;
}

}  // namespace opreg::cli
