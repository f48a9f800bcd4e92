// The call paths: boxed calls (argument binding, defaults, type checks, key computation) and
// the slow paths of typed calls (signature checks, mixed-device errors).
#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/core/string_view.h"
#include "opreg/dispatch/argument_binding.h"
#include "opreg/dispatch/dispatcher.h"

namespace opreg {
namespace {

[[noreturn]] __attribute__((noinline, cold)) void ThrowReturnCount(const OperatorName& op,
                                                                   DispatchKey key, size_t left,
                                                                   size_t declared) {
  OPREG_THROW(kRuntime, "[", op.str(), "] the ", DispatchKeyName(key), " kernel left ", left,
              " values on the stack, but the schema declares ", declared, " returns");
}

// The device types of the tensors in one boxed argument, as a bit mask.
uint8_t DeviceBits(const IValue& v) {
  detail::DeviceMask m;
  switch (v.tag()) {
    case IValue::Tag::kTensor:
      m.AddTensor(v.toTensor());
      break;
    case IValue::Tag::kTensorList:
      for (const Tensor& t : v.toTensorList()) m.AddTensor(t);
      break;
    case IValue::Tag::kOptionalTensorList:
      for (const auto& t : v.toOptionalTensorList()) {
        if (t) m.AddTensor(*t);
      }
      break;
    case IValue::Tag::kGenericList:
      for (const IValue& e : v.toGenericList()) m.tensors |= DeviceBits(e);
      break;
    default:
      break;
  }
  return m.tensors;
}

// Checks one boxed argument against its schema type, converting the few values that have an
// unambiguous schema form (int for float, a device string for Device, a scalar for a sized int
// list). Returns false on a mismatch.
bool CheckAndCoerce(const Argument& arg, const Type& type, IValue* v) {
  switch (type.kind()) {
    case TypeKind::kAny:
    case TypeKind::kVar:
      return true;
    case TypeKind::kOptional:
      // An undefined tensor for `Tensor?` is None, as in libtorch.
      if (v->isTensor() && !v->toTensor().defined()) *v = IValue();
      return v->isNone() || CheckAndCoerce(arg, *type.element(), v);
    case TypeKind::kTensor:  // `Tensor` is never an undefined (default-constructed) tensor
      return v->isTensor() && v->toTensor().defined();
    case TypeKind::kInt:
    case TypeKind::kSymInt:
    case TypeKind::kScalarType:
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat:
      return v->isInt();
    case TypeKind::kFloat:
    case TypeKind::kSymFloat:
      if (v->isInt()) *v = IValue(static_cast<double>(v->toInt()));
      return v->isDouble();
    case TypeKind::kComplex:
      if (v->isInt() || v->isDouble()) *v = IValue(std::complex<double>(v->toScalarDouble(), 0));
      return v->isComplex();
    case TypeKind::kBool:
    case TypeKind::kSymBool:
      return v->isBool();
    case TypeKind::kStr:
      return v->isString();
    case TypeKind::kScalar:
      return v->isScalar();
    case TypeKind::kDevice:
      if (v->isString()) {
        absl::StatusOr<Device> d = Device::Parse(v->toStringRef());
        if (!d.ok()) return false;
        *v = IValue(*d);
      }
      return v->isDevice();
    case TypeKind::kClass:
      return v->isObject();
    case TypeKind::kTuple: {
      // Arity and every element (torch's rule), coercing elements as single values are.
      if (!v->isTuple()) return false;
      const std::vector<TypePtr>& types = type.contained();
      if (v->toTuple().size() != types.size()) return false;
      std::vector<IValue> elements = v->toTuple();
      for (size_t i = 0; i < types.size(); ++i) {
        if (!CheckAndCoerce(arg, *types[i], &elements[i])) return false;
      }
      *v = IValue::Tuple(std::move(elements));
      return true;
    }
    case TypeKind::kList: {
      const Type& e = *type.element();
      switch (e.kind()) {
        case TypeKind::kTensor:
          if (v->isGenericList()) {
            std::vector<Tensor> ts;
            for (const IValue& x : v->toGenericList()) {
              if (!x.isTensor()) return false;
              ts.push_back(x.toTensor());
            }
            *v = IValue(std::move(ts));
          }
          return v->isTensorList();
        case TypeKind::kOptional:
          if (e.element()->kind() != TypeKind::kTensor) return v->isList();
          if (v->isTensorList()) {
            *v = IValue(std::vector<std::optional<Tensor>>(v->toTensorList().begin(),
                                                           v->toTensorList().end()));
          } else if (v->isGenericList()) {
            std::vector<std::optional<Tensor>> ts;
            for (const IValue& x : v->toGenericList()) {
              if (x.isNone()) {
                ts.emplace_back();
              } else if (x.isTensor()) {
                ts.emplace_back(x.toTensor());
              } else {
                return false;
              }
            }
            *v = IValue(std::move(ts));
          }
          return v->isOptionalTensorList();
        case TypeKind::kInt:
        case TypeKind::kSymInt:
          // `int[2] stride` takes a single int, as in PyTorch.
          if (v->isInt() && arg.N()) *v = IValue(std::vector<int64_t>(*arg.N(), v->toInt()));
          if (v->isGenericList() && v->toGenericList().empty()) *v = IValue(std::vector<int64_t>());
          return v->isIntList();
        case TypeKind::kFloat:
          if (v->isIntList()) {
            *v = IValue(std::vector<double>(v->toIntList().begin(), v->toIntList().end()));
          }
          return v->isDoubleList();
        case TypeKind::kBool:
          return v->isBoolList();
        case TypeKind::kStr:
          return v->isStringList();
        default:
          return v->isList();
      }
    }
    default:
      return true;  // Generator, Stream, Storage, Dict, ...: passed through as given
  }
}

}  // namespace

bool CheckAndCoerceValue(const Argument& arg, IValue* v) {
  return CheckAndCoerce(arg, *arg.type(), v);
}

namespace detail {

void RethrowNamingOp(const OperatorName& op, const Error& error) {
  // "[" opens every message opreg's checks format (ArgErrorMessage, "[op] ..."): those already
  // say which op, and an op the kernel called is the one to name.
  if (!error.message().empty() && error.message()[0] == '[') throw error;
  throw Error(error.kind(), StrCat("[", op.str(), "] ", error.message()), error.file(),
              error.line());
}

const KernelFunction& RedirectToCallBoxed() {
  static const KernelFunction* k = new KernelFunction(KernelFunction::FromBoxed(
      [](const OperatorHandle& op, Stack* stack) { op.CallBoxed(stack); }));
  return *k;
}
}  // namespace detail

const OpDefinition& OperatorHandle::definition() const {
  const OpDefinition* def = entry_->definition();
  OPREG_CHECK_INDEX(def != nullptr, "operator ", entry_->name().str(),
                    " is no longer defined (the library that defined it was unloaded)");
  return *def;
}

DispatchKey OperatorHandle::ComputeDispatchKey(const Stack& stack, size_t first) const {
  const OpDefinition& def = definition();
  uint8_t bits = 0;
  for (uint16_t i : def.tensor_arguments) {
    if (first + i >= stack.size()) continue;
    const IValue& v = stack[first + i];
    if (OPREG_LIKELY(v.isTensor())) {  // the common case inline; lists in DeviceBits
      const Tensor& t = v.toTensor();
      if (t.defined()) bits |= static_cast<uint8_t>(1u << static_cast<int>(t.device().type));
    } else {
      bits |= DeviceBits(v);
    }
  }
  if (bits != 0 && (bits & (bits - 1)) == 0) {
    return DispatchKeyFor(static_cast<DeviceType>(__builtin_ctz(bits)));
  }
  // Meta with a real device is mixed too (it never silently routes to the Meta kernel).
  if (bits != 0) ThrowMixedDevices(Stack(stack.begin() + first, stack.end()));
  for (uint16_t i : def.device_arguments) {
    if (first + i < stack.size() && stack[first + i].isDevice()) {
      return DispatchKeyFor(stack[first + i].toDevice().type);
    }
  }
  return DispatchKey::kCPU;
}

void OperatorHandle::ThrowMixedDevices(const Stack& args) const {
  const OpDefinition& def = definition();
  std::string first, second;
  Device first_device = Device::cpu();
  auto visit = [&](const Tensor& t, const std::string& where) {
    if (!t.defined()) return;
    if (first.empty()) {
      first = where;
      first_device = t.device();
    } else if (second.empty() && t.device().type != first_device.type) {
      second = StrCat(where, " on ", t.device().str());
    }
  };
  for (uint16_t i : def.tensor_arguments) {
    if (i >= args.size()) continue;
    const std::string name = StrCat("argument '", def.schema.arguments()[i].name(), "' (#", i, ")");
    const IValue& v = args[i];
    if (v.isTensor()) {
      visit(v.toTensor(), name);
    } else if (v.isTensorList()) {
      const auto& ts = v.toTensorList();
      for (size_t j = 0; j < ts.size(); ++j) visit(ts[j], StrCat(name, " element ", j));
    } else if (v.isOptionalTensorList()) {
      const auto& ts = v.toOptionalTensorList();
      for (size_t j = 0; j < ts.size(); ++j) {
        if (ts[j]) visit(*ts[j], StrCat(name, " element ", j));
      }
    }
  }
  OPREG_THROW(kValue, "[", entry_->name().str(),
              "] expected all tensor arguments on one device, but ", first, " is on ",
              first_device.str(), " and ", second);
}

namespace {

// Whether two dense (contiguous) tensors' bytes intersect without being the very same bytes.
// Tensors that are not contiguous are not compared (as torch's overlap check answers "too hard"
// for them): their byte ranges can interleave without sharing an element.
bool PartiallyOverlap(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return false;
  if (!a.is_contiguous() || !b.is_contiguous() || a.device() != b.device()) return false;
  const auto* pa = static_cast<const char*>(a.data_ptr());
  const auto* pb = static_cast<const char*>(b.data_ptr());
  if (pa == nullptr || pb == nullptr || a.is_meta()) return false;  // meta tensors hold no memory
  const size_t na = a.nbytes(), nb = b.nbytes();
  if (pa == pb && na == nb) return false;  // the same memory: an in-place use, allowed
  return pa < pb + nb && pb < pa + na;
}

}  // namespace

void OperatorHandle::CheckWrittenTensors(const OpDefinition& def, const Tensor* const* tensors,
                                         size_t n) const {
  for (uint16_t w : def.written_tensor_arguments) {
    if (w >= n || tensors[w] == nullptr) continue;
    if (OPREG_UNLIKELY(tensors[w]->defined() && tensors[w]->storage().read_only())) {
      const auto& args = def.schema.arguments();
      OPREG_THROW(kValue, ArgErrorMessage(entry_->name().str(), args[w].name(),
                                          static_cast<int>(w),
                                          "a writable tensor (the op writes to it)",
                                          "a tensor over read-only memory"));
    }
    for (uint16_t i : def.tensor_arguments) {
      if (i == w || i >= n || tensors[i] == nullptr) continue;
      if (!PartiallyOverlap(*tensors[w], *tensors[i])) continue;
      const auto& args = def.schema.arguments();
      OPREG_THROW(kValue, "[", entry_->name().str(), "] argument '", args[w].name(), "' (#", w,
                  ") partially overlaps argument '", args[i].name(), "' (#", i,
                  "): some of the elements written share memory with the other argument's, so "
                  "the result would depend on the order of the kernel's writes; clone() one of "
                  "them");
    }
  }
}

void OperatorHandle::CheckWrittenArguments(const OpDefinition& def, const Stack& stack) const {
  absl::InlinedVector<const Tensor*, 8> tensors(stack.size(), nullptr);
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].isTensor()) tensors[i] = &stack[i].toTensor();
  }
  CheckWrittenTensors(def, tensors.data(), tensors.size());
}

