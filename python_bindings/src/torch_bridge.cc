// The compiled half of opreg.torch: an opreg op's CPU and CUDA kernels registered with torch's
// dispatcher as boxed C functions through torch's stable C ABI (the `aoti_torch_*` / `torch_*`
// shim that STABLE_TORCH_LIBRARY is built on), so `torch.ops.<ns>.<op>` reaches opreg with no
// Python frame in between.
//
// Nothing here links libtorch: the shim's functions are looked up with dlsym in the libtorch_cpu
// that the running torch has already loaded, and the ABI is used only where torch promises it
// stays put (the shim's signatures, the StableIValue encodings of torch_bridge_values.h). One
// build of opreg therefore serves every torch that has the functions it needs (torch_from_blob
// with a deleter arrived in 2.11); opreg.torch falls back to Python kernels on older torch, and
// for ops with a type the stable ABI cannot carry (a Scalar).
//
// torch's boxed C kernel is a bare function pointer (no user data), so each bridged op gets one
// of kMaxBridgedOps trampolines, each a template instance that knows its slot.
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "module_internal.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/core/dlpack.h"
#include "opreg/core/error.h"
#include "opreg/core/recycled_tensors.h"
#include "opreg/core/scalar_type.h"
#include "opreg/core/tensor_factories.h"
#include "torch_bridge_values.h"
#include "torch_errors.h"
#include "torch_shim.h"

