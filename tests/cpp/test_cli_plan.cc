// `opreg plan TRACE.json`: reading a trace file, the figures it prints, and its errors.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cli_test_util.h"
#include "nlohmann/json.hpp"
#include "opreg/core/string_util.h"
#include "plan_command.h"

namespace opreg::cli {
namespace {

int Run(const std::vector<std::string>& args, std::string* out, std::string* err) {
  return testing::RunCaptured(RunPlanCommand, args, out, err);
}

// A trace file under /tmp, removed at scope exit.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/opreg_plan_test_XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr char kPisarchykLee[] = R"({
  "name": "pl8", "alignment": 1,
  "buffers": [
    {"size": 32, "first": 0, "last": 1}, {"size": 28, "first": 1, "last": 4},
    {"size": 36, "first": 2, "last": 5}, {"size": 16, "first": 3, "last": 5},
    {"size": 8, "first": 4, "last": 5, "note": "ignored"}, [64, 5, 7], [10, 6, 8], [40, 7, 8]
  ]
})";

TEST_CASE("opreg plan prints the figures of a trace file", "[cli]") {
  TempFile f(kPisarchykLee);
  std::string out, err;
  REQUIRE(Run({f.path()}, &out, &err) == 0);
  CHECK(err.empty());
  CHECK_THAT(out, Catch::StartsWith("trace "));
  CHECK_THAT(out, Catch::Contains("arena/LB"));
  // naive 234, caching 2 MiB, reuse 124, arena 124, LB 124, ratio 1.000, strategy size.
  CHECK_THAT(out, Catch::Matches("(.|\n)*pl8 +8 +234 +2097152 +124 +124 +124 +1\\.000 .* size\n"));

  REQUIRE(Run({"--json", "--offsets", f.path()}, &out, &err) == 0);
  CHECK_THAT(out, Catch::StartsWith("{\"trace\":\"pl8\",\"buffers\":8"));
  CHECK_THAT(out, Catch::Contains("\"arena_bytes\":124,\"lb_bytes\":124"));
  CHECK_THAT(out, Catch::Contains("\"naive_bytes\":234"));
  CHECK_THAT(out, Catch::Contains("\"verified\":true"));
  CHECK_THAT(out, Catch::Contains("\"offsets\":["));

  // --alignment overrides the file's.
  REQUIRE(Run({"--json", "--alignment", "64", f.path()}, &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("\"alignment\":64"));
  CHECK_THAT(out, Catch::Contains("\"lb_bytes\":256"));
}

TEST_CASE("opreg plan --budget-ms adds the exact mode; --capacity decides", "[cli]") {
  TempFile f(kPisarchykLee);
  std::string out, err;
  REQUIRE(Run({"--budget-ms", "1000", f.path()}, &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("exact (budget 1000 ms): arena 124, arena/LB 1.000, proven "
                                  "optimal by lower bound"));
  REQUIRE(Run({"--json", "--budget-ms", "1000", f.path()}, &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("\"exact\":{\"arena_bytes\":124"));
  CHECK_THAT(out, Catch::Contains("\"optimal_by\":\"lower bound\""));
  // The lower bound is 124: 124 fits, 123 is proven impossible (exit 3).
  REQUIRE(Run({"--budget-ms", "1000", "--capacity", "124", f.path()}, &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("capacity 124: found (arena 124)"));
  CHECK(Run({"--budget-ms", "1000", "--capacity", "123", f.path()}, &out, &err) == 3);
  CHECK_THAT(out, Catch::Contains("capacity 123: infeasible"));
  CHECK(Run({"--capacity", "123", f.path()}, &out, &err) == 2);
  CHECK_THAT(err, Catch::Contains("--capacity needs --budget-ms"));
  CHECK(Run({"--budget-ms", "-5", f.path()}, &out, &err) == 2);
  CHECK(Run({"--budget-ms", "1000", "--capacity", "x", f.path()}, &out, &err) == 2);
}

TEST_CASE("opreg plan accepts an empty trace", "[cli]") {
  TempFile f(R"({"buffers": []})");
  std::string out, err;
  REQUIRE(Run({"--json", f.path()}, &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("\"arena_bytes\":0,\"lb_bytes\":0"));
}

TEST_CASE("opreg plan reports malformed traces clearly", "[cli]") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "line 1, column 1: syntax error while parsing value - unexpected end of input"},
      {"[1, 2]", "a trace is a JSON object"},
      {"{\"alignment\": 64}", "missing \"buffers\""},
      {"{\"buffers\": {}}", "\"buffers\" must be an array"},
      {"{\"buffers\": [{\"size\": 8, \"first\": 0}]}", "buffer 0: missing \"last\""},
      {"{\"buffers\": [{\"size\": -8, \"first\": 0, \"last\": 1}]}",
       "\"size\" = -8 is out of range"},
      {"{\"buffers\": [{\"size\": 8.5, \"first\": 0, \"last\": 1}]}",
       "expected an integer for \"size\""},
      {"{\"buffers\": [{\"size\": \"8\", \"first\": 0, \"last\": 1}]}",
       "expected an integer for \"size\""},
      {"{\"buffers\": [[8, 3, 2]]}", "buffer 0: first (3) is after last (2)"},
      // A number beyond double's range is the lexer's error, with where it stood (it used to
      // escape as an uncaught exception and abort).
      {"{\"buffers\": [{\"size\": 1e400, \"first\": 0, \"last\": 1}]}",
       "line 1, column 28: number overflow parsing '1e400'"},
      {"{\"buffers\": [[8, 3]]}", "buffer 0: expected [size, first, last]"},
      {"{\"buffers\": [7]}", "buffer 0: expected an object or [size, first, last]"},
      {"{\"buffers\": [[8, 0, 99999999999]]}", "is out of range"},
      {"{\"buffers\": [[99999999999999999999999, 0, 1]]}", "is out of range"},
      {"{\"alignment\": 0, \"buffers\": []}", "\"alignment\" = 0 is out of range"},
      {"{\"buffers\": [[8, 0, 1]]",
       "line 1, column 24: syntax error while parsing object - unexpected end of input"},
      {"{\"buffers\": [[8, 0, 1],\n  [8, 0, x]]}",
       "line 2, column 10: syntax error while parsing value - invalid literal"},
      {"{\"buffers\": []} trailing",
       "line 1, column 19: syntax error while parsing value - invalid literal"},
      {"{\"name\": \"abc",
       "line 1, column 14: syntax error while parsing value - invalid string: missing closing "
       "quote"},
      // Errors in values name where the value ends.
      {"{\"buffers\": [[8, 0, 1],\n  [8.5, 0, 1]]}",
       "line 2, column 7: expected an integer for \"size\""},
      {"{\"buffers\": [\n  {\"size\": 8,\n   \"first\": 0}]}",
       "line 3, column 14: buffer 0: missing \"last\""},
      {"{\"buffers\": [[72057594037927936, 0, 1], [72057594037927936, 0, 1], "
       "[72057594037927936, 0, 1], [72057594037927936, 0, 1], [72057594037927936, 0, 1], "
       "[72057594037927936, 0, 1], [72057594037927936, 0, 1], [72057594037927936, 0, 1], "
       "[72057594037927936, 0, 1], [72057594037927936, 0, 1], [72057594037927936, 0, 1], "
       "[72057594037927936, 0, 1], [72057594037927936, 0, 1], [72057594037927936, 0, 1], "
       "[72057594037927936, 0, 1], [72057594037927936, 0, 1], [72057594037927936, 0, 1]]}",
       "add up to more than 2^60"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    TempFile f(c.text);
    std::string out, err;
    CHECK(Run({f.path()}, &out, &err) == 2);
    CHECK_THAT(err, Catch::StartsWith("opreg plan: " + f.path() + ": "));
    CHECK_THAT(err, Catch::Contains(c.message));
    CHECK(out.empty());
  }
  // Deep nesting is an error, not a stack overflow.
  TempFile deep(std::string(100000, '['));
  std::string out, err;
  CHECK(Run({deep.path()}, &out, &err) == 2);
  CHECK_THAT(err, Catch::Contains("nesting too deep"));
}

TEST_CASE("opreg plan ends on a trace too dense for its greedy members", "[cli]") {
  // 60,000 buffers alive together (1.8e9 overlapping pairs): the greedy orders alone would run
  // for many minutes; the plan ends after their 1 s limit with the online member's arena,
  // verified, and --budget-ms bounds the exact mode the same way.
  std::string text = "{\"buffers\": [";
  for (int i = 0; i < 60000; ++i) {
    text += StrCat(i ? "," : "", "[", 1000 + (i * 7919) % 5000, ",", i, ",", 60000 + i, "]");
  }
  text += "]}";
  TempFile f(text);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--json", f.path()},
        std::vector<std::string>{"--json", "--budget-ms", "200", f.path()}}) {
    std::string out, err;
    REQUIRE(Run(args, &out, &err) == 0);
    const auto j = nlohmann::json::parse(out);
    CHECK(j["verified"] == true);
    CHECK(j["arena_bytes"] == j["lb_bytes"]);  // all alive at one step: stacked exactly
    CHECK(j.contains("members_stopped"));
  }
}

TEST_CASE("opreg plan refuses a directory instead of reading it as empty", "[cli]") {
  std::string out, err;
  CHECK(Run({"/tmp"}, &out, &err) == 2);
  CHECK(err.find("cannot read /tmp: is a directory") != std::string::npos);
}

TEST_CASE("opreg plan usage errors", "[cli]") {
  std::string out, err;
  CHECK(Run({}, &out, &err) == 2);
  CHECK_THAT(err, Catch::Contains("missing TRACE.json"));
  CHECK(Run({"/nonexistent/trace.json"}, &out, &err) == 2);
  CHECK(err == "opreg plan: cannot read /nonexistent/trace.json: No such file or directory\n");
  CHECK(Run({"--bogus", "x.json"}, &out, &err) == 2);
  CHECK(Run({"a.json", "b.json"}, &out, &err) == 2);
  CHECK(Run({"--alignment", "zero", "a.json"}, &out, &err) == 2);
  CHECK(Run({"--alignment"}, &out, &err) == 2);
  CHECK(Run({"--help"}, &out, &err) == 0);
  CHECK_THAT(out, Catch::StartsWith("usage: opreg plan"));
}

}  // namespace
}  // namespace opreg::cli
