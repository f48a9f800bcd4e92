// opreg.Library: torch.library.Library's surface over opreg::Library, with Python callables as
// boxed kernels.
//
// A Python kernel receives the op's arguments converted to Python (keyword-only ones as
// keywords) and returns its results. It runs with the GIL (taken if the caller released it).
// A Python exception inside it is carried through the C++ dispatcher as
// py::error_already_set and restored for the Python caller, traceback included.
//
// Lifetime: registrations live as long as the Library object (or until `_destroy()`). The
// dispatcher retires rather than frees deregistered kernels, so the Python callable is dropped
// explicitly when its Library goes away, and never touched after the interpreter finalizes.
#include <optional>

#include "module_internal.h"
#include "opreg/core/error.h"
#include "opreg/dispatch/dispatch_key.h"
#include "opreg/dispatch/library.h"

namespace opreg::python {

namespace {

// A Python callable shared by a kernel functor and its Library; cleared when the Library dies.
struct PyFn {
  PyObject* fn = nullptr;  // strong reference while registered
  bool check_aliasing = false;

  explicit PyFn(py::object f) : fn(f.release().ptr()) {}
  PyFn(const PyFn&) = delete;
  PyFn& operator=(const PyFn&) = delete;
  // Requires the GIL.
  void Clear() {
    PyObject* f = fn;
    fn = nullptr;
    Py_XDECREF(f);
  }
  ~PyFn() {
    if (fn != nullptr && Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      Clear();
    }
  }
};

// Byte range [begin, end) of a tensor's elements (empty for meta / empty tensors).
std::pair<uintptr_t, uintptr_t> Range(const Tensor& t) {
  if (!t.defined() || t.is_meta() || t.numel() == 0) return {0, 0};
  const uintptr_t p = reinterpret_cast<uintptr_t>(t.storage().data());
  return {p, p + t.storage().nbytes()};
}

void CollectTensors(const IValue& v, std::vector<Tensor>* out) {
  if (v.isTensor()) {
    out->push_back(v.toTensor());
  } else if (v.isTensorList()) {
    for (const Tensor& t : v.toTensorList()) out->push_back(t);
  } else if (v.isOptionalTensorList()) {
    for (const auto& t : v.toOptionalTensorList()) {
      if (t) out->push_back(*t);
    }
  }
}

// torch.library.custom_op's runtime aliasing check: no return may alias an input or another
// return (checked by storage identity and by overlapping memory).
void CheckAliasing(const OperatorHandle& op, const Stack& inputs, const Stack& stack,
                   size_t first_return) {
  std::vector<Tensor> ins, outs;
  for (const IValue& v : inputs) CollectTensors(v, &ins);
  for (size_t i = first_return; i < stack.size(); ++i) CollectTensors(stack[i], &outs);
  auto overlaps = [](const Tensor& a, const Tensor& b) {
    if (a.is_alias_of(b)) return true;
    auto ra = Range(a), rb = Range(b);
    return ra.first < ra.second && rb.first < rb.second && ra.first < rb.second &&
           rb.first < ra.second;
  };
  for (size_t i = 0; i < outs.size(); ++i) {
    bool bad = false;
    for (const Tensor& in : ins) bad |= overlaps(outs[i], in);
    for (size_t j = 0; j < i; ++j) bad |= overlaps(outs[i], outs[j]);
    if (bad) {
      throw Error(
          ErrorKind::kRuntime,
          StrCat(op.operator_name().str(),
                 " (with implementation in Python): The output of this custom operator (1) must "
                 "not also be an input to this custom operator and (2) may not alias any inputs "
                 "to this custom operator or other returns. The most common way to trigger this "
                 "error is if we have y = custom_op(x) and y and x are the same Tensor. Instead, "
                 "the output of this custom operator should be a clone of x (e.g. return "
                 "x.clone())"));
    }
  }
}

// Calls `fn` with the op's arguments from the end of `stack` (positional, then keyword-only as
// keywords), `leading` prepended.
py::object CallPython(PyObject* fn, const OperatorHandle& op, const Stack& stack, size_t first,
                      py::handle leading) {
  const auto& args = op.schema().arguments();
  const size_t n = stack.size() - first;
  size_t num_positional = 0;
  while (num_positional < n && num_positional < args.size() && !args[num_positional].kwarg_only()) {
    ++num_positional;
  }
  if (n > args.size()) num_positional = n;  // varargs
  const size_t lead = leading ? 1 : 0;
  py::tuple pos(lead + num_positional);
  if (lead) pos[0] = py::reinterpret_borrow<py::object>(leading);
  for (size_t i = 0; i < num_positional; ++i) pos[lead + i] = FromIValue(stack[first + i]);
  py::dict kw;
  for (size_t i = num_positional; i < n; ++i) {
    kw[py::str(args[i].name())] = FromIValue(stack[first + i]);
  }
  PyObject* r = PyObject_Call(fn, pos.ptr(), kw.ptr());
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

KernelFunction MakePythonKernel(std::shared_ptr<PyFn> state) {
  return KernelFunction::FromBoxedFunctor([state](const OperatorHandle& op, Stack* stack) {
    py::gil_scoped_acquire gil;
    OPREG_CHECK(state->fn != nullptr, "[", op.operator_name().str(),
                "] the Python kernel was unregistered (its Library was destroyed)");
    const size_t n = op.schema().arguments().size();
    OPREG_CHECK(stack->size() >= n, "[", op.operator_name().str(), "] boxed call with ",
                stack->size(), " values for ", n, " arguments");
    const size_t first = stack->size() - n;
    // The kernel gets opreg.Tensor arguments whatever its caller passed, and what it returns
    // does not change the framework of the caller's results.
    CallOriginScope origin(/*op_call=*/false);
    py::object result = CallPython(state->fn, op, *stack, first, py::handle());
    Stack inputs;
    if (state->check_aliasing) inputs.assign(stack->begin() + first, stack->end());
    stack->resize(first);
    PushReturns(op, result, stack);
    if (state->check_aliasing) CheckAliasing(op, inputs, *stack, first);
  });
}

KernelFunction MakePythonFallback(std::shared_ptr<PyFn> state) {
  return KernelFunction::FromBoxedFunctor([state](const OperatorHandle& op, Stack* stack) {
    py::gil_scoped_acquire gil;
    OPREG_CHECK(state->fn != nullptr, "the Python fallback was unregistered");
    const size_t n = op.schema().arguments().size();
    const size_t first = stack->size() - std::min(n, stack->size());
    CallOriginScope origin(/*op_call=*/false);  // as in MakePythonKernel
    py::object result = CallPython(state->fn, op, *stack, first, MakeOverload(op));
    stack->resize(first);
    PushReturns(op, result, stack);
  });
}

Library::Kind ParseKind(const std::string& kind) {
  if (kind == "DEF") return Library::DEF;
  if (kind == "FRAGMENT") return Library::FRAGMENT;
  if (kind == "IMPL") return Library::IMPL;
  throw Error(ErrorKind::kValue, StrCat("Unsupported kind: ", kind));
}

std::optional<DispatchKey> ParseKey(const std::string& key) {
  if (key.empty()) return std::nullopt;
  std::optional<DispatchKey> k = ParseDispatchKey(key);
  if (!k && key == "CompositeExplicitAutograd") k = DispatchKey::kCompositeExplicit;
  if (!k && key == "CompositeImplicitAutograd") k = DispatchKey::kCompositeImplicit;
  if (!k && key == "default") k = DispatchKey::kCompositeExplicit;
  OPREG_CHECK_VALUE(k.has_value(), "unknown dispatch key '", key,
                    "' (expected CPU, CUDA, Meta, CompositeExplicit or CompositeImplicit)");
  return k;
}

class PyLibrary {
 public:
  PyLibrary(const std::string& ns, const std::string& kind, const std::string& dispatch_key,
            const std::string& file, int line)
      : ns_(ns), kind_(kind), file_(file), line_(line) {
    lib_.emplace(ParseKind(kind), ns, ParseKey(dispatch_key), file_.c_str(),
                 static_cast<uint32_t>(line));
  }
  ~PyLibrary() { Destroy(); }

  void Destroy() {
    lib_.reset();  // deregisters everything, in reverse order
    for (auto& f : fns_) f->Clear();
    fns_.clear();
  }

  Library& lib() {
    OPREG_CHECK(lib_.has_value(), "this opreg.Library(\"", ns_,
                "\") was destroyed; create a new one to register more");
    return *lib_;
  }

  void Define(const std::string& schema, const std::vector<std::string>& tags,
              const std::string& file, int line) {
    lib().def(schema, tags, file.c_str(), line);
  }

  void Impl(const std::string& name, py::object fn, const std::string& dispatch_key,
            bool check_aliasing, const std::string& file, int line) {
    auto state = std::make_shared<PyFn>(std::move(fn));
    state->check_aliasing = check_aliasing;
    std::optional<DispatchKey> key = ParseKey(dispatch_key);
    if (key) {
      lib().impl(name, *key, MakePythonKernel(state), file.c_str(), line);
    } else {
      lib().impl(name, MakePythonKernel(state), file.c_str(), line);
    }
    fns_.push_back(std::move(state));
  }

  void Fallback(py::object fn, const std::string& file, int line) {
    auto state = std::make_shared<PyFn>(std::move(fn));
    lib().fallback(MakePythonFallback(state), file.c_str(), line);
    fns_.push_back(std::move(state));
  }

  const std::string& ns() const { return ns_; }
  const std::string& kind() const { return kind_; }
  bool alive() const { return lib_.has_value(); }
  std::string where() const { return StrCat(file_, ":", line_); }

 private:
  std::string ns_, kind_, file_;
  int line_;
  std::optional<Library> lib_;
  std::vector<std::shared_ptr<PyFn>> fns_;
};

}  // namespace

void InitLibrary(py::module_& m) {
  py::class_<PyLibrary>(m, "_Library")
      .def(py::init<const std::string&, const std::string&, const std::string&,
                    const std::string&, int>(),
           py::arg("ns"), py::arg("kind"), py::arg("dispatch_key"), py::arg("file"),
           py::arg("line"))
      .def("define", &PyLibrary::Define, py::arg("schema"), py::arg("tags"), py::arg("file"),
           py::arg("line"))
      .def("impl", &PyLibrary::Impl, py::arg("name"), py::arg("fn"), py::arg("dispatch_key"),
           py::arg("check_aliasing"), py::arg("file"), py::arg("line"))
      .def("fallback", &PyLibrary::Fallback, py::arg("fn"), py::arg("file"), py::arg("line"))
      .def(
          "register_symm_mem_args",
          [](PyLibrary& self, const std::string& op, const std::vector<std::string>& names,
             bool required, const std::string& file, int line) {
            self.lib().register_symm_mem_args(
                op, names, required ? SymmMemRequirement::kRequired : SymmMemRequirement::kAccepted,
                file.c_str(), line);
          },
          py::arg("op"), py::arg("names"), py::arg("required"), py::arg("file"), py::arg("line"))
      .def(
          "link_out_variant",
          [](PyLibrary& self, const std::string& functional, const std::string& out,
             const std::vector<std::string>& names, const std::string& file, int line) {
            self.lib().link_out_variant(functional, out, names, file.c_str(), line);
          },
          py::arg("functional"), py::arg("out"), py::arg("names"), py::arg("file"),
          py::arg("line"))
      .def("destroy", &PyLibrary::Destroy)
      .def_property_readonly("ns", &PyLibrary::ns)
      .def_property_readonly("kind", &PyLibrary::kind)
      .def_property_readonly("alive", &PyLibrary::alive)
      .def_property_readonly("where", &PyLibrary::where);
}

}  // namespace opreg::python
