// opreg.ops: op overloads and packets. An `_C.OpOverload` binds Python arguments to its schema
// (positional, keyword, defaults) with converters cached per op definition, calls the op
// boxed, and converts the returns. `_C.OpPacket` is `ns::op` with its overloads as attributes.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "module_internal.h"
#include "opreg/core/error.h"
#include "opreg/dispatch/argument_binding.h"

namespace opreg::python {

namespace {

class OpOverload {
 public:
  explicit OpOverload(OperatorHandle op) : op_(op) {}

  const OperatorHandle& handle() const { return op_; }

  // The call with CPython's vectorcall convention: `nargs` positional values, then one value
  // per name in `kwnames` (a tuple, or null). No argument tuple or dict is built.
  py::object Call(PyObject* const* args, size_t nargs, PyObject* kwnames) {
    const OpDefinition* def = op_.entry().definition();
    if (def != cached_) Rebuild(def);
    if (nargs > num_positional_ && !vararg_) {
      ArgumentBinding(def->schema, name_).CheckPositionalCount(nargs);
    }
    // Results go back in the framework of the tensor arguments (torch, NumPy, opreg).
    RecycleScope borrowed;              // the framework tensors' objects, reused by the next call
    ReleaseAtEndHoldingGil(&borrowed);  // the call returns to Python: the GIL is held there
    CallOriginScope origin(/*op_call=*/true);
    CallOrigin& o = origin.Get();  // one thread-local lookup per call, not per argument
    o.recycle = &borrowed;
    StackLease lease;  // after `borrowed`: the arguments are dropped before they are given back
    Stack& stack = lease.get();
    stack.reserve(convs_.size());
    for (size_t i = 0; i < nargs; ++i) {
      stack.push_back(
          ToIValue(py::handle(args[i]), i < convs_.size() ? convs_[i] : ArgConv{}, &op_, i, &o));
      if (o.last_import_readonly) CheckWritable(i, args[i]);
      if (i < written_.size() && written_[i]) CheckNotNegated(i, stack.back(), args[i]);
    }
    const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
    // Per argument, the caller's object (ops with `Tensor(a!)` returns only: see below).
    std::vector<PyObject*> objects;
    if (!aliased_returns_.empty()) {
      objects.assign(convs_.size(), nullptr);
      std::copy(args, args + std::min(nargs, objects.size()), objects.begin());
    }
    if (nkw > 0) {
      std::vector<std::optional<IValue>> slots(convs_.size());
      const ArgumentBinding binding(def->schema, name_);
      for (Py_ssize_t k = 0; k < nkw; ++k) {
        const std::string name = py::reinterpret_borrow<py::str>(PyTuple_GET_ITEM(kwnames, k));
        const size_t i = binding.KeywordSlot(
            name, [&](size_t j) { return j < nargs || slots[j].has_value(); });
        slots[i] = ToIValue(py::handle(args[nargs + k]), convs_[i], &op_, i, &o);
        if (o.last_import_readonly) CheckWritable(i, args[nargs + k]);
        if (written_[i]) CheckNotNegated(i, *slots[i], args[nargs + k]);
        if (!objects.empty()) objects[i] = args[nargs + k];
      }
      for (size_t i = nargs; i < slots.size(); ++i) {
        stack.push_back(slots[i] ? std::move(*slots[i]) : binding.DefaultOf(i));
      }
    }
    // Ops with `Tensor(a!)` returns (out variants, in-place ops): such a return is the
    // caller's own object, as torch returns the very `out` it was given.
    std::vector<ReturnedArgument> returned;
    if (!aliased_returns_.empty()) returned = ReturnedArguments(stack, objects);
    {
      OriginStreamScope stream;  // CUDA torch tensors: the call runs on torch's current stream
      op_.CallBoxed(&stack);     // fills defaults, checks types, dispatches (or is captured)
    }
    if (GraphCapture* capture = ActiveCapture()) return CaptureResults(capture, op_, stack);
    return ReturnsToPython(stack, returned);
  }

  std::string Name() const { return op_.operator_name().str(); }

  // A read-only array (NumPy's writeable=False, a DLPack capsule flagged read-only) may be read
  // by an op but never passed where the schema writes. Consumes the flag, which every import
  // sets, so it never outlives the argument it describes.
  void CheckWritable(size_t i, PyObject* obj) const {
    ThisCallOrigin().last_import_readonly = false;
    const auto& schema_args = cached_->schema.arguments();
    if (i >= schema_args.size() || !schema_args[i].is_write()) return;
    throw Error(ErrorKind::kValue,
                ArgErrorMessage(op_.operator_name().str(), schema_args[i].name(),
                                static_cast<int>(i), "a writable tensor (the op writes to it)",
                                StrCat("a read-only ", Py_TYPE(obj)->tp_name)));
  }
  std::string Schema() const { return op_.schema().str(); }