// Small enough to inline into both boxed calls; the error is formatted out of line.
inline void OperatorHandle::RunKernel(DispatchKey key, const FunctionSchema& schema,
                                      Stack* stack) const {
  const KernelFunction& kernel = entry_->KernelOrThrow(key);
  try {
    kernel.CallBoxed(*this, stack);
  } catch (const Error& e) {
    detail::RethrowNamingOp(entry_->name(), e);
  }
  if (OPREG_UNLIKELY(!schema.is_varret() && stack->size() != schema.returns().size())) {
    ThrowReturnCount(entry_->name(), key, stack->size(), schema.returns().size());
  }
}

void OperatorHandle::CallBoxedInPlace(Stack* stack) const { CallBoxedChecked(stack, true); }

void OperatorHandle::CallBoxedWithFreshOuts(Stack* stack) const {
  CallBoxedChecked(stack, false);
}

inline void OperatorHandle::CallBoxedChecked(Stack* stack, bool check_written) const {
  OPREG_CHECK(stack != nullptr, "[", entry_->name().str(), "] CallBoxed: null stack");
  const OpDefinition& def = definition();
  const FunctionSchema& schema = def.schema;
  const auto& args = schema.arguments();
  // The op's name is only formatted when there is an error to report: this is the hot path.
  if (stack->size() > args.size() && !schema.is_vararg()) {
    OPREG_THROW(kType, "[", entry_->name().str(), "] expected at most ", args.size(),
                " arguments, got ", stack->size());
  }
  for (size_t i = stack->size(); i < args.size(); ++i) {
    if (!args[i].default_value()) {
      ArgumentBinding(schema, entry_->name().str()).DefaultOf(i);  // throws, naming it
    }
    stack->push_back(*args[i].default_value());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    IValue& v = (*stack)[i];
    const Type& type = *args[i].type();
    // The common exact matches inline; everything else (coercions, containers, errors) in
    // CheckAndCoerce.
    if (OPREG_LIKELY(type.kind() == TypeKind::kTensor && v.isTensor() && v.toTensor().defined())) {
      continue;
    }
    if (!CheckAndCoerce(args[i], type, &v)) {
      OPREG_THROW(kType, ArgErrorMessage(entry_->name().str(), args[i].name(), static_cast<int>(i),
                                         args[i].type()->str(), detail::BoxedTypeName(v)));
    }
  }
  if (detail::AnyCallInterceptor()) {
    if (CallInterceptor* interceptor = CurrentCallInterceptor()) {
      SuspendCallInterception real_calls_inside;
      interceptor->Intercept(*this, stack);
      if (!schema.is_varret() && stack->size() != schema.returns().size()) {
        OPREG_THROW(kRuntime, "[", entry_->name().str(), "] the call interceptor left ",
                    stack->size(), " values on the stack, but the schema declares ",
                    schema.returns().size(), " returns");
      }
      return;
    }
  }
  if (OPREG_UNLIKELY(check_written && !def.written_tensor_arguments.empty())) {
    CheckWrittenArguments(def, *stack);
  }
  RunKernel(ComputeDispatchKey(*stack, 0), schema, stack);
}

