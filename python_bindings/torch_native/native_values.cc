// Why each conversion is as it is (the contract is in native_values.h).
#include "native_values.h"

#include <ATen/ops/from_blob.h>
#include <c10/util/intrusive_ptr.h>

#include <atomic>
#include <complex>
#include <optional>
#include <utility>
#include <vector>

#include "opreg/core/error.h"
#include "opreg/core/scalar_type.h"
#include "opreg/core/string_util.h"

namespace opreg::torch_native {
namespace {

std::atomic<int64_t> g_live_results{0};

std::string Named(const ValueName& n) {
  return n.argument != nullptr ? StrCat("argument '", *n.argument, "' (#", n.index, ")")
                               : StrCat("return #", n.index);
}

[[noreturn]] __attribute__((noinline, cold)) void ThrowUnsupported(const ValueName& n,
                                                                   const std::string& what) {
  throw Error(ErrorKind::kType, StrCat("[", *n.op, "] ", Named(n), ": torch passed ", what,
                                       ", which opreg has no value for"));
}

// ImportTensor's errors, out of line so that its common path keeps a small frame.
[[noreturn]] __attribute__((noinline, cold)) void ThrowUnsupportedDType(const ValueName& n,
                                                                        int64_t code) {
  const TorchScalarTypeEntry* entry = TorchScalarTypeFromCode(code);
  throw Error(ErrorKind::kType,
              ArgErrorMessage(*n.op, *n.argument, static_cast<int>(n.index),
                              "a tensor of a dtype opreg has",
                              entry != nullptr ? StrCat("torch.", entry->name)
                                               : StrCat("torch ScalarType code ", code)));
}
[[noreturn]] __attribute__((noinline, cold)) void ThrowUnsupportedDevice(const ValueName& n,
                                                                         const c10::Device& d) {
  throw Error(ErrorKind::kValue,
              ArgErrorMessage(*n.op, *n.argument, static_cast<int>(n.index),
                              "a CPU or CUDA tensor", StrCat("a tensor on ", d.str())));
}

// The reference an opreg tensor made of a torch tensor takes when it outlives its call (the
// call's scope borrowed torch's), dropped when the opreg tensor goes. A tensor that does not
// outlive the call costs neither.
void TakeTorchReference(void* impl) {
  c10::raw::intrusive_ptr::incref(static_cast<c10::TensorImpl*>(impl));
}
void DropTorchReference(void* impl) {
  c10::raw::intrusive_ptr::decref(static_cast<c10::TensorImpl*>(impl));
}

// Torch frees a tensor made of an opreg result: the opreg tensor's memory goes back to its
// allocator, and its objects, when nothing else holds them, to this thread's cache.
void ReleaseResult(void* context) {
  g_live_results.fetch_sub(1, std::memory_order_relaxed);
  Tensor t(intrusive_ptr<TensorImpl>::reclaim(static_cast<TensorImpl*>(context)));
  RecycledTensors::Give(&t, RecyclePool::kOwned);
}

// torch's error for writing a tensor it will not have written (an inference tensor outside
// inference_mode), named for the argument; nothing is written then.
void BumpVersion(c10::TensorImpl* impl, const ValueName& n) {
  try {
    impl->bump_version();
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::kRuntime, StrCat("[", *n.op, "] ", Named(n), " was written: ",
                                            e.what_without_backtrace()));
  }
}

Tensor ImportTensor(const at::Tensor& t, bool written, const ValueName& n, RecycleScope& scope,
                    ArgumentFacts& facts) {
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (written) BumpVersion(impl, n);
  // A torch tensor passed twice is one opreg tensor, so the kernel sees the aliasing.
  if (const Tensor* known = scope.Find(impl)) return *known;
  const int64_t code = static_cast<int64_t>(t.scalar_type());
  const std::optional<DType> dtype = DTypeFromTorchScalarTypeCode(code);
  if (OPREG_UNLIKELY(!dtype)) ThrowUnsupportedDType(n, code);
  const c10::Device d = t.device();
  Device device;
  if (d.is_cpu()) {
    device = Device::cpu();
  } else if (d.is_cuda()) {
    device = Device::cuda(d.index());
    if (facts.cuda_device < 0) facts.cuda_device = d.index();
  } else {
    ThrowUnsupportedDevice(n, d);
  }
  // The mutable pointer even for a read argument (as the stable ABI's aoti_torch_get_data_ptr):
  // the same torch tensor may come again as a written argument, and is then this opreg tensor,
  // so copy-on-write storage gets its own copy now.
  void* data = t.data_ptr();
  const c10::IntArrayRef sizes = t.sizes();
  const c10::IntArrayRef strides = t.strides();
  // Borrows torch's reference (BorrowTorchTensors); a throw leaves nothing to undo.
  Tensor out = scope.FromBlob(data, IntArrayRef(sizes.data(), sizes.size()),
                              IntArrayRef(strides.data(), strides.size()), *dtype, device, impl,
                              &DropTorchReference, impl);
  facts.device_types |= 1u << static_cast<int>(device.type);
  return out;
}

std::optional<Tensor> ImportOptionalTensor(const c10::IValue& v, bool written, const ValueName& n,
                                           RecycleScope& scope, ArgumentFacts& facts) {
  if (v.isNone()) return std::nullopt;
  if (!v.isTensor()) ThrowUnsupported(n, StrCat("a list item of kind ", v.tagKind()));
  const at::Tensor& t = v.toTensor();
  if (!t.defined()) return std::nullopt;
  return ImportTensor(t, written, n, scope, facts);
}

int64_t ConcreteInt(const c10::SymInt& s, const ValueName& n) {
  if (std::optional<int64_t> i = s.maybe_as_int()) return *i;
  ThrowUnsupported(n, "a symbolic int");
}

at::Tensor MakeTorchTensor(const Tensor& t, const ValueName& n) {
  const Device d = t.device();
  if (!d.is_cpu() && !d.is_cuda()) {
    throw Error(ErrorKind::kRuntime,
                StrCat("[", *n.op, "] ", Named(n), " is a tensor on ", DeviceTypeName(d.type),
                       ", which torch gets no view of"));
  }
  const c10::Device device = d.is_cuda() ? c10::Device(c10::DeviceType::CUDA, d.index)
                                         : c10::Device(c10::DeviceType::CPU);
  TensorImpl* impl = t.unsafe_get_impl();
  IntrusiveIncRef(impl);  // the torch tensor's reference, dropped by ReleaseResult
  g_live_results.fetch_add(1, std::memory_order_relaxed);
  return at::for_blob(t.data_ptr(), c10::IntArrayRef(t.sizes().data(), t.sizes().size()))
      .strides(c10::IntArrayRef(t.strides().data(), t.strides().size()))
      .context(impl, &ReleaseResult)
      .target_device(device)
      .options(at::TensorOptions()
                   .dtype(static_cast<c10::ScalarType>(TorchScalarTypeCode(t.dtype())))
                   .device(device))
      .make_tensor();
}

at::Tensor TensorToTorch(const Tensor& t, const ValueName& n, CallTensors& tensors) {
  if (!t.defined()) {
    throw Error(ErrorKind::kRuntime,
                StrCat("[", *n.op, "] ", Named(n), " is not a defined tensor"));
  }
  // An argument's own tensor goes back as the caller's torch tensor, a result seen before as the
  // torch tensor made of it then.
  if (c10::TensorImpl* theirs = tensors.Find(t.unsafe_get_impl())) {
    return at::Tensor(c10::intrusive_ptr<c10::TensorImpl>::unsafe_reclaim_from_nonowning(theirs));
  }
  at::Tensor made = MakeTorchTensor(t, n);
  tensors.AddResult(t.unsafe_get_impl(), made.unsafeGetTensorImpl());  // on the caller's stack
  return made;
}

}  // namespace

