// Python <-> IValue conversion. Arguments convert by their schema type (the kind is computed
// once per op and cached); kernel arguments and results convert by the IValue's tag.
#include "module_internal.h"
#include "opreg/core/dtype.h"
#include "opreg/core/error.h"
#include "opreg/core/layout.h"
#include "opreg/schema/type.h"

namespace opreg::python {

namespace {

std::string TypeName(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

std::string_view ArgNameAt(const OperatorHandle& op, size_t index) {
  const auto& args = op.schema().arguments();
  return index < args.size() ? std::string_view(args[index].name()) : std::string_view("?");
}

// Argument `index` of `op` (or of no op) was `got` where `expected` was wanted.
[[noreturn]] void ThrowBadArgGot(std::string_view expected, std::string_view got,
                                 const OperatorHandle* op, size_t index) {
  if (op == nullptr) throw Error(ErrorKind::kType, StrCat("expected ", expected, ", got ", got));
  throw Error(ErrorKind::kType, ArgErrorMessage(op->operator_name().str(), ArgNameAt(*op, index),
                                                static_cast<int>(index), expected, got));
}

[[noreturn]] void ThrowBadArg(py::handle obj, const char* expected, const OperatorHandle* op,
                              size_t index) {
  ThrowBadArgGot(expected, TypeName(obj), op, index);
}

// A ScalarType argument opreg has no dtype for, named as it was given ('complex64',
// torch.complex64) with its type.
[[noreturn]] void ThrowBadScalarType(py::handle obj, const std::string& given,
                                     const OperatorHandle* op, size_t index) {
  ThrowBadArgGot("a ScalarType that opreg supports (a dtype name such as 'float32')",
                 StrCat(PyUnicode_Check(obj.ptr()) ? StrCat("'", given, "'") : given, " (",
                        TypeName(obj), ")"),
                 op, index);
}

// `e` again, its message prefixed with the op and argument `index`; as it is without an op, or
// when it names an op already.
[[noreturn]] void RethrowNamed(const Error& e, const OperatorHandle* op, size_t index) {
  if (op == nullptr || e.message().rfind('[', 0) == 0) throw e;
  throw Error(e.kind(), StrCat("[", op->operator_name().str(), "] argument '",
                               ArgNameAt(*op, index), "' (#", index, "): ", e.message()));
}

bool IsSequence(py::handle obj) { return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()); }

template <class F>
void ForEach(py::handle seq, F&& f) {
  PyObject* fast = seq.ptr();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject** items = PySequence_Fast_ITEMS(fast);
  for (Py_ssize_t i = 0; i < n; ++i) f(py::handle(items[i]));
}

int64_t ToInt64(py::handle obj) {
  long long v = PyLong_AsLongLong(obj.ptr());
  if (v == -1 && PyErr_Occurred()) {
    // Out of int64's range: an error the caller names with the op and argument (ValueError),
    // rather than a bare "int too big to convert".
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
    PyErr_Clear();
    throw Error(ErrorKind::kValue, StrCat("expected an int in [-2**63, 2**63), got ",
                                          py::str(obj).cast<std::string>()));
  }
  return v;
}

bool IsInt(py::handle obj) { return PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr()); }

// Integers of other types (NumPy ints) through __index__.
bool AsIndex(py::handle obj, int64_t* out) {
  if (PyBool_Check(obj.ptr()) || PyFloat_Check(obj.ptr())) return false;
  if (!PyIndex_Check(obj.ptr())) return false;
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!i) throw py::error_already_set();
  *out = ToInt64(i);
  return true;
}

}  // namespace