namespace opreg::python {
namespace {

TorchShim* g_shim = nullptr;

[[noreturn]] __attribute__((noinline, cold)) void ThrowShimFailure(const char* what) {
  throw Error(ErrorKind::kRuntime, StrCat("torch's stable ABI: ", what, " failed"));
}

// Inline: every tensor argument makes six shim calls, and each is checked.
inline void Check(TorchError err, const char* what) {
  if (OPREG_UNLIKELY(err != 0)) ThrowShimFailure(what);
}

struct BridgedOp {
  OperatorHandle op;
  // The definition `args` and `returns` were read from. The op may since have been redefined
  // with another schema (torch keeps this kernel): the call then takes the checked path.
  const OpDefinition* def;
  std::vector<ValueSlot> args;
  std::vector<ValueSlot> returns;
};

constexpr size_t kMaxBridgedOps = 2048;
std::array<std::atomic<const BridgedOp*>, kMaxBridgedOps> g_ops{};
size_t g_num_ops = 0;  // slots handed out (under the GIL)

void ReleaseHandle(void* handle) { g_shim->delete_tensor(handle); }

// The name of argument `index`, for messages.
std::string ArgName(const BridgedOp& b, size_t index) {
  const auto& args = b.op.schema().arguments();
  return index < args.size() ? args[index].name() : "?";
}

// An owned AtenTensorHandle as an opreg tensor that owns the handle, made and kept by `scope`.
// `*device` is set to its device.
Tensor FromHandleOrThrow(AtenTensorHandle h, const BridgedOp& b, size_t index, RecycleScope& scope,
                         Device* device) {
  const TorchShim& s = *g_shim;
  // Written by the getters (each checked before its value is used).
  void* data;
  int64_t ndim;
  int64_t* sizes;
  int64_t* strides;
  int32_t dtype, device_type, device_index;
  if (OPREG_UNLIKELY(s.get_data_ptr(h, &data) != 0)) {
    bool defined = true;
    if (s.is_defined != nullptr && s.is_defined(h, &defined) == 0 && !defined) {
      throw Error(ErrorKind::kType,
                  ArgErrorMessage(b.op.operator_name().str(), ArgName(b, index),
                                  static_cast<int>(index), "Tensor", "None (an undefined tensor)"));
    }
    ThrowShimFailure("aoti_torch_get_data_ptr");
  }
  Check(s.get_dim(h, &ndim), "aoti_torch_get_dim");
  Check(s.get_sizes(h, &sizes), "aoti_torch_get_sizes");
  Check(s.get_strides(h, &strides), "aoti_torch_get_strides");
  Check(s.get_dtype(h, &dtype), "aoti_torch_get_dtype");
  Check(s.get_device_type(h, &device_type), "aoti_torch_get_device_type");
  const std::optional<DType> opreg_dtype = DTypeFromTorchScalarTypeCode(dtype);
  if (!opreg_dtype) {
    const TorchScalarTypeEntry* torch_dtype = TorchScalarTypeFromCode(dtype);
    throw Error(ErrorKind::kType,
                ArgErrorMessage(b.op.operator_name().str(), ArgName(b, index),
                                static_cast<int>(index), "a tensor of a dtype opreg has",
                                torch_dtype != nullptr ? StrCat("torch.", torch_dtype->name)
                                                       : StrCat("torch ScalarType code ", dtype)));
  }
  if (device_type == s.device_cpu) {
    *device = Device::cpu();
  } else if (device_type == s.device_cuda) {
    Check(s.get_device_index(h, &device_index), "aoti_torch_get_device_index");
    *device = Device::cuda(device_index);
  } else {
    throw Error(ErrorKind::kValue, ArgErrorMessage(b.op.operator_name().str(), ArgName(b, index),
                                                   static_cast<int>(index), "a CPU or CUDA tensor",
                                                   StrCat("torch device type ", device_type)));
  }
  return scope.FromBlob(data, IntArrayRef(sizes, static_cast<size_t>(ndim)),
                        IntArrayRef(strides, static_cast<size_t>(ndim)), *opreg_dtype, *device, h,
                        &ReleaseHandle);
}

Tensor FromHandle(AtenTensorHandle h, const BridgedOp& b, size_t index, RecycleScope& scope,
                  Device* device) {
  try {
    return FromHandleOrThrow(h, b, index, scope, device);
  } catch (...) {
    g_shim->delete_tensor(h);  // not taken by a tensor: still ours
    throw;
  }
}

// `e` again, prefixed with the op and `what` ("argument 'x' (#1)", "return #0") unless it
// names an op already.
[[noreturn]] __attribute__((noinline, cold)) void RethrowNamed(const Error& e, const BridgedOp& b,
                                                               const std::string& what) {
  if (e.message().rfind('[', 0) == 0) throw e;
  throw Error(e.kind(), StrCat("[", b.op.operator_name().str(), "] ", what, ": ", e.message()));
}

[[noreturn]] __attribute__((noinline, cold)) void ThrowNoTensor(const BridgedOp& b, size_t index) {
  throw Error(ErrorKind::kRuntime, StrCat("[", b.op.operator_name().str(), "] argument '",
                                          ArgName(b, index), "': torch passed no tensor"));
}

// Bumps the version counter of a tensor the call writes (argument `index`), as torch's
// ADInplaceOrView kernels do for its in-place ops, so autograd refuses a backward that would read
// data overwritten since it was saved. Done as the argument is converted, before the call, unlike
// torch: a tensor torch refuses to have written (an inference tensor outside inference_mode) is
// then left unwritten.
void BumpVersion(const BridgedOp& b, AtenTensorHandle h, size_t index) {
  try {
    g_shim->bump_version(h);
  } catch (const std::exception& ex) {  // c10::Error: an inference tensor outside the mode
    std::string what = ex.what();
    what = what.substr(0, what.find("\nException raised from"));  // no C++ backtrace
    throw Error(ErrorKind::kRuntime,
                StrCat("[", b.op.operator_name().str(), "] argument '", ArgName(b, index), "' (#",
                       index, ") was written: ", what));
  }
}

// Torch tensors made from opreg results and not yet freed by torch (for leak tests).
std::atomic<int64_t> g_live_results{0};

// Torch frees a result: the opreg tensor's memory goes back to its allocator, and its objects,
// when nothing else holds them, to this thread's cache for the next result made here.
void ReleaseResult(void* /*data*/, void* context) {
  g_live_results.fetch_sub(1, std::memory_order_relaxed);
  Tensor t(intrusive_ptr<TensorImpl>::reclaim(static_cast<TensorImpl*>(context)));
  RecycledTensors::Give(&t, RecyclePool::kOwned);
}

// The torch handles of a call's tensor arguments, by the opreg tensor made of each (every one:
// an out argument after many inputs still goes back as the caller's tensor), then of its
// results.
struct ArgumentHandles {
  absl::InlinedVector<std::pair<const TensorImpl*, AtenTensorHandle>, 8> entries;