void OperatorHandle::ThrowWrongReturnCount(DispatchKey key, size_t left, size_t declared) const {
  ThrowReturnCount(entry_->name(), key, left, declared);
}

void OperatorHandle::CallBoxedPreparedSlow(Stack* stack, DeviceType device) const {
  // Interception needs the checked path (the interceptor records defaults and coerced values).
  if (OPREG_UNLIKELY(detail::AnyCallInterceptor())) return CallBoxedInPlace(stack);
  const OpDefinition* def = entry_->definition();
  if (OPREG_UNLIKELY(def == nullptr)) def = &definition();  // throws, naming the op
  if (OPREG_UNLIKELY(!def->written_tensor_arguments.empty())) CheckWrittenArguments(*def, *stack);
  RunKernel(DispatchKeyFor(device), def->schema, stack);
}

void OperatorHandle::CallBoxedPreparedWithFreshOuts(Stack* stack, DeviceType device,
                                                    const OpDefinition* def) const {
  if (OPREG_UNLIKELY(detail::AnyCallInterceptor() || entry_->definition() != def)) {
    return CallBoxedWithFreshOuts(stack);
  }
  RunKernel(DispatchKeyFor(device), def->schema, stack);
}

Stack OperatorHandle::CallBoxed(std::vector<IValue> positional,
                                const std::vector<std::pair<std::string, IValue>>& kwargs) const {
  const FunctionSchema& s = schema();
  const std::string op = entry_->name().str();
  const ArgumentBinding binding(s, op);
  binding.CheckPositionalCount(positional.size());
  std::vector<std::optional<IValue>> slots(std::max(s.arguments().size(), positional.size()));
  for (size_t i = 0; i < positional.size(); ++i) slots[i] = std::move(positional[i]);
  for (const auto& [name, value] : kwargs) {
    slots[binding.KeywordSlot(name, [&](size_t i) { return slots[i].has_value(); })] = value;
  }
  Stack stack;
  stack.reserve(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    stack.push_back(slots[i] ? std::move(*slots[i]) : binding.DefaultOf(i));
  }
  CallBoxed(&stack);
  return stack;
}