void BorrowTorchTensors(RecycleScope& scope) {
  scope.BorrowOwners(&DropTorchReference, &TakeTorchReference);
}

IValue FromTorchTensor(const at::Tensor& t, bool written, const ValueName& n, RecycleScope& scope,
                       ArgumentFacts& facts) {
  if (OPREG_UNLIKELY(!t.defined())) {  // `Tensor?` as torch sometimes passes it: None
    facts.exact = false;
    return IValue();
  }
  return ImportTensor(t, written, n, scope, facts);
}

IValue FromTorchValue(const c10::IValue& v, bool written, const ValueName& n, RecycleScope& scope,
                      ArgumentFacts& facts) {
  if (v.isInt()) return IValue(v.toInt());
  if (v.isDouble()) return IValue(v.toDouble());
  if (v.isBool()) return IValue(v.toBool());
  if (v.isNone()) return IValue();
  if (v.isIntList()) return IValue(v.toIntVector());
  if (v.isComplexDouble()) {
    const c10::complex<double> c = v.toComplexDouble();
    return IValue(std::complex<double>(c.real(), c.imag()));
  }
  if (v.isSymInt()) return IValue(ConcreteInt(v.toSymInt(), n));
  if (v.isString()) return IValue(std::string(v.toStringRef()));
  if (v.isDevice()) {
    const c10::Device d = v.toDevice();
    if (d.is_cpu()) return IValue(Device::cpu());
    if (d.is_cuda()) return IValue(Device::cuda(d.index()));
    if (d.is_meta()) return IValue(Device::meta());
    throw Error(ErrorKind::kType, StrCat("[", *n.op, "] ", Named(n),
                                         ": expected Device (cpu, cuda or meta), got torch device ",
                                         d.str()));
  }
  if (v.isTensorList()) {
    std::vector<Tensor> out;
    for (const at::Tensor& t : v.toTensorVector()) {
      if (!t.defined()) ThrowUnsupported(n, "an undefined tensor in a Tensor[]");
      out.push_back(ImportTensor(t, written, n, scope, facts));
    }
    return IValue(std::move(out));
  }
  if (v.isDoubleList()) return IValue(v.toDoubleVector());
  if (v.isBoolList()) {
    const c10::List<bool> list = v.toBoolList();
    return IValue(std::vector<bool>(list.begin(), list.end()));
  }
  if (v.isSymIntList()) {
    std::vector<int64_t> out;
    for (const c10::SymInt& s : v.toSymIntVector()) out.push_back(ConcreteInt(s, n));
    return IValue(std::move(out));
  }
  if (v.isList()) {
    const c10::List<c10::IValue> list = v.toList();
    const c10::TypePtr element = list.elementType();
    if (element->kind() == c10::TypeKind::OptionalType &&
        element->containedType(0)->kind() == c10::TypeKind::TensorType) {  // `Tensor?[]`
      std::vector<std::optional<Tensor>> out;
      for (const c10::IValue& item : list) {
        out.push_back(ImportOptionalTensor(item, written, n, scope, facts));
      }
      return IValue(std::move(out));
    }
    if (element->kind() == c10::TypeKind::StringType) {
      std::vector<std::string> out;
      for (const c10::IValue& item : list) out.emplace_back(item.toStringRef());
      return IValue(std::move(out));
    }
    facts.exact = false;  // the dispatcher's checks type the items
    std::vector<IValue> out;
    for (const c10::IValue& item : list) {
      out.push_back(FromTorch(item, written, n, scope, facts));
    }
    return IValue::GenericList(std::move(out));
  }
  if (v.isTuple()) {  // a tuple-typed argument such as vLLM's `(int, int)? group_shape`
    facts.exact = false;
    std::vector<IValue> out;
    for (const c10::IValue& item : v.toTupleRef().elements()) {
      out.push_back(FromTorch(item, written, n, scope, facts));
    }
    return IValue::Tuple(std::move(out));
  }
  ThrowUnsupported(n, StrCat("a value of kind ", v.tagKind()));
}