  // A written tensor argument from a framework (torch) must not be a lazily negated view: the
  // op would write un-negated values through it. (opreg tensors have no such views; for NumPy
  // arrays the check finds no is_neg and returns.)
  void CheckNotNegated(size_t i, const IValue& v, PyObject* obj) const {
    if (!v.isTensor() || ExactPyTensor(obj) != nullptr) return;
    try {
      RefuseLazyNegation(py::handle(obj), v.toTensor(), /*any_address=*/true);
    } catch (const Error&) {
      const auto& schema_args = cached_->schema.arguments();
      throw Error(ErrorKind::kValue,
                  ArgErrorMessage(op_.operator_name().str(), schema_args[i].name(),
                                  static_cast<int>(i),
                                  "a tensor the op can write (pass a plain tensor, or call "
                                  "resolve_neg() and copy back)",
                                  "a lazily negated view (torch's negative bit is set): the "
                                  "op would write un-negated values through it"));
    }
  }

 private:
  void Rebuild(const OpDefinition* def) {
    if (def == nullptr) op_.definition();  // throws: no longer defined
    const FunctionSchema& s = def->schema;
    name_ = op_.operator_name().str();  // for the binding's messages, made once
    convs_.clear();
    for (const Argument& a : s.arguments()) convs_.push_back(ArgConvFor(*a.type()));
    num_positional_ = ArgumentBinding(s, "").num_positional();
    vararg_ = s.is_vararg();
    written_.clear();
    for (const Argument& a : s.arguments()) written_.push_back(a.is_write());
    aliased_returns_.clear();
    for (size_t r = 0; r < s.returns().size(); ++r) {
      const std::optional<size_t> j = s.ReturnedArgumentIndex(r);
      aliased_returns_.push_back(j ? static_cast<int>(*j) : -1);
    }
    if (std::all_of(aliased_returns_.begin(), aliased_returns_.end(),
                    [](int j) { return j < 0; })) {
      aliased_returns_.clear();
    }
    cached_ = def;
  }

  // For return r: the argument it returns (aliased_returns_[r]) as it went into the call, with
  // the caller's object for it (`objects`, per argument).
  std::vector<ReturnedArgument> ReturnedArguments(const Stack& stack,
                                                  const std::vector<PyObject*>& objects) const {
    std::vector<ReturnedArgument> out(aliased_returns_.size());
    for (size_t r = 0; r < aliased_returns_.size(); ++r) {
      const int j = aliased_returns_[r];
      if (j < 0 || static_cast<size_t>(j) >= stack.size() || !stack[j].isTensor()) continue;
      if (objects[j] != nullptr) out[r] = {stack[j].toTensor(), objects[j]};
    }
    return out;
  }

  OperatorHandle op_;
  const OpDefinition* cached_ = nullptr;
  std::string name_;  // "ns::op[.overload]"
  // Per return: the index of the `Tensor(a!)` argument it is, -1 for none; empty when no
  // return is an argument.
  std::vector<int> aliased_returns_;
  std::vector<ArgConv> convs_;
  std::vector<bool> written_;  // per argument: the schema writes it
  size_t num_positional_ = 0;
  bool vararg_ = false;
};

// `ns::op`: its overloads by name ("default" is the overload without a name).
class OpPacket {
 public:
  explicit OpPacket(std::string qualified_name) : name_(std::move(qualified_name)) {}

  py::object Overload(const std::string& overload) {
    auto it = overloads_.find(overload);
    if (it != overloads_.end()) return it->second;
    const std::string full =
        overload == "default" || overload.empty() ? name_ : StrCat(name_, ".", overload);
    std::optional<OperatorHandle> op = Dispatcher::Get().FindOp(full);
    if (!op) {
      throw py::attribute_error(StrCat("'", name_, "' has no overload '", overload, "'"));
    }
    py::object o = MakeOverload(*op);
    overloads_.emplace(overload, o);
    return o;
  }

  py::object Call(PyObject* const* args, size_t nargs, PyObject* kwnames) {
    if (!default_) {
      if (!Dispatcher::Get().FindOp(name_)) {
        std::vector<std::string> overloads = Overloads();
        if (overloads.empty()) {
          throw Error(ErrorKind::kKey, StrCat("operator ", name_,
                                              " is no longer defined (no overload of it exists)"));
        }
        throw Error(ErrorKind::kType,
                    StrCat(name_, " has no default overload; call one of its overloads (",
                           absl::StrJoin(overloads, ", "), ") as ", name_, ".<overload>(...)"));
      }
      default_ = Overload("default");
      default_ptr_ = default_.cast<OpOverload*>();
    }
    return default_ptr_->Call(args, nargs, kwnames);
  }

  std::vector<std::string> Overloads() const {
    std::vector<std::string> out;
    for (const OperatorName& n : Dispatcher::Get().ListOps()) {
      if (n.name == name_) out.push_back(n.overload_name.empty() ? "default" : n.overload_name);
    }
    return out;
  }

  const std::string& name() const { return name_; }