  void Add(const TensorImpl* impl, AtenTensorHandle h) { entries.emplace_back(impl, h); }
  AtenTensorHandle Find(const TensorImpl* impl) const {
    for (const auto& [ours, handle] : entries) {
      if (ours == impl) return handle;
    }
    return nullptr;
  }
};

// An opreg result tensor (return `index`) as an owned torch handle. `arguments` also records
// the results made, so that a result returned twice is one torch tensor.
StableIValue TensorToStable(const Tensor& t, const BridgedOp& b, size_t index,
                            ArgumentHandles& arguments) {
  if (!t.defined()) {
    throw Error(ErrorKind::kRuntime, StrCat("[", b.op.operator_name().str(), "] return #", index,
                                            " is not a defined tensor"));
  }
  const TorchShim& s = *g_shim;
  // An argument's own tensor (the opreg tensor made of it keeps its handle alive).
  if (AtenTensorHandle h = arguments.Find(t.unsafe_get_impl());
      h != nullptr && s.new_tensor_handle != nullptr) {
    AtenTensorHandle same = nullptr;
    Check(s.new_tensor_handle(h, &same), "aoti_torch_new_tensor_handle");
    return reinterpret_cast<StableIValue>(same);
  }
  const Device d = t.device();
  if (!d.is_cpu() && !d.is_cuda()) {
    throw Error(ErrorKind::kRuntime,
                StrCat("[", b.op.operator_name().str(), "] return #", index, " is a tensor on ",
                       DeviceTypeName(d.type), ", which torch gets no view of"));
  }
  AtenTensorHandle out = nullptr;
  TensorImpl* impl = t.unsafe_get_impl();
  Check(s.from_blob(t.data_ptr(), t.dim(), t.sizes().data(), t.strides().data(), 0,
                    TorchScalarTypeCode(t.dtype()), d.is_cuda() ? s.device_cuda : s.device_cpu,
                    d.is_cuda() ? d.index : -1, &out, s.layout_strided, nullptr, 0, &ReleaseResult,
                    impl),
        "torch_from_blob");
  IntrusiveIncRef(impl);  // the torch tensor's reference, dropped by ReleaseResult
  g_live_results.fetch_add(1, std::memory_order_relaxed);
  arguments.Add(impl, out);  // owned by the stack torch gets back, alive until then
  return reinterpret_cast<StableIValue>(out);
}

bool IsWord(const ValueSlot& slot) {
  return !slot.list && slot.kind != Kind::kTensor && slot.kind != Kind::kString &&
         slot.kind != Kind::kDevice;
}

StableIValue ToStable(IValue v, const ValueSlot& slot, const BridgedOp& b, size_t index,
                      ArgumentHandles& arguments) {
  if (OPREG_UNLIKELY(slot.optional)) {  // `T?`: null for None, else the value in a box
    if (v.isNone() || (v.isTensor() && !v.toTensor().defined())) return 0;
    ValueSlot inner = slot;
    inner.optional = false;
    const StableIValue value = ToStable(std::move(v), inner, b, index, arguments);
    try {
      return reinterpret_cast<StableIValue>(NewBox(*g_shim, value));
    } catch (...) {
      Discard(*g_shim, value, inner);
      throw;
    }
  }
  if (slot.kind == Kind::kTensor && !slot.list) {
    if (!v.isTensor()) return TensorToStable(Tensor(), b, index, arguments);  // throws
    return TensorToStable(v.toTensor(), b, index, arguments);
  }
  try {
    if (IsWord(slot)) return WordToStable(v, slot.kind);
    return CompoundToStable(
        *g_shim, v, slot, [&](const Tensor& t) { return TensorToStable(t, b, index, arguments); });
  } catch (const Error& e) {
    RethrowNamed(e, b, StrCat("return #", index));
  }
}

// Deleting an argument's handle drops the last C++ reference to a tensor that also has a
// Python object, and torch then takes the GIL (to drop the reference it kept to that object):
// torch.ops released the GIL around the op, so that is a GIL hand-off per tensor argument. With
// two or more arguments, the call takes the GIL once for all of them instead. Only a Python
// thread that released the GIL (torch.ops called from Python) takes it: torch would take it there
// for each of those tensors anyway, so holding it across their releases adds no lock that thread
// would not otherwise wait for. A thread that holds the GIL, a thread with no Python state (C++
// callers, whose tensors have no Python objects), an interpreter that is not running or a call
// with fewer tensors takes nothing.
class GilForReleases {
 public:
  GilForReleases() = default;
  GilForReleases(const GilForReleases&) = delete;
  GilForReleases& operator=(const GilForReleases&) = delete;
  ~GilForReleases() {
    if (taken_ != nullptr) PyEval_SaveThread();
  }