ArgConv ArgConvFor(const Type& type) {
  ArgConv c;
  const Type* t = &type;
  if (t->kind() == TypeKind::kOptional) {
    c.optional = true;
    t = t->element().get();
  }
  switch (t->kind()) {
    case TypeKind::kTensor:
      c.conv = Conv::kTensor;
      break;
    case TypeKind::kInt:
    case TypeKind::kSymInt:
      c.conv = Conv::kInt;
      break;
    case TypeKind::kLayout:
      c.conv = Conv::kLayout;
      break;
    case TypeKind::kMemoryFormat:
      c.conv = Conv::kMemoryFormat;
      break;
    case TypeKind::kScalarType:
      c.conv = Conv::kScalarType;
      break;
    case TypeKind::kFloat:
    case TypeKind::kSymFloat:
      c.conv = Conv::kFloat;
      break;
    case TypeKind::kBool:
    case TypeKind::kSymBool:
      c.conv = Conv::kBool;
      break;
    case TypeKind::kStr:
      c.conv = Conv::kStr;
      break;
    case TypeKind::kScalar:
      c.conv = Conv::kScalar;
      break;
    case TypeKind::kDevice:
      c.conv = Conv::kDevice;
      break;
    case TypeKind::kTuple:
      c.conv = Conv::kTuple;
      c.tuple = Type::Tuple(t->contained());  // shares the element types
      break;
    case TypeKind::kList: {
      const Type& e = *t->element();
      switch (e.kind()) {
        case TypeKind::kTensor:
          c.conv = Conv::kTensorList;
          break;
        case TypeKind::kInt:
        case TypeKind::kSymInt:
          c.conv = Conv::kIntList;
          break;
        case TypeKind::kFloat:
        case TypeKind::kSymFloat:
          c.conv = Conv::kFloatList;
          break;
        case TypeKind::kBool:
          c.conv = Conv::kBoolList;
          break;
        case TypeKind::kStr:
          c.conv = Conv::kStrList;
          break;
        case TypeKind::kOptional:
          c.conv =
              e.element()->kind() == TypeKind::kTensor ? Conv::kOptionalTensorList : Conv::kGeneric;
          break;
        default:
          c.conv = Conv::kGeneric;
      }
      break;
    }
    default:
      c.conv = Conv::kGeneric;
  }
  return c;
}

Tensor ToTensor(py::handle obj) {
  if (GraphCapture* capture = ActiveCapture()) return CaptureTensor(capture, obj);
  if (PyTensor* p = AsPyTensor(obj)) return p->tensor;
  return ImportForeignTensor(obj);
}

