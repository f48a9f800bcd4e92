// Introspection (list_ops, dump_op, static registration errors) and test hooks: C++ no-op ops
// for benchmarks, and C++ code that calls ops through the dispatcher (to call Python kernels
// from C++).
#include <optional>

#include "module_internal.h"
#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/library.h"

namespace opreg::python {

namespace {

void Noop1(const Tensor&) {}
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

}  // namespace

void InitIntrospection(py::module_& m) {
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
      "schema",
      [](const std::string& name) { return Dispatcher::Get().FindOpOrThrow(name).schema().str(); },
      py::arg("name"), "The canonical schema of an op.");
  m.def("static_registration_errors", &StaticRegistrationErrors,
        "Errors of OPREG_LIBRARY blocks that failed when their library was loaded.");
  m.def(
      "_load_test_ops",
      []() {
        if (TestLibrary()) return;
        TestLibrary().emplace(Library::FRAGMENT, "_opreg_test", std::nullopt, __FILE__,
                              __LINE__);
        TestLibraryCpu().emplace(Library::IMPL, "_opreg_test", DispatchKey::kCPU, __FILE__,
                                 __LINE__);
        Library& lib = *TestLibrary();
        lib.def("noop1(Tensor a) -> ()");
        lib.def("noop3(Tensor a, Tensor b, Tensor c) -> ()");
        lib.def("apply_twice(str op, Tensor x) -> Tensor");
        lib.def("scale(Tensor x, float alpha=2., *, int repeat=1) -> Tensor");
        Library& cpu = *TestLibraryCpu();
        cpu.impl("noop1", &Noop1);
        cpu.impl("noop3", &Noop3);
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