 private:
  std::string name_;
  absl::flat_hash_map<std::string, py::object> overloads_;
  py::object default_;
  OpOverload* default_ptr_ = nullptr;
};

// OpOverload and OpPacket objects are called through CPython's vectorcall protocol rather than
// pybind11's `__call__` dispatch, which builds an argument tuple and dict per call (the tuple is
// GC-tracked, so calls in a loop also run the garbage collector): a function pointer stored
// after pybind11's instance struct, installed on the first call through tp_call.
template <class T>
PyObject* Vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    auto* inst = reinterpret_cast<py::detail::instance*>(self);
    T* obj = static_cast<T*>(inst->get_value_and_holder().value_ptr());
    return obj->Call(args, PyVectorcall_NARGS(nargsf), kwnames).release().ptr();
  } catch (...) {
    SetPythonErrorFromCurrentException();
    return nullptr;
  }
}

vectorcallfunc* VectorcallSlot(PyObject* self) {
  return reinterpret_cast<vectorcallfunc*>(reinterpret_cast<char*>(self) +
                                           Py_TYPE(self)->tp_vectorcall_offset);
}

template <class T>
PyObject* TpCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  *VectorcallSlot(self) = &Vectorcall<T>;
  return PyVectorcall_Call(self, args, kwargs);
}

// Room for the vectorcall pointer after pybind11's instance, and the call slots.
template <class T>
py::custom_type_setup VectorcallTypeSetup() {
  return py::custom_type_setup([](PyHeapTypeObject* heap) {
    PyTypeObject* type = &heap->ht_type;
    type->tp_vectorcall_offset = type->tp_basicsize;
    type->tp_basicsize += sizeof(vectorcallfunc);
    type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    type->tp_call = &TpCall<T>;
  });
}

template <class T>
py::object WithVectorcall(py::object obj) {
  *VectorcallSlot(obj.ptr()) = &Vectorcall<T>;
  return obj;
}

}  // namespace

py::object MakeOverload(const OperatorHandle& op) {
  return WithVectorcall<OpOverload>(py::cast(OpOverload(op)));
}

void InitOps(py::module_& m) {
  // __call__ is the tp_call slot (VectorcallTypeSetup), not a pybind11 method.
  py::class_<OpOverload>(m, "OpOverload", "One overload of an op: `opreg.ops.ns.op.overload`.",
                         VectorcallTypeSetup<OpOverload>())
      .def_property_readonly("name", &OpOverload::Name, "'ns::op.overload'")
      .def_property_readonly(
          "schema",
          [](const OpOverload& o) {
            static py::handle cls = py::object(py::module_::import("opreg._schema_objects")
                                                   .attr("FunctionSchema"))
                                        .release();
            return cls(o.Schema());
          },
          "The canonical schema: an opreg.FunctionSchema (a str with the parsed parts).")
      .def_property_readonly(
          "tags",
          [](const OpOverload& o) { return o.handle().definition().tags; },
          "The op's tags (names, as torch.Tag spells them).")
      .def_property_readonly(
          "overload_name",
          [](const OpOverload& o) {
            const std::string& n = o.handle().operator_name().overload_name;
            return n.empty() ? std::string("default") : n;
          })
      // An op object names a dispatcher entry, so copies are the object itself (as torch's
      // OpOverload deep-copies to itself: a module holding ops can be deep-copied).
      .def("__copy__", [](py::object self) { return self; })
      .def("__deepcopy__", [](py::object self, py::object /*memo*/) { return self; })
      .def("__repr__", [](const OpOverload& o) {
        return StrCat("<opreg.OpOverload ", o.Name(), ">");
      });
  py::class_<OpPacket>(m, "OpPacket", "An op and its overloads: `opreg.ops.ns.op`.",
                       VectorcallTypeSetup<OpPacket>())
      .def(py::init<std::string>(), py::arg("qualified_name"))
      .def("__getattr__", &OpPacket::Overload, py::arg("overload"))
      .def("overloads", &OpPacket::Overloads)
      .def_property_readonly("name", &OpPacket::name)
      .def_property_readonly("default", [](OpPacket& p) { return p.Overload("default"); })
      .def("__copy__", [](py::object self) { return self; })
      .def("__deepcopy__", [](py::object self, py::object /*memo*/) { return self; })
      .def("__repr__",
           [](const OpPacket& p) { return StrCat("<opreg.OpPacket ", p.name(), ">"); });
  m.def(
      "_op_exists",
      [](const std::string& qualified_name) {
        for (const OperatorName& n : Dispatcher::Get().ListOps()) {
          if (n.name == qualified_name) return true;
        }
        return false;
      },
      py::arg("qualified_name"), "True when an op `ns::op` has at least one overload defined.");
  m.def(
      "_namespaces",
      []() {
        std::vector<std::string> out;
        for (const OperatorName& n : Dispatcher::Get().ListOps()) {
          std::string ns(n.ns());
          if (out.empty() || out.back() != ns) {
            if (std::find(out.begin(), out.end(), ns) == out.end()) out.push_back(ns);
          }
        }
        return out;
      });
}

}  // namespace opreg::python