IValue ToIValueGeneric(py::handle obj) {
  PyObject* o = obj.ptr();
  if (o == Py_None) return IValue();
  if (AsPyTensor(obj) != nullptr) return IValue(ToTensor(obj));
  if (PyBool_Check(o)) return IValue(o == Py_True);
  if (PyLong_Check(o)) return IValue(ToInt64(obj));
  if (PyFloat_Check(o)) return IValue(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) return IValue(obj.cast<std::string>());
  if (PyComplex_Check(o)) {
    return IValue(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  }
  if (IsSequence(obj)) {
    std::vector<IValue> elements;
    ForEach(obj, [&](py::handle e) { elements.push_back(ToIValueGeneric(e)); });
    // Homogeneous lists become typed lists (what schemas want).
    bool all_int = !elements.empty(), all_double = !elements.empty(),
         all_tensor = !elements.empty(), all_bool = !elements.empty(), all_str = !elements.empty();
    for (const IValue& e : elements) {
      all_int &= e.isInt();
      all_double &= e.isDouble();
      all_tensor &= e.isTensor();
      all_bool &= e.isBool();
      all_str &= e.isString();
    }
    if (PyTuple_Check(o) && !all_int && !all_tensor) return IValue::Tuple(std::move(elements));
    if (all_int) {
      std::vector<int64_t> v;
      for (const IValue& e : elements) v.push_back(e.toInt());
      return IValue(std::move(v));
    }
    if (all_double) {
      std::vector<double> v;
      for (const IValue& e : elements) v.push_back(e.toDouble());
      return IValue(std::move(v));
    }
    if (all_tensor) {
      std::vector<Tensor> v;
      for (const IValue& e : elements) v.push_back(e.toTensor());
      return IValue(std::move(v));
    }
    if (all_bool) {
      std::vector<bool> v;
      for (const IValue& e : elements) v.push_back(e.toBool());
      return IValue(std::move(v));
    }
    if (all_str) {
      std::vector<std::string> v;
      for (const IValue& e : elements) v.push_back(e.toStringRef());
      return IValue(std::move(v));
    }
    return IValue::GenericList(std::move(elements));
  }
  if (IsDLPackProducer(obj)) return IValue(ToTensor(obj));
  int64_t i;
  if (AsIndex(obj, &i)) return IValue(i);
  if (PyNumber_Check(o) && py::hasattr(obj, "__float__")) return IValue(obj.cast<double>());
  // torch.device / torch.dtype and other objects with a textual form.
  throw Error(ErrorKind::kType,
              StrCat("cannot convert a Python ", TypeName(obj), " to an opreg value"));
}

IValue ToIValue(py::handle obj, ArgConv conv, const OperatorHandle* op, size_t index,
                CallOrigin* origin) {
  // ToInt64 with the op and argument named when the int is beyond int64's range.
  auto to_int = [&](py::handle v) -> int64_t {
    try {
      return ToInt64(v);
    } catch (const Error& e) {
      RethrowNamed(e, op, index);
    }
  };
  // ToTensor for a list's item, an import failure (dtype, device opreg lacks) named too.
  auto item_tensor = [&](py::handle v) -> Tensor {
    try {
      return ToTensor(v);
    } catch (const Error& e) {
      RethrowNamed(e, op, index);
    }
  };
  PyObject* o = obj.ptr();
  if (o == Py_None && (conv.optional || conv.conv == Conv::kGeneric)) return IValue();
  switch (conv.conv) {
    case Conv::kTensor:
      if (o == Py_None) break;
      try {
        // The common cases first, each decided by a type test: opreg tensors, torch tensors
        // (before the subclass test, which walks the type's MRO), opreg.Tensor subclasses.
        if (ActiveCapture() == nullptr) {
          if (PyTensor* p = ExactPyTensor(obj)) return IValue(p->tensor);
          Tensor t;
          if (TryImportThroughExchangeApi(obj, &t, origin)) return IValue(std::move(t));
          if (PyTensor* p = AsPyTensor(obj)) return IValue(p->tensor);
        }
        if (AsPyTensor(obj) == nullptr && !HasFastImport(obj) && !IsDLPackProducer(obj)) {
          ThrowBadArg(obj, "Tensor (opreg.Tensor or a DLPack producer)", op, index);
        }
        return IValue(ToTensor(obj));
      } catch (const Error& e) {
        RethrowNamed(e, op, index);  // an import failure (dtype, device opreg lacks) is named
      }
    case Conv::kInt: {
      if (IsInt(obj)) return IValue(to_int(obj));
      // NumPy integers go through __index__ (as AsIndex); one beyond int64 is named like a
      // Python int.
      if (PyIndex_Check(o) && !PyBool_Check(o) && !PyFloat_Check(o)) {
        py::object index_value = py::reinterpret_steal<py::object>(PyNumber_Index(o));
        if (!index_value) throw py::error_already_set();
        return IValue(to_int(index_value));
      }
      break;
    }
    case Conv::kFloat:
      if (PyFloat_Check(o)) return IValue(PyFloat_AS_DOUBLE(o));
      if (IsInt(obj)) return IValue(static_cast<double>(to_int(obj)));
      if (!PyBool_Check(o) && PyNumber_Check(o) && !IsSequence(obj) &&
          py::hasattr(obj, "__float__") && AsPyTensor(obj) == nullptr) {
        return IValue(obj.cast<double>());
      }
      break;
    case Conv::kBool:
      if (PyBool_Check(o)) return IValue(o == Py_True);
      if (Py_TYPE(o)->tp_name == std::string_view("numpy.bool"))
        return IValue(PyObject_IsTrue(o) == 1);
      break;
    case Conv::kStr:
      if (PyUnicode_Check(o)) return IValue(obj.cast<std::string>());
      break;
    case Conv::kScalarType: {
      if (IsInt(obj)) return IValue(to_int(obj));
      // "float32", "f32", torch.float32, numpy dtypes / scalar types.
      std::string s = PyUnicode_Check(o) ? obj.cast<std::string>()
                      : py::hasattr(obj, "__name__") && PyType_Check(o)
                          ? obj.attr("__name__").cast<std::string>()
                          : std::string(py::str(obj));
      absl::StatusOr<DType> d = ParseDType(s);
      if (d.ok()) return IValue(static_cast<int64_t>(TorchScalarTypeCode(*d)));
      ThrowBadScalarType(obj, s, op, index);
    }
    case Conv::kLayout:
    case Conv::kMemoryFormat: {
      // A code, or a name: "strided", torch.strided (whose str is "torch.strided").
      if (IsInt(obj)) return IValue(to_int(obj));
      const std::string s = PyUnicode_Check(o) ? obj.cast<std::string>() : std::string(py::str(obj));
      if (conv.conv == Conv::kLayout) {
        if (std::optional<Layout> l = LayoutFromName(s)) return IValue(static_cast<int64_t>(*l));
        ThrowBadArg(obj, "Layout (a code, or a name such as torch.strided)", op, index);
      }
      if (std::optional<MemoryFormat> f = MemoryFormatFromName(s)) {
        return IValue(static_cast<int64_t>(*f));
      }
      ThrowBadArg(obj, "MemoryFormat (a code, or a name such as torch.channels_last)", op, index);
    }
    case Conv::kDevice:
      if (PyUnicode_Check(o)) return IValue(obj.cast<std::string>());
      if (py::hasattr(obj, "type") && py::hasattr(obj, "index")) {  // torch.device
        return IValue(std::string(py::str(obj)));
      }
      break;
    case Conv::kTensorList:
      if (IsSequence(obj)) {
        std::vector<Tensor> v;
        v.reserve(PySequence_Fast_GET_SIZE(o));
        ForEach(obj, [&](py::handle e) {
          if (AsPyTensor(e) == nullptr && !IsDLPackProducer(e)) {
            ThrowBadArg(e, "Tensor[] elements to be tensors", op, index);
          }
          v.push_back(item_tensor(e));
        });
        return IValue(std::move(v));
      }
      break;
    case Conv::kOptionalTensorList:
      if (IsSequence(obj)) {
        std::vector<std::optional<Tensor>> v;
        ForEach(obj, [&](py::handle e) {
          if (e.is_none()) {
            v.emplace_back();
          } else {
            v.emplace_back(item_tensor(e));
          }
        });
        return IValue(std::move(v));
      }
      break;
    case Conv::kIntList:
      if (IsSequence(obj)) {
        std::vector<int64_t> v;
        bool ok = true;
        ForEach(obj, [&](py::handle e) {
          int64_t i;
          if (IsInt(e)) {
            v.push_back(to_int(e));
          } else if (AsIndex(e, &i)) {
            v.push_back(i);
          } else {
            ok = false;
          }
        });
        if (ok) return IValue(std::move(v));
        return ToIValueGeneric(obj);  // the dispatcher reports the mismatch
      }
      if (IsInt(obj)) return IValue(to_int(obj));  // `int[2] k=1` takes one int
      break;
    case Conv::kFloatList:
      if (IsSequence(obj)) {
        std::vector<double> v;
        bool ok = true;
        ForEach(obj, [&](py::handle e) {
          if (PyFloat_Check(e.ptr())) {
            v.push_back(PyFloat_AS_DOUBLE(e.ptr()));
          } else if (IsInt(e)) {
            v.push_back(static_cast<double>(to_int(e)));
          } else {
            ok = false;
          }
        });
        if (ok) return IValue(std::move(v));
        return ToIValueGeneric(obj);
      }
      break;
    case Conv::kBoolList:
      if (IsSequence(obj)) {
        std::vector<bool> v;
        bool ok = true;
        ForEach(obj, [&](py::handle e) {
          if (PyBool_Check(e.ptr())) {
            v.push_back(e.ptr() == Py_True);
          } else {
            ok = false;
          }
        });
        if (ok) return IValue(std::move(v));
        return ToIValueGeneric(obj);
      }
      break;
    case Conv::kStrList:
      if (IsSequence(obj)) {
        std::vector<std::string> v;
        bool ok = true;
        ForEach(obj, [&](py::handle e) {
          if (PyUnicode_Check(e.ptr())) {
            v.push_back(e.cast<std::string>());
          } else {
            ok = false;
          }
        });
        if (ok) return IValue(std::move(v));
        return ToIValueGeneric(obj);
      }
      break;
    case Conv::kScalar:
    case Conv::kTuple:
      // A Python tuple or list of the tuple's arity, each element converted for its own type
      // (so `(1, 32)` for `(int, int)?` is a tuple, never an int[]).
      if (IsSequence(obj) &&
          static_cast<size_t>(PySequence_Fast_GET_SIZE(o)) == conv.tuple->contained().size()) {
        std::vector<IValue> elements;
        size_t i = 0;
        ForEach(obj, [&](py::handle e) {
          elements.push_back(ToIValue(e, ArgConvFor(*conv.tuple->contained()[i++]), op, index));
        });
        return IValue::Tuple(std::move(elements));
      }
      break;
    case Conv::kGeneric:
      return ToIValueGeneric(obj);
  }
  // Not the schema's type: converted as it is, the dispatcher's check names op, argument,
  // expected and actual type.
  try {
    return ToIValueGeneric(obj);
  } catch (const Error& e) {
    // An int beyond int64: the range is the problem, not the type.
    if (op != nullptr && IsInt(obj) && e.kind() == ErrorKind::kValue) RethrowNamed(e, op, index);
    const char* expected = "another type";
    if (op != nullptr) {
      static thread_local std::string s;
      s = op->schema().arguments()[index].type()->str();
      expected = s.c_str();
    }
    ThrowBadArg(obj, expected, op, index);
  }
}

py::object FromIValue(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::kNone:
      return py::none();
    case IValue::Tag::kTensor:
      return WrapResultTensor(v.toTensor());
    case IValue::Tag::kInt:
      return py::int_(v.toInt());
    case IValue::Tag::kDouble:
      return py::float_(v.toDouble());
    case IValue::Tag::kComplex: {
      auto c = v.toComplex();
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
    }
    case IValue::Tag::kBool:
      return py::bool_(v.toBool());
    case IValue::Tag::kString:
      return py::str(v.toStringRef());
    case IValue::Tag::kDevice:
      return py::str(v.toDevice().str());
    case IValue::Tag::kIntList:
      return py::cast(v.toIntList());
    case IValue::Tag::kDoubleList:
      return py::cast(v.toDoubleList());
    case IValue::Tag::kBoolList:
      return py::cast(v.toBoolList());
    case IValue::Tag::kComplexList:
      return py::cast(v.toComplexList());
    case IValue::Tag::kStringList:
      return py::cast(v.toStringList());
    case IValue::Tag::kTensorList: {
      py::list l;
      for (const Tensor& t : v.toTensorList()) l.append(WrapResultTensor(t));
      return l;
    }
    case IValue::Tag::kOptionalTensorList: {
      py::list l;
      for (const auto& t : v.toOptionalTensorList()) {
        l.append(t ? WrapResultTensor(*t) : py::none());
      }
      return l;
    }
    case IValue::Tag::kGenericList: {
      py::list l;
      for (const IValue& e : v.toGenericList()) l.append(FromIValue(e));
      return l;
    }
    case IValue::Tag::kTuple: {
      const auto& es = v.toTuple();
      py::tuple t(es.size());
      for (size_t i = 0; i < es.size(); ++i) t[i] = FromIValue(es[i]);
      return t;
    }
    case IValue::Tag::kObject:
      throw Error(ErrorKind::kNotImplemented,
                  StrCat("custom class objects (", v.toObject()->class_name(),
                         ") cannot be passed to Python yet"));
  }
  return py::none();
}