  // Called when the scope's tensors are about to be given back.
  void TakeFor(const RecycleScope& scope) {
    if (taken_ != nullptr || scope.size() < 2 || InterpreterGone()) return;
    // The thread's own state, restored and saved directly: what PyGILState_Ensure/Release do
    // for a thread that has a state and released the GIL, without their bookkeeping.
    PyThreadState* own = PyGILState_GetThisThreadState();
    if (own == nullptr || CurrentThreadState() == own) return;  // no Python state, or GIL held
    PyEval_RestoreThread(own);
    taken_ = own;
  }

 private:
  // The state of the thread holding the GIL (3.11: of any thread; 3.12 on: of this one), null
  // when none; never fails.
  static PyThreadState* CurrentThreadState() {
#if PY_VERSION_HEX >= 0x030D0000
    return PyThreadState_GetUnchecked();
#else
    return _PyThreadState_UncheckedGet();
#endif
  }

  PyThreadState* taken_ = nullptr;
};

// Ends after the call's stack is cleared and before its RecycleScope gives the tensors back.
struct TakeGilBeforeReleases {
  GilForReleases* gil;
  const RecycleScope* scope;
  ~TakeGilBeforeReleases() { gil->TakeFor(*scope); }
};

void RunBridged(const BridgedOp& b, StableIValue* stack, uint64_t num_args, uint64_t num_outputs) {
  GilForReleases gil;     // released after `borrowed` has given the tensors back
  RecycleScope borrowed;  // the tensor arguments' objects, reused by the next call
  TakeGilBeforeReleases take_gil{&gil, &borrowed};
  StackLease lease;
  Stack& s = lease.get();
  if (s.capacity() < num_args) s.reserve(num_args);  // the leased stack usually has room
  uint32_t device_types = 0;  // a bit per device type of the tensor arguments
  ArgumentHandles handles;
  const bool bump_versions = g_shim->bump_version != nullptr;
  int cuda_device = -1;
  const size_t num_slots = b.args.size();
  for (size_t i = 0; i < num_args; ++i) {
    const ValueSlot slot = i < num_slots ? b.args[i] : ValueSlot{};
    try {
      StableIValue v = stack[i];
      if (slot.optional) {
        auto* box = reinterpret_cast<StableIValue*>(v);
        if (box == nullptr) {
          s.emplace_back();
          continue;
        }
        v = *box;
        FreeBox(*g_shim, box);
      }
      // A tensor argument (or an item of a tensor list) as an opreg tensor kept by `borrowed`.
      auto import_tensor = [&](AtenTensorHandle h) {
        if (OPREG_UNLIKELY(h == nullptr)) ThrowNoTensor(b, i);
        Device device;
        Tensor t = FromHandle(h, b, i, borrowed, &device);
        handles.Add(t.unsafe_get_impl(), h);
        if (slot.written && bump_versions) BumpVersion(b, h, i);
        device_types |= 1u << static_cast<int>(device.type);
        if (OPREG_UNLIKELY(device.is_cuda()) && cuda_device < 0) cuda_device = device.index;
        return t;
      };
      if (slot.kind == Kind::kTensor && !slot.list) {
        s.emplace_back(import_tensor(reinterpret_cast<AtenTensorHandle>(v)));
      } else if (IsWord(slot)) {
        s.push_back(WordFromStable(v, slot.kind));
      } else {
        try {
          s.push_back(CompoundFromStable(*g_shim, v, slot, import_tensor));
        } catch (const Error& e) {
          RethrowNamed(e, b, StrCat("argument '", ArgName(b, i), "' (#", i, ")"));
        }
      }
    } catch (...) {
      for (size_t j = i + 1; j < num_args && j < num_slots; ++j) {
        Discard(*g_shim, stack[j], b.args[j]);
      }
      throw;
    }
  }
  {
    // CUDA tensors: the call runs on torch's current stream of their device.
    std::optional<CudaStreamGuard> stream;
    if (cuda_device >= 0 && g_shim->exchange != nullptr) {
      void* current = nullptr;
      if (g_shim->exchange->current_work_stream(kDLCUDA, cuda_device, &current) == 0) {
        stream.emplace(cuda_device, static_cast<CudaStreamHandle>(current));
      }
    }
    // The stack was built from the schema's own slots, every argument of its exact type, so
    // with all tensors on one device type the dispatcher's argument checks have nothing to find.
    // Anything else (no tensor, mixed devices, a count torch got wrong, an op redefined since it
    // was bridged) takes the checked call, which names the problem. Retired definitions are
    // never freed, so an old address is never reused by a new one.
    if (num_args == num_slots && device_types != 0 && (device_types & (device_types - 1)) == 0 &&
        b.op.entry().definition() == b.def) {
      b.op.CallBoxedPrepared(&s, static_cast<DeviceType>(__builtin_ctz(device_types)));
    } else {
      b.op.CallBoxedInPlace(&s);
    }
  }
  if (num_outputs > s.size() || num_outputs > b.returns.size()) {
    throw Error(ErrorKind::kRuntime, StrCat("[", b.op.operator_name().str(), "] torch expects ",
                                            num_outputs, " returns; the opreg op gave ", s.size()));
  }
  size_t done = 0;
  try {
    for (; done < num_outputs; ++done) {
      stack[done] = ToStable(std::move(s[done]), b.returns[done], b, done, handles);
    }
  } catch (...) {
    for (size_t j = 0; j < done; ++j) Discard(*g_shim, stack[j], b.returns[j]);
    throw;
  }
}

template <size_t I>
void Trampoline(StableIValue* stack, uint64_t num_args, uint64_t num_outputs) {
  try {
    RunBridged(*g_ops[I].load(std::memory_order_acquire), stack, num_args, num_outputs);
  } catch (const Error& e) {
    ThrowForTorch(e);  // keeps the error's kind: NotImplementedError stays one in torch.ops
  }
}

template <size_t... I>
constexpr std::array<BoxedFn, sizeof...(I)> MakeTrampolines(std::index_sequence<I...>) {
  return {&Trampoline<I>...};
}

constexpr std::array<BoxedFn, kMaxBridgedOps> kTrampolines =
    MakeTrampolines(std::make_index_sequence<kMaxBridgedOps>());

// What the bridge keeps per owner (the torch op whose kernels it registered,
// "ns::name[.overload]"): the trampoline slot, taken back when the owner registers again (its op
// redefined, or kernels for more keys), and the torch IMPL library holding each kernel (one per
// torch op and key: an op and its companion share an owner), kept until ReleaseImplLibraries
// undoes it.
struct ImplLibrary {
  std::string torch_name;
  std::string key;
  TorchLibraryHandle lib;
};
struct Owner {
  size_t slot;
  std::vector<ImplLibrary> libs;
};

absl::flat_hash_map<std::string, Owner>& Owners() {
  static auto* owners = new absl::flat_hash_map<std::string, Owner>();
  return *owners;
}

TorchLibraryHandle NewImplLibrary(Owner& owner, const std::string& ns,
                                  const std::string& torch_name, const std::string& key) {
  TorchLibraryHandle lib = nullptr;
  Check(g_shim->library_init_impl(ns.c_str(), key.c_str(), __FILE__, __LINE__, &lib),
        "aoti_torch_library_init_impl");
  owner.libs.push_back(ImplLibrary{torch_name, key, lib});
  return lib;
}

// Deletes the owner's kernels for torch op `torch_name` and dispatch key `key` (each empty: any).
// True when they are gone (or there were none); false when this torch cannot delete a library,
// and they stay registered.
bool ReleaseImplLibraries(const std::string& owner, const std::string& torch_name,
                          const std::string& key) {
  auto it = Owners().find(owner);
  if (it == Owners().end() || it->second.libs.empty()) return true;
  if (g_shim->delete_library == nullptr) return false;
  std::vector<ImplLibrary>& libs = it->second.libs;
  for (size_t i = libs.size(); i-- > 0;) {
    if ((!torch_name.empty() && libs[i].torch_name != torch_name) ||
        (!key.empty() && libs[i].key != key)) {
      continue;
    }
    TorchLibraryHandle lib = libs[i].lib;
    libs.erase(libs.begin() + static_cast<std::ptrdiff_t>(i));  // forgotten even if it fails
    Check(g_shim->delete_library(lib), "aoti_torch_delete_library_object");
  }
  return true;
}

}  // namespace

void InitTorchBridge(py::module_& m) {
  m.def(
      "_torch_bridge_live_results", [] { return g_live_results.load(std::memory_order_relaxed); },
      "How many torch tensors made from opreg results torch has not freed yet.");
  m.def(
      "_torch_bridge_init",
      [](const std::string& libtorch_cpu, py::handle tensor_type) -> std::string {
        if (g_shim != nullptr) return "";
        std::string why;
        std::unique_ptr<TorchShim> shim = LoadShim(libtorch_cpu, &why);
        if (!shim) return why;
        shim->exchange = ExchangeApiOfType(reinterpret_cast<PyTypeObject*>(tensor_type.ptr()));
        g_shim = shim.release();  // process lifetime: torch keeps the kernels registered
        return "";
      },
      py::arg("libtorch_cpu"), py::arg("tensor_type"),
      "Loads torch's stable C ABI from its already-loaded libtorch_cpu; returns '' on success, "
      "else why the C++ bridge cannot be used with this torch.");
  m.def(
      "_torch_bridge_bumps_versions",
      [] { return g_shim != nullptr && g_shim->bump_version != nullptr; },
      "Whether the C++ kernels bump the version counters of the tensors an op writes (torch's "
      "bump_version was found); when not, opreg.torch registers a Python kernel that does.");
  m.def(
      "_torch_bridge_release",
      [](const std::string& owner, const std::string& torch_name, const std::string& key) {
        return g_shim == nullptr || ReleaseImplLibraries(owner, torch_name, key);
      },
      py::arg("owner"), py::arg("torch_name") = "", py::arg("key") = "",
      "Undoes the kernels registered for `owner` (deletes their torch IMPL libraries), only "
      "those of torch op `torch_name` and dispatch key `key` where given; False when this torch "
      "cannot, and they stay.");
  m.def(
      "_torch_bridge_impl",
      [](const std::string& opreg_name, const std::string& torch_ns, const std::string& torch_name,
         const std::vector<std::string>& keys, const std::string& owner) -> std::string {
        if (g_shim == nullptr) return "the bridge is not initialised";
        std::optional<OperatorHandle> op = Dispatcher::Get().FindOp(opreg_name);
        if (!op) return StrCat("no opreg op ", opreg_name);
        auto b = std::make_unique<BridgedOp>(BridgedOp{*op, &op->definition(), {}, {}});
        const FunctionSchema& schema = b->def->schema;
        if (schema.is_vararg() || schema.is_varret()) return "varargs";
        for (const Argument& a : schema.arguments()) {
          ValueSlot slot;
          if (!SlotOf(*g_shim, *a.type(), &slot))
            return StrCat("argument '", a.name(), "' is a ", a.type()->str());
          slot.written = a.is_write();
          b->args.push_back(slot);
        }
        for (const Argument& r : schema.returns()) {
          ValueSlot slot;
          if (!SlotOf(*g_shim, *r.type(), &slot) || (slot.optional && !CanBox(*g_shim)))
            return StrCat("a return is a ", r.type()->str());
          b->returns.push_back(slot);
        }
        // An owner registered again takes its slot back: its op was redefined (its old kernels
        // were deleted with their libraries, so nothing calls that trampoline for them now), or
        // it adds kernels for more keys. A replaced BridgedOp is not freed: a call already
        // running may still read it.
        auto known = Owners().find(owner);
        if (known == Owners().end() && g_num_ops >= kMaxBridgedOps)
          return StrCat("more than ", kMaxBridgedOps, " bridged ops");
        Owner& o = known != Owners().end()
                       ? known->second
                       : Owners().emplace(owner, Owner{g_num_ops++, {}}).first->second;
        const size_t index = o.slot;
        // Kernels for more keys of the same definition keep the slot's BridgedOp (nothing is
        // leaked per change of a torch op's kernels); a new definition gets a new one.
        const BridgedOp* current = g_ops[index].load(std::memory_order_acquire);
        if (current == nullptr || current->def != b->def) {
          g_ops[index].store(b.release(),
                             std::memory_order_release);  // lives as long as torch's kernel
        }
        for (const std::string& key : keys) {
          Check(g_shim->library_impl(NewImplLibrary(o, torch_ns, torch_name, key),
                                     torch_name.c_str(),
                                     kTrampolines[index]),
                "aoti_torch_library_impl");
        }
        return "";
      },
      py::arg("opreg_name"), py::arg("torch_ns"), py::arg("torch_name"), py::arg("keys"),
      py::arg("owner"),
      "Registers the opreg op `opreg_name` as the kernel of torch op `torch_ns::torch_name` for "
      "each dispatch key in `keys` (\"CPU\", \"CUDA\"), in torch libraries kept for `owner` "
      "(see _torch_bridge_release); returns '' on success, else why the op needs a Python "
      "kernel instead (an argument type the C bridge does not carry).");
}

}  // namespace opreg::python
