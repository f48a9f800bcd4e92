// Introspection (list_ops, dump_op, static registration errors) and test hooks: C++ no-op ops
// for benchmarks, and C++ code that calls ops through the dispatcher (to call Python kernels
// from C++).
#include <optional>
#include <sstream>
#include <string_view>

#include "absl/types/span.h"
#include "module_internal.h"
#include "opreg/core/error.h"
#include "opreg/core/scalar_type.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"
#include "opreg/schema/schema_parser.h"
#include "opreg/schema/schema_rules.h"

namespace opreg::python {

namespace {

void Noop1(const Tensor&) {}
// vLLM's argument style (a kv-cache dtype name, block sizes): the bench's list/str row.
void NoopArgs(const Tensor&, std::string_view, absl::Span<const int64_t>) {}
void Noop3(const Tensor&, const Tensor&, const Tensor&) {}

// C++ composite: calls `op` (a unary Tensor -> Tensor op) through a typed handle, then adds 0 by
// calling it again boxed: both C++ call paths into whatever kernel the op has (Python ones too).
Tensor ApplyTwice(const std::string& op, const Tensor& x) {
  OperatorHandle h = Dispatcher::Get().FindOpOrThrow(op);
  Tensor y = h.typed<Tensor(const Tensor&)>().call(x);
  Stack s{IValue(y)};
  h.CallBoxed(&s);
  return s.at(0).toTensor();
}

std::optional<Library>& TestLibrary() {
  static std::optional<Library>* lib = new std::optional<Library>();
  return *lib;
}
std::optional<Library>& TestLibraryCpu() {
  static std::optional<Library>* lib = new std::optional<Library>();
  return *lib;
}
// The no-ops take CUDA tensors too (the call-overhead benchmark's CUDA rows); registering a
// kernel for the CUDA key needs no CUDA build.
std::optional<Library>& TestLibraryCuda() {
  static std::optional<Library>* lib = new std::optional<Library>();
  return *lib;
}

// One argument or return as a dict, for opreg.FunctionSchema (python_bindings/opreg/
// _schema_objects.py): the written type, the default as printed in the schema, alias sets.
py::dict ArgumentInfo(const Argument& a) {
  py::dict d;
  d["name"] = a.name();
  d["type"] = a.type()->str();
  d["N"] = a.N() ? py::object(py::int_(*a.N())) : py::object(py::none());
  d["kwarg_only"] = a.kwarg_only();
  if (a.default_value()) {
    std::ostringstream os;
    os << *a.default_value();
    d["default"] = FromIValue(*a.default_value());
    d["default_str"] = os.str();
  } else {
    d["default"] = py::none();
    d["default_str"] = py::none();
  }
  if (a.alias_info()) {
    py::dict alias;
    alias["before_set"] = a.alias_info()->before_sets();
    alias["after_set"] = a.alias_info()->after_sets();
    alias["is_write"] = a.alias_info()->is_write();
    d["alias_info"] = alias;
  } else {
    d["alias_info"] = py::none();
  }
  d["text"] = a.str();
  return d;
}

}  // namespace

void InitIntrospection(py::module_& m) {
  m.def(
      "_schema_info",
      [](const std::string& text) {
        absl::StatusOr<FunctionSchema> s = ParseSchema(text);
        CheckStatus(s.status());
        py::dict d;
        d["name"] = s->name();
        d["overload_name"] = s->overload_name();
        py::list args, rets;
        for (const Argument& a : s->arguments()) args.append(ArgumentInfo(a));
        for (const Argument& r : s->returns()) rets.append(ArgumentInfo(r));
        d["arguments"] = args;
        d["returns"] = rets;
        d["is_vararg"] = s->is_vararg();
        d["is_varret"] = s->is_varret();
        return d;
      },
      py::arg("text"), "A schema's parts (opreg.FunctionSchema is built from them).");
  m.def(
      "_known_tags",
      []() {
        std::vector<std::string> out;
        for (std::string_view t : KnownTags()) out.emplace_back(t);
        return out;
      },
      "The op tags opreg accepts (torch's tags.yaml names).");
  m.def(
      "_torch_scalar_type_names",
      []() {
        std::vector<std::string> out;
        for (const TorchScalarTypeEntry& e : TorchScalarTypeTable()) out.emplace_back(e.name);
        return out;
      },
      "torch's dtype names in c10::ScalarType code order (a ScalarType argument's int is an "
      "index into it).");
  m.def(
      "list_ops",
      []() {
        std::vector<std::string> out;
        for (const OperatorName& n : Dispatcher::Get().ListOps()) out.push_back(n.str());
        return out;
      },
      "Every defined op as 'ns::op' or 'ns::op.overload', sorted.");
  m.def(
      "dump_op",
      [](const std::string& name) {
        absl::StatusOr<std::string> s = Dispatcher::Get().DumpOp(name);
        CheckStatus(s.status());
        return *s;
      },
      py::arg("name"),
      "Schema, where it was defined, kernels per key, dispatch table, out link, symmetric "
      "memory arguments.");
  m.def(
      "_kernel_origin",
      [](const std::string& name, const std::string& key) -> const char* {
        std::optional<DispatchKey> k = ParseDispatchKey(key);
        if (!k) throw Error(ErrorKind::kValue, "unknown dispatch key '" + key + "'");
        absl::StatusOr<KernelOrigin> origin = Dispatcher::Get().KernelOriginOf(name, *k);
        CheckStatus(origin.status());
        switch (*origin) {
          case KernelOrigin::kNone:
            return "none";
          case KernelOrigin::kOwnKey:
            return "own";
          case KernelOrigin::kCompositeExplicit:
            return "composite_explicit";
          case KernelOrigin::kCompositeImplicit:
            return "composite_implicit";
          case KernelOrigin::kCatchAll:
            return "catch_all";
          case KernelOrigin::kFallback:
            return "fallback";
          case KernelOrigin::kOutVariant:
            return "out_variant";
        }
        return "none";
      },
      py::arg("name"), py::arg("key"),
      "What serves an op's calls with a runtime key: 'own' (a kernel for that key), "
      "'composite_explicit', 'composite_implicit', 'catch_all', 'fallback', 'out_variant' or "
      "'none'.");
  m.def(
      "_output_specs",
      [](const std::string& name) -> py::object {
        const OperatorHandle op = Dispatcher::Get().FindOpOrThrow(name);
        const KernelFunction* meta = op.entry().kernel(DispatchKey::kMeta);
        if (meta == nullptr || meta->output_specs() == nullptr) return py::none();
        py::list specs;
        for (const OutputSpec& spec : *meta->output_specs()) {
          py::dict d;
          d["kind"] = std::string(spec.kind_name());
          d["args"] = spec.argument_names();
          d["dtype"] = spec.dtype() ? py::object(py::str(TorchDTypeName(*spec.dtype())))
                                    : py::object(py::none());
          d["divide_last"] = spec.divide_last();
          d["multiply_last"] = spec.multiply_last();
          d["last_from"] = spec.last_from() ? py::object(py::str(*spec.last_from()))
                                            : py::object(py::none());
          specs.append(d);
        }
        return specs;
      },
      py::arg("name"),
      "The OutputSpecs an op's Meta kernel computes its shapes from (Library::def_functional), "
      "as dicts (kind, args, dtype: its torch name, divide_last, multiply_last, last_from); "
      "None when its Meta kernel is not made from specs.");
  m.def(
      "schema",
      [](const std::string& name) { return Dispatcher::Get().FindOpOrThrow(name).schema().str(); },
      py::arg("name"), "The canonical schema of an op.");
  m.def("static_registration_errors", &StaticRegistrationErrors,
        "Errors of OPREG_LIBRARY blocks that failed when their library was loaded.");
  m.def(
      "_load_test_ops",
      []() {
        if (TestLibrary()) return;
        TestLibrary().emplace(Library::FRAGMENT, "_opreg_test", std::nullopt, __FILE__, __LINE__);
        TestLibraryCpu().emplace(Library::IMPL, "_opreg_test", DispatchKey::kCPU, __FILE__,
                                 __LINE__);
        TestLibraryCuda().emplace(Library::IMPL, "_opreg_test", DispatchKey::kCUDA, __FILE__,
                                  __LINE__);
        Library& lib = *TestLibrary();
        lib.def("noop1(Tensor a) -> ()");
        lib.def("noop3(Tensor a, Tensor b, Tensor c) -> ()");
        lib.def("noop_args(Tensor a, str tag, int[] dims) -> ()");
        lib.def("apply_twice(str op, Tensor x) -> Tensor");
        lib.def("scale(Tensor x, float alpha=2., *, int repeat=1) -> Tensor");
        lib.def("raise_error(Tensor x, int kind) -> Tensor");
        // An in-place op with a C++ kernel, for the in-place form's row of bench_python_call.py.
        lib.def("mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
        // A vLLM-style out op and its functional form from an OutputSpec (def_functional): a C++
        // library's op whose torch fake keeps sizes symbolic with no Python fake.
        lib.def("widen_out(Tensor(a!) out, Tensor x) -> ()");
        lib.def_functional("widen(Tensor x) -> Tensor", "widen_out", {"out"},
                           {OutputSpec::Like("x").LastDimTimes(2)});
        Library& cpu = *TestLibraryCpu();
        cpu.impl("noop1", &Noop1);
        cpu.impl("noop3", &Noop3);
        cpu.impl("noop_args", &NoopArgs);
        TestLibraryCuda()->impl("noop1", &Noop1);
        TestLibraryCuda()->impl("noop3", &Noop3);
        lib.impl("apply_twice", &ApplyTwice);  // composite: every backend
        cpu.impl("scale", [](const Tensor& x, double alpha, int64_t repeat) {
          Tensor y = x.contiguous().clone();
          OPREG_CHECK_VALUE(y.dtype() == DType::kFloat32, "scale: expected float32");
          float* p = y.data_ptr<float>();
          for (int64_t r = 0; r < repeat; ++r) {
            for (int64_t i = 0; i < y.numel(); ++i) p[i] *= static_cast<float>(alpha);
          }
          return y;
        });
        // out[..., :n] = x, out[..., n:] = 2 * x, rows of a contiguous float32 x.
        cpu.impl("widen_out", [](Tensor& out, const Tensor& x) {
          OPREG_CHECK_VALUE(x.dtype() == DType::kFloat32 && x.is_contiguous() && x.dim() > 0,
                            "widen_out: expected a contiguous float32 x with dims");
          const int64_t n = x.size(-1);
          const int64_t rows = n == 0 ? 0 : x.numel() / n;
          const float* in = x.data_ptr<float>();
          float* o = out.data_ptr<float>();
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t i = 0; i < n; ++i) {
              o[r * 2 * n + i] = in[r * n + i];
              o[r * 2 * n + n + i] = 2 * in[r * n + i];
            }
          }
        });
        // self *= other elementwise, float32 tensors of one shape (any strides).
        cpu.impl("mul_", [](Tensor& self, const Tensor& other) -> Tensor& {
          OPREG_CHECK_VALUE(self.dtype() == DType::kFloat32 && other.dtype() == DType::kFloat32 &&
                                self.sizes() == other.sizes(),
                            "mul_: expected float32 tensors of one shape");
          // A strided self is multiplied in a contiguous copy, then written back.
          Tensor product = self.is_contiguous() ? self : self.contiguous();
          const Tensor factor = other.contiguous();
          float* p = product.data_ptr<float>();
          const float* q = factor.data_ptr<float>();
          for (int64_t i = 0; i < product.numel(); ++i) p[i] *= q[i];
          if (!self.is_contiguous()) self.copy_(product);
          return self;
        });
        // A C++ kernel that fails with an ErrorKind (by its number): the kind must survive
        // every way into Python (opreg.ops, torch.ops through opreg.torch's C bridge).
        cpu.impl("raise_error", [](const Tensor& /*x*/, int64_t kind) -> Tensor {
          OPREG_CHECK_VALUE(kind >= 0 && kind <= static_cast<int64_t>(ErrorKind::kNotImplemented),
                            "raise_error: kind must be an ErrorKind number, got ", kind);
          const auto k = static_cast<ErrorKind>(kind);
          throw Error(k, StrCat("raise_error: asked for ", ErrorKindName(k)));
        });
      },
      "Defines the _opreg_test ops (C++ no-op kernels, a C++ composite that calls other ops). "
      "Test and benchmark hook; idempotent.");
  m.def(
      "_call_boxed_from_cpp",
      [](const std::string& name, py::args args) {
        // The arguments are converted without a schema and the op is called from C++.
        std::vector<IValue> values;
        for (py::handle a : args) values.push_back(ToIValueGeneric(a));
        Stack out = Dispatcher::Get().FindOpOrThrow(name).CallBoxed(std::move(values));
        return ReturnsToPython(out);
      },
      py::arg("name"), "Calls an op from C++ with OperatorHandle::CallBoxed (test hook).");
}

}  // namespace opreg::python
