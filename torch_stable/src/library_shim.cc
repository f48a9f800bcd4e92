// STABLE_TORCH_LIBRARY blocks over opreg::Library. A block's library is made by
// aoti_torch_library_init_* while the extension loads, so it behaves as an OPREG_LIBRARY block:
// a failed def or impl is logged and kept in opreg::StaticRegistrationErrors() (fatal with
// OPREG_STRICT_REGISTRATION=1) and the block goes on, where torch would abort the process while
// the library loads (its error check throws during static initialization).
//
// A kernel is the extension's boxed function `void(StableIValue*, num_args, num_outputs)`; the
// adapter below moves each call's arguments to StableIValues by the op's schema and its returns
// back, so stable-ABI kernels are ordinary opreg kernels (boxed and typed calls, out resolution,
// capture, Python, torch.ops through opreg.torch).
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "../include/torch/csrc/inductor/aoti_torch/c/shim.h"
#include "../include/torch/csrc/stable/c/shim.h"
#include "boxed_stack.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"
#include "opreg/dispatch/library.h"
#include "shim_guard.h"

using StableBoxedFn = void (*)(StableIValue*, uint64_t, uint64_t);

class TorchLibraryOpaque {
 public:
  // Empty when the block itself was refused (its error is recorded): its calls are skipped.
  std::optional<opreg::Library> library;
  // Set for an IMPL block whose key opreg has no counterpart of: each impl records this.
  std::string bad_key;
};

namespace opreg::torch_stable {
namespace {

constexpr const char* kMacro = "STABLE_TORCH_LIBRARY";

std::optional<DispatchKey> KeyFromTorchName(std::string_view k) {
  if (k == "CPU") return DispatchKey::kCPU;
  if (k == "CUDA") return DispatchKey::kCUDA;
  if (k == "Meta") return DispatchKey::kMeta;
  if (k == "CompositeExplicitAutograd" || k == "CompositeExplicitAutogradNonFunctional") {
    return DispatchKey::kCompositeExplicit;
  }
  if (k == "CompositeImplicitAutograd") return DispatchKey::kCompositeImplicit;
  return std::nullopt;
}

TorchLibraryHandle NewLibrary(Library::Kind kind, const char* ns, const char* k, const char* file,
                              uint32_t line) {
  auto record = std::make_unique<TorchLibraryOpaque>();
  std::optional<DispatchKey> key;
  if (kind == Library::IMPL) {
    key = KeyFromTorchName(k != nullptr ? k : "");
    if (!key) {
      record->bad_key =
          StrCat("STABLE_TORCH_LIBRARY_IMPL(", ns, ", ", k != nullptr ? k : "null", ") block at ",
                 file, ":", line, ": opreg has no dispatch key '", k != nullptr ? k : "null",
                 "' (expected CPU, CUDA, Meta, CompositeExplicitAutograd or "
                 "CompositeImplicitAutograd)");
      detail::RecordStaticError(record->bad_key);
      return record.release();
    }
  }
  try {
    record->library.emplace(kind, ns, key, file, line, kMacro);
    record->library->RecordErrorsAsStaticBlock();
  } catch (const std::exception& e) {
    detail::RecordStaticError(e.what());
    record->library.reset();
  }
  return record.release();
}

KernelFunction StableKernel(StableBoxedFn fn) {
  return KernelFunction::FromBoxedFunctor([fn](const OperatorHandle& op, Stack* stack) {
    const FunctionSchema& schema = op.schema();
    std::vector<StableIValue> slots = TakeArgumentsToStable(schema, stack);
    try {
      fn(slots.data(), schema.arguments().size(), schema.returns().size());
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      // STD_TORCH_CHECK throws std::runtime_error; opreg's callers name the op on opreg::Error.
      OPREG_THROW(kRuntime, e.what());
    }
    PushReturnsFromStable(schema, slots.data(), stack);
  });
}

void Impl(TorchLibraryHandle self, const char* name, StableBoxedFn fn) {
  OPREG_CHECK_VALUE(self != nullptr, "expected a library handle, got nullptr");
  OPREG_CHECK_VALUE(name != nullptr && fn != nullptr, "impl: expected an op name and a kernel");
  if (!self->bad_key.empty()) {
    detail::RecordStaticError(StrCat(self->bad_key, " (impl of '", name, "')"));
    return;
  }
  if (!self->library) return;  // the block was refused; its error is already recorded
  // The block's file:line: the C ABI carries no location per call.
  const SourceLocation& where = self->library->where();
  self->library->impl(name, StableKernel(fn), where.file.c_str(), where.line);
}

}  // namespace
}  // namespace opreg::torch_stable

using opreg::torch_stable::ShimGuard;

extern "C" {

AOTITorchError aoti_torch_library_init_impl(const char* ns, const char* k, const char* file,
                                            uint32_t line, TorchLibraryHandle* ret_new_torch_lib) {
  return ShimGuard(__func__, [&] {
    *ret_new_torch_lib = opreg::torch_stable::NewLibrary(opreg::Library::IMPL, ns, k, file, line);
  });
}

AOTITorchError aoti_torch_library_init_def(const char* ns, const char* file, uint32_t line,
                                           TorchLibraryHandle* ret_new_torch_lib) {
  return ShimGuard(__func__, [&] {
    *ret_new_torch_lib =
        opreg::torch_stable::NewLibrary(opreg::Library::DEF, ns, nullptr, file, line);
  });
}

AOTITorchError aoti_torch_library_init_fragment(const char* ns, const char* file, uint32_t line,
                                                TorchLibraryHandle* ret_new_torch_lib) {
  return ShimGuard(__func__, [&] {
    *ret_new_torch_lib =
        opreg::torch_stable::NewLibrary(opreg::Library::FRAGMENT, ns, nullptr, file, line);
  });
}

AOTITorchError aoti_torch_library_impl(TorchLibraryHandle self, const char* name,
                                       void (*fn)(StableIValue*, uint64_t, uint64_t)) {
  return ShimGuard(__func__, [&] { opreg::torch_stable::Impl(self, name, fn); });
}

// The stack encoding has not changed between the versions opreg implements, so the
// extension's build version is accepted whatever it is.
AOTITorchError torch_library_impl(TorchLibraryHandle self, const char* name,
                                  void (*fn)(StableIValue*, uint64_t, uint64_t),
                                  uint64_t /*extension_build_version*/) {
  return ShimGuard(__func__, [&] { opreg::torch_stable::Impl(self, name, fn); });
}

AOTITorchError aoti_torch_library_def(TorchLibraryHandle self, const char* schema) {
  return ShimGuard(__func__, [&] {
    OPREG_CHECK_VALUE(self != nullptr && schema != nullptr,
                      "def: expected a library handle and a schema");
    if (!self->library) return;  // the block was refused; its error is already recorded
    const opreg::SourceLocation& where = self->library->where();
    self->library->def(schema, {}, where.file.c_str(), where.line);
  });
}

AOTITorchError aoti_torch_delete_library_object(TorchLibraryHandle tlh) {
  return ShimGuard(__func__, [&] { delete tlh; });
}

}  // extern "C"