void OperatorHandle::CheckTypedSignature(const CppSignature& sig,
                                         const InferredSignature& inferred) const {
  const OpDefinition& def = definition();
  const FunctionSchema& s = def.schema;
  std::string reason;
  if (inferred.arguments.size() != s.arguments().size()) {
    reason = StrCat("it takes ", inferred.arguments.size(), " arguments, the schema ",
                    s.arguments().size());
  } else if (inferred.returns.size() != s.returns().size()) {
    reason =
        StrCat("it returns ", inferred.returns.size(), " values, the schema ", s.returns().size());
  } else {
    for (size_t i = 0; i < s.arguments().size() && reason.empty(); ++i) {
      if (!InferredTypeMatches(*inferred.arguments[i], *s.arguments()[i].type())) {
        reason = StrCat("argument '", s.arguments()[i].name(), "' (#", i, ") is ",
                        inferred.arguments[i]->str(), " in C++ but ",
                        s.arguments()[i].type()->str(), " in the schema");
      }
    }
    for (size_t i = 0; i < s.returns().size() && reason.empty(); ++i) {
      if (!InferredTypeMatches(*inferred.returns[i], *s.returns()[i].type())) {
        reason = StrCat("return #", i, " is ", inferred.returns[i]->str(), " in C++ but ",
                        s.returns()[i].type()->str(), " in the schema");
      }
    }
  }
  OPREG_CHECK_TYPE(reason.empty(), "[", entry_->name().str(), "] typed<", sig.name(),
                   ">() does not fit the schema ", s.str(), ": ", reason);

  std::lock_guard<std::mutex> lock(Dispatcher::Get().mu_);
  const std::optional<CppSignature>& known = entry_->cpp_signature_;
  OPREG_CHECK_TYPE(!known || *known == sig,
                   "Tried to access or call an operator with a wrong signature.\n  operator: ",
                   s.str(), "\n    registered at ", def.where.str(),
                   "\n  correct signature:  ", known ? known->name() : "",
                   "\n    learned from the kernel registered at ",
                   entry_->cpp_signature_where_.str(), "\n  accessed/called as: ", sig.name());
}

}  // namespace opreg
