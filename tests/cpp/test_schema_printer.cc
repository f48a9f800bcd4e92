// Canonical printing: the ATen corpus line by line, and each printing rule of PyTorch's
// operator<<(FunctionSchema) on its own.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "schema_test_util.h"

namespace opreg {
namespace {

using testing::Canon;

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  INFO("reading " << path);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE("every ATen corpus schema prints exactly as PyTorch does", "[schema][corpus]") {
  const std::vector<std::string> inputs = ReadLines(OPREG_CORPUS_DIR "/aten_schemas.txt");
  const std::vector<std::string> expected =
      ReadLines(OPREG_CORPUS_DIR "/aten_schemas.canonical.txt");
  REQUIRE(inputs.size() == expected.size());
  REQUIRE(inputs.size() >= 1500);

  int mismatches = 0;
  int unstable = 0;
  std::string report;
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<FunctionSchema> s = ParseSchema("aten::" + inputs[i]);
    std::string got = s.ok() ? s->str() : "error: " + std::string(s.status().message());
    if (got != expected[i]) {
      if (++mismatches <= 5) {
        report += "line " + std::to_string(i + 1) + "\n  input:    " + inputs[i] +
                  "\n  expected: " + expected[i] + "\n  got:      " + got + "\n";
      }
      continue;
    }
    // Printing again is stable, and the printed text parses to the same model.
    absl::StatusOr<FunctionSchema> again = ParseSchema(got);
    if (!again.ok() || again->str() != got || !(*again == *s)) {
      if (++unstable <= 5)
        report += "unstable at line " + std::to_string(i + 1) + ": " + got + "\n";
    }
  }
  INFO(report);
  CHECK(mismatches == 0);
  CHECK(unstable == 0);
}

TEST_CASE("returns print with parentheses only where PyTorch puts them", "[schema][printer]") {
  CHECK(Canon("f(Tensor x) -> Tensor") == "f(Tensor x) -> Tensor");
  CHECK(Canon("f(Tensor x) -> (Tensor)") == "f(Tensor x) -> Tensor");
  CHECK(Canon("f(Tensor x) -> Tensor grid") == "f(Tensor x) -> Tensor grid");
  CHECK(Canon("f(Tensor x) -> ()") == "f(Tensor x) -> ()");
  CHECK(Canon("f(Tensor x) -> (Tensor a, Tensor b)") == "f(Tensor x) -> (Tensor a, Tensor b)");
  // A single tuple return keeps its own parentheses inside the return list's.
  CHECK(Canon("f(Tensor x) -> ((int, int))") == "f(Tensor x) -> ((int, int))");
  CHECK(Canon("aten::items.str(Dict(str, t) self) -> ((str, t)[])") ==
        "aten::items.str(Dict(str, t) self) -> ((str, t)[])");
  CHECK(Canon("f(...) -> ...") == "f(...) -> ...");
  CHECK(Canon("f(Tensor x, ...) -> (Tensor, ...)") == "f(Tensor x, ...) -> (Tensor, ...)");
  CHECK(Canon("f(Tensor x) -> (...)") == "f(Tensor x) -> ...");
  CHECK(Canon("f(Tensor x) -> Tensor[]") == "f(Tensor x) -> Tensor[]");
}

TEST_CASE("keyword-only marker prints before the first keyword-only argument",
          "[schema][printer]") {
  CHECK(Canon("f(*, ScalarType? dtype=None) -> Tensor") ==
        "f(*, ScalarType? dtype=None) -> Tensor");
  CHECK(Canon("f(Tensor x, *, int a, int b) -> ()") == "f(Tensor x, *, int a, int b) -> ()");
  // A trailing bare `*` with nothing after it is lost, as in PyTorch.
  CHECK(Canon("f(Tensor x, *) -> ()") == "f(Tensor x) -> ()");
}

TEST_CASE("float defaults print like PyTorch", "[schema][printer]") {
  CHECK(Canon("f(float a=1.0) -> ()") == "f(float a=1.) -> ()");
  CHECK(Canon("f(float a=0.0) -> ()") == "f(float a=0.) -> ()");
  CHECK(Canon("f(float a=-0.0) -> ()") == "f(float a=0.) -> ()");
  CHECK(Canon("f(float a=1) -> ()") == "f(float a=1.) -> ()");
  CHECK(Canon("f(float a=-2.0) -> ()") == "f(float a=-2.) -> ()");
  CHECK(Canon("f(float a=1e-05) -> ()") == "f(float a=1.0000000000000001e-05) -> ()");
  CHECK(Canon("f(float a=1e-06) -> ()") == "f(float a=9.9999999999999995e-07) -> ()");
  CHECK(Canon("f(float a=0.1) -> ()") == "f(float a=0.10000000000000001) -> ()");
  CHECK(Canon("f(float a=0.125) -> ()") == "f(float a=0.125) -> ()");
  CHECK(Canon("f(float a=1e-08) -> ()") == "f(float a=1e-08) -> ()");
  CHECK(Canon("f(float a=.5) -> ()") == "f(float a=0.5) -> ()");
  CHECK(Canon("f(float a=10.) -> ()") == "f(float a=10.) -> ()");
  CHECK(Canon("f(Scalar alpha=1.0) -> ()") == "f(Scalar alpha=1.) -> ()");
  CHECK(Canon("f(float[] a=[1, 0.5]) -> ()") == "f(float[] a=[1., 0.5]) -> ()");
}

TEST_CASE("numeric defaults are typed by their text, as in PyTorch", "[schema][printer]") {
  // `float?` is not `float`: an integral literal stays an int.
  FunctionSchema s = testing::MustParse("f(float? p=2, int x=1e3, Scalar s=1, float y=3) -> ()");
  CHECK(s.arguments()[0].default_value()->isInt());
  CHECK(s.arguments()[1].default_value()->isDouble());
  CHECK(s.arguments()[2].default_value()->isInt());
  CHECK(s.arguments()[3].default_value()->isDouble());
  CHECK(s.str() == "f(float? p=2, int x=1000., Scalar s=1, float y=3.) -> ()");
  CHECK(Canon("f(int dim=-1) -> ()") == "f(int dim=-1) -> ()");
  CHECK(Canon("f(complex c=1j) -> ()") == "f(complex c=0.+1.j) -> ()");
  CHECK(Canon("f(complex c=2) -> ()") == "f(complex c=2.+0.j) -> ()");
  CHECK(Canon("f(complex c=-0.5j) -> ()") == "f(complex c=0.-0.5j) -> ()");
}

TEST_CASE("list defaults collapse and re-space like PyTorch", "[schema][printer]") {
  CHECK(Canon("f(int[2] dilation=1) -> ()") == "f(int[2] dilation=1) -> ()");
  CHECK(Canon("f(int[2] dilation=[1, 1]) -> ()") == "f(int[2] dilation=1) -> ()");
  CHECK(Canon("f(int[1] padding=0) -> ()") == "f(int[1] padding=[0]) -> ()");
  CHECK(Canon("f(int[1] stride=[]) -> ()") == "f(int[1] stride=[]) -> ()");
  CHECK(Canon("f(SymInt[2] stride=1) -> ()") == "f(SymInt[2] stride=[1, 1]) -> ()");
  CHECK(Canon("f(int[] dims=[0,1]) -> ()") == "f(int[] dims=[0, 1]) -> ()");
  CHECK(Canon("f(int[] dims=[-2,-1]) -> ()") == "f(int[] dims=[-2, -1]) -> ()");
  CHECK(Canon("f(int[2] a=[1, 2]) -> ()") == "f(int[2] a=[1, 2]) -> ()");
  // PyTorch would print `int[] d=-1`, which does not parse: unsized lists never collapse.
  CHECK(Canon("f(int[] d=[-1,-1]) -> ()") == "f(int[] d=[-1, -1]) -> ()");
  CHECK(Canon("f(int[1] d=[-1,-1]) -> ()") == "f(int[1] d=[-1, -1]) -> ()");
  CHECK(Canon("f(bool[3] output_mask=[True, False, True]) -> ()") ==
        "f(bool[3] output_mask=[True, False, True]) -> ()");
  CHECK(Canon("f(int[]? x=None, SymInt[1]? s=None) -> ()") ==
        "f(int[]? x=None, SymInt[1]? s=None) -> ()");
}

TEST_CASE("string defaults print double-quoted with escapes", "[schema][printer]") {
  CHECK(Canon("f(str a='none') -> ()") == "f(str a=\"none\") -> ()");
  CHECK(Canon("f(str a=\"sum\") -> ()") == "f(str a=\"sum\") -> ()");
  CHECK(Canon(R"(f(str a="\"'\\") -> ())") == R"(f(str a="\"\'\\") -> ())");
  CHECK(Canon(R"(f(str a='tab\there\n') -> ())") == R"(f(str a="tab\there\n") -> ())");
  CHECK(Canon(R"(f(str a="\101\001") -> ())") == R"(f(str a="A\001") -> ())");
  CHECK(Canon(R"(f(str? a="x") -> ())") == R"(f(str? a="x") -> ())");
  // A string default on another type stays quoted (PyTorch prints the unreadable `b=x`).
  CHECK(Canon(R"(f(bool? b="x", Scalar s='y z') -> ())") ==
        R"(f(bool? b="x", Scalar s="y z") -> ())");
  CHECK(Canon(R"(f(Device? d="not a device") -> ())") == R"(f(Device? d="not a device") -> ())");
  CHECK(Canon(R"(f(str a="""triple""") -> ())") == R"(f(str a="triple") -> ())");
  // Non-ASCII bytes print as octal escapes and read back to the same bytes.
  CHECK(Canon("f(str a=\"\xc3\xa9\") -> ()") == R"(f(str a="\303\251") -> ())");
}

TEST_CASE("identifier defaults print as the integers PyTorch stores", "[schema][printer]") {
  CHECK(Canon("f(*, MemoryFormat memory_format=contiguous_format) -> ()") ==
        "f(*, MemoryFormat memory_format=0) -> ()");
  CHECK(Canon("f(int reduction=Mean) -> ()") == "f(int reduction=1) -> ()");
  CHECK(Canon("f(ScalarType dtype=long) -> ()") == "f(ScalarType dtype=4) -> ()");
  CHECK(Canon("f(ScalarType dtype=float) -> ()") == "f(ScalarType dtype=6) -> ()");
  CHECK(Canon("f(ScalarType? dtype=bfloat16) -> ()") == "f(ScalarType? dtype=15) -> ()");
  CHECK(Canon("f(ScalarType dtype=int32) -> ()") == "f(ScalarType dtype=3) -> ()");
  CHECK(Canon("f(ScalarType dtype=float8_e4m3fn) -> ()") == "f(ScalarType dtype=24) -> ()");
  CHECK(Canon("f(Layout layout=strided) -> ()") == "f(Layout layout=0) -> ()");
  // Stored in the argument's own kind, so that the printed form reads back equal.
  CHECK(Canon("f(float x=long, complex c=Mean) -> ()") == "f(float x=4., complex c=1.+0.j) -> ()");
}

TEST_CASE("lossy type spellings print as PyTorch prints them", "[schema][printer]") {
  CHECK(Canon("f(Tensor self, Dimname dim, Dimname[1] d1, Dimname[]? names) -> ()") ==
        "f(Tensor self, str dim, str[1] d1, str[]? names) -> ()");
  CHECK(Canon("f(DeviceIndex i, ConstQuantizerPtr q) -> ()") == "f(int i, int q) -> ()");
  CHECK(Canon("f(None n, NoneType m) -> NoneType") == "f(NoneType n, NoneType m) -> NoneType");
}

TEST_CASE("alias annotations print back as written", "[schema][printer]") {
  CHECK(Canon("f(Tensor(a) self) -> Tensor(a)") == "f(Tensor(a) self) -> Tensor(a)");
  CHECK(Canon("f(Tensor(a!) self) -> Tensor(a!)") == "f(Tensor(a!) self) -> Tensor(a!)");
  CHECK(Canon("f(Tensor(a -> *) self) -> Tensor(a)[]") == "f(Tensor(a -> *) self) -> Tensor(a)[]");
  CHECK(Canon("f(Tensor(a! -> a|b) self) -> ()") == "f(Tensor(a! -> a|b) self) -> ()");
  CHECK(Canon("f(Tensor(*) self) -> ()") == "f(Tensor(*) self) -> ()");
  CHECK(Canon("f(Tensor(a|b) self) -> ()") == "f(Tensor(a|b) self) -> ()");
  CHECK(Canon("f(Tensor(a!)[] out) -> ()") == "f(Tensor(a!)[] out) -> ()");
  CHECK(Canon("f(Tensor[](b!) handles) -> ()") == "f(Tensor[](b!) handles) -> ()");
  CHECK(Canon("f(Tensor(a!)? out) -> ()") == "f(Tensor(a!)? out) -> ()");
  CHECK(Canon("f(Tensor(a!)[]? out) -> ()") == "f(Tensor(a!)[]? out) -> ()");
  // PyTorch would print `Tensor?(a!)[]`, which it cannot read back.
  CHECK(Canon("f(Tensor(a!)?[] outs) -> ()") == "f(Tensor(a!)?[] outs) -> ()");
  CHECK(Canon("f(Tensor(a)[][] x) -> ()") == "f(Tensor(a)[][] x) -> ()");
}

TEST_CASE("the ! shorthand prints back as !", "[schema][printer]") {
  // PyTorch prints `Tensor($0! -> )`, which no parser reads back; opreg keeps `!`.
  CHECK(Canon("f(Tensor! out, Tensor!? key, int!? n, Tensor![] xs) -> ()") ==
        "f(Tensor! out, Tensor!? key, int!? n, Tensor![] xs) -> ()");
  CHECK(Canon("f(    Tensor! out,Tensor x)->()") == "f(Tensor! out, Tensor x) -> ()");
  CHECK(Canon("f(Tensor!src_row_id2dst_row_id_map) -> ()") ==
        "f(Tensor! src_row_id2dst_row_id_map) -> ()");
}

TEST_CASE("container and class types print as PyTorch's str()", "[schema][printer]") {
  CHECK(Canon("f((int, str) t, Dict(str, Tensor) d, Union(int, str) u, Future(Tensor) fut, "
              "RRef(int) r, Await(Tensor) aw) -> ()") ==
        "f((int, str) t, Dict(str, Tensor) d, Union(int, str) u, Future(Tensor) fut, "
        "RRef(int) r, Await(Tensor) aw) -> ()");
  CHECK(Canon("symm_mem::rendezvous(Tensor t, str group) -> "
              "__torch__.torch.classes.c10d.SymmetricMemory") ==
        "symm_mem::rendezvous(Tensor t, str group) -> "
        "__torch__.torch.classes.c10d.SymmetricMemory");
  CHECK(Canon("f(Tensor?[] indices, int[][] nested, Scalar? alpha, Generator? g, "
              "Any a, Storage s, Stream st, Capsule c, QScheme q, SymBool b, SymFloat sf) -> ()") ==
        "f(Tensor?[] indices, int[][] nested, Scalar? alpha, Generator? g, "
        "Any a, Storage s, Stream st, Capsule c, QScheme q, SymBool b, SymFloat sf) -> ()");
}

TEST_CASE("Device defaults print unquoted and read back", "[schema][printer]") {
  CHECK(Canon("f(Device d=\"cuda:1\") -> ()") == "f(Device d=cuda:1) -> ()");
  CHECK(Canon("f(Device d=\"cpu\") -> ()") == "f(Device d=cpu) -> ()");
  CHECK(Canon("f(Device? d=\"cuda\") -> ()") == "f(Device? d=cuda) -> ()");
}

}  // namespace
}  // namespace opreg