c10::IValue ToTorch(IValue v, const ValueName& n, CallTensors& tensors) {
  if (v.isTensor()) return TensorToTorch(v.toTensor(), n, tensors);
  if (v.isInt()) return c10::IValue(v.toInt());
  if (v.isDouble()) return c10::IValue(v.toDouble());
  if (v.isBool()) return c10::IValue(v.toBool());
  if (v.isNone()) return c10::IValue();
  if (v.isComplex()) {
    const std::complex<double> c = v.toComplex();
    return c10::IValue(c10::complex<double>(c.real(), c.imag()));
  }
  if (v.isString()) return c10::IValue(v.toStringRef());
  if (v.isDevice()) {
    const Device d = v.toDevice();
    if (d.is_cuda()) return c10::IValue(c10::Device(c10::DeviceType::CUDA, d.index));
    if (d.is_meta()) return c10::IValue(c10::Device(c10::DeviceType::Meta));
    return c10::IValue(c10::Device(c10::DeviceType::CPU));
  }
  if (v.isIntList()) return c10::IValue(v.toIntList());
  if (v.isDoubleList()) return c10::IValue(v.toDoubleList());
  if (v.isBoolList()) {
    c10::List<bool> out;
    for (bool b : v.toBoolList()) out.push_back(b);
    return c10::IValue(std::move(out));
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const Tensor& t : v.toTensorList()) out.push_back(TensorToTorch(t, n, tensors));
    return c10::IValue(std::move(out));
  }
  if (v.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> out;
    for (const std::optional<Tensor>& t : v.toOptionalTensorList()) {
      out.push_back(t && t->defined() ? std::optional<at::Tensor>(TensorToTorch(*t, n, tensors))
                                      : std::nullopt);
    }
    return c10::IValue(std::move(out));
  }
  if (v.isStringList()) {
    c10::List<std::string> out;
    for (const std::string& s : v.toStringList()) out.push_back(s);
    return c10::IValue(std::move(out));
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const IValue& item : v.toTuple()) items.push_back(ToTorch(item, n, tensors));
    return c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
  }
  throw Error(ErrorKind::kRuntime, StrCat("[", *n.op, "] ", Named(n), " is a ", v.TagName(),
                                          ", which torch gets no value for"));
}

int64_t LiveResults() { return g_live_results.load(std::memory_order_relaxed); }

}  // namespace opreg::torch_native