py::object ReturnsToPython(Stack& stack, const std::vector<ReturnedArgument>& returned) {
  auto convert = [&](size_t r) -> py::object {
    if (r < returned.size() && returned[r].object != nullptr && stack[r].isTensor() &&
        stack[r].toTensor().unsafe_get_impl() == returned[r].tensor.unsafe_get_impl()) {
      return py::reinterpret_borrow<py::object>(returned[r].object);
    }
    return FromIValue(stack[r]);
  };
  switch (stack.size()) {
    case 0:
      return py::none();
    case 1:
      return convert(0);
    default: {
      py::tuple t(stack.size());
      for (size_t i = 0; i < stack.size(); ++i) t[i] = convert(i);
      return t;
    }
  }
}

void PushReturns(const OperatorHandle& op, py::handle result, Stack* stack) {
  const auto& returns = op.schema().returns();
  const std::string name = op.operator_name().str();
  auto convert = [&](py::handle r, size_t i) {
    const ArgConv c = ArgConvFor(*returns[i].type());
    if (r.is_none() && !c.optional && c.conv != Conv::kGeneric) {
      throw Error(ErrorKind::kType,
                  StrCat("[", name, "] the Python kernel returned None for return #", i,
                         " of type ", returns[i].type()->str()));
    }
    // Kernels run with interception suspended, so no capture converts their returns.
    stack->push_back(ToIValue(r, c, nullptr, i));
  };
  if (returns.empty()) return;  // a returned value of an op declared `-> ()` is ignored
  if (returns.size() == 1) {
    convert(result, 0);
    return;
  }
  if (!IsSequence(result) ||
      static_cast<size_t>(PySequence_Fast_GET_SIZE(result.ptr())) != returns.size()) {
    throw Error(ErrorKind::kType, StrCat("[", name, "] the Python kernel must return a tuple of ",
                                         returns.size(), " values, got ", TypeName(result)));
  }
  for (size_t i = 0; i < returns.size(); ++i) {
    convert(PySequence_Fast_GET_ITEM(result.ptr(), static_cast<Py_ssize_t>(i)), i);
  }
}

}  // namespace opreg::python
