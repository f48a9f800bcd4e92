// The functions of torch's stable C ABI (the `aoti_torch_*` / `torch_*` shim) that opreg.torch's
// compiled bridge calls, looked up with dlsym in the libtorch_cpu the running torch has already
// loaded (opreg links no libtorch). Used by torch_bridge.cc only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "opreg/core/dlpack.h"

namespace opreg::python {

using StableIValue = uint64_t;
using AtenTensorHandle = void*;
using TorchLibraryHandle = void*;
using StableListHandle = void*;
using StringHandle = void*;
using TorchError = int32_t;  // AOTITorchError: 0 is success
using BoxedFn = void (*)(StableIValue* stack, uint64_t num_args, uint64_t num_outputs);
using BlobDeleter = void (*)(void* data, void* context);

// The shim functions used here, resolved once from libtorch_cpu.
struct TorchShim {
  TorchError (*library_init_impl)(const char* ns, const char* key, const char* file, uint32_t line,
                                  TorchLibraryHandle* out);
  TorchError (*library_impl)(TorchLibraryHandle lib, const char* name, BoxedFn fn);
  TorchError (*get_data_ptr)(AtenTensorHandle t, void** out);
  TorchError (*get_dim)(AtenTensorHandle t, int64_t* out);
  TorchError (*get_sizes)(AtenTensorHandle t, int64_t** out);
  TorchError (*get_strides)(AtenTensorHandle t, int64_t** out);
  TorchError (*get_dtype)(AtenTensorHandle t, int32_t* out);
  TorchError (*get_device_type)(AtenTensorHandle t, int32_t* out);
  TorchError (*get_device_index)(AtenTensorHandle t, int32_t* out);
  TorchError (*delete_tensor)(AtenTensorHandle t);
  TorchError (*from_blob)(void* data, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                          int64_t storage_offset, int32_t dtype, int32_t device_type,
                          int32_t device_index, AtenTensorHandle* out, int32_t layout,
                          const uint8_t* opaque_metadata, int64_t opaque_metadata_size,
                          BlobDeleter deleter, void* deleter_context);
  // torch 2.13 on allocates the box of an optional through the shim; earlier ones with `new`.
  TorchError (*delete_stable_ivalue)(StableIValue* box);
  // Its counterpart: boxes of optional returns are made with it where torch frees them with
  // delete_stable_ivalue. Optional.
  TorchError (*new_stable_ivalue)(StableIValue** out) = nullptr;
  // Only on the error path: tells an undefined tensor (None for a `Tensor` through torch.ops)
  // from another getter failure. Optional.
  TorchError (*is_defined)(AtenTensorHandle t, bool* out) = nullptr;
  // Deletes a torch::Library, undoing its registrations (an op's kernels, when the opreg op is
  // redefined). Optional: without it, a redefined op's new kernels override the old ones.
  TorchError (*delete_library)(TorchLibraryHandle lib) = nullptr;
  // A second handle to a torch tensor: a kernel that returns an argument's tensor gives torch
  // back that very tensor, as a libtorch kernel would (torch then sees the alias; opcheck
  // flags one the schema does not declare). Optional: without it, a new tensor of its memory.
  TorchError (*new_tensor_handle)(AtenTensorHandle t, AtenTensorHandle* out) = nullptr;
  // torch::autograd::impl::bump_version(const at::Tensor&): a C++ symbol of libtorch_cpu, outside
  // the stable C ABI (which has no version-counter call), looked up by its mangled name. The
  // bridge calls it with an AtenTensorHandle, which the shim itself defines as an at::Tensor*.
  // Throws c10::Error (a std::exception) for an inference tensor outside inference_mode.
  // Optional: without it, opreg.torch bumps versions from a Python ADInplaceOrView kernel.
  void (*bump_version)(AtenTensorHandle t) = nullptr;
  // Lists and strings (torch 2.10 on): without them, ops with `T[]` or `str` arguments or
  // returns keep Python kernels. A list handle is a list of StableIValues, each owned by whoever
  // owns the list; a string handle owns its characters.
  TorchError (*new_list)(size_t reserve, StableListHandle* out) = nullptr;
  TorchError (*list_push_back)(StableListHandle list, StableIValue item) = nullptr;
  TorchError (*list_size)(StableListHandle list, size_t* out) = nullptr;
  TorchError (*list_get_item)(StableListHandle list, size_t index, StableIValue* out) = nullptr;
  TorchError (*delete_list)(StableListHandle list) = nullptr;
  TorchError (*new_string)(const char* data, size_t length, StringHandle* out) = nullptr;
  TorchError (*string_length)(StringHandle s, size_t* out) = nullptr;
  TorchError (*string_c_str)(StringHandle s, const char** out) = nullptr;
  TorchError (*delete_string)(StringHandle s) = nullptr;
  bool has_lists() const {
    return new_list != nullptr && list_push_back != nullptr && list_size != nullptr &&
           list_get_item != nullptr && delete_list != nullptr;
  }
  bool has_strings() const {
    return new_string != nullptr && string_length != nullptr && string_c_str != nullptr &&
           delete_string != nullptr;
  }
  // Whether this torch's Layout and MemoryFormat codes are the ones opreg's IValue holds
  // (core/layout.h): then those arguments travel as their codes, as ScalarType's do.
  bool enum_codes_match = false;
  int32_t layout_strided = 0;
  int32_t device_cpu = 0;
  int32_t device_cuda = 1;
  int32_t device_meta = -1;  // -1 where the shim has no code for it
  const DLPackExchangeAPI* exchange = nullptr;  // torch.Tensor's: the current CUDA stream
};

// Fills a shim from the loaded libtorch_cpu at `path`; nullptr (with `why`) when torch lacks a
// function the bridge needs, or publishes dtype codes other than c10's. Call with the GIL held
// (once, at opreg.torch's import).
std::unique_ptr<TorchShim> LoadShim(const std::string& path, std::string* why);

}  // namespace opreg::python
