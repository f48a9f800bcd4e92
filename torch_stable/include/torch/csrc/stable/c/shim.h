// opreg::torch_stable: the C functions torch added to its stable ABI from 2.10 on
// (<torch/csrc/stable/c/shim.h>), with torch's signatures, implemented by libopreg_torch_stable.
// Conventions as in <torch/csrc/inductor/aoti_torch/c/shim.h>.
#ifndef STABLE_TORCH_SHIM
#define STABLE_TORCH_SHIM

#include "../../inductor/aoti_torch/c/shim.h"
#include "../version.h"

#ifdef __cplusplus
extern "C" {
#endif

// Calls an op on a boxed stack (see aoti_torch_call_dispatcher); `extension_build_version` is
// the TORCH_ABI_VERSION the caller was built against.
AOTI_TORCH_EXPORT AOTITorchError torch_call_dispatcher(const char* opName,
                                                       const char* overloadName,
                                                       StableIValue* stack,
                                                       uint64_t extension_build_version);
AOTI_TORCH_EXPORT AOTITorchError torch_library_impl(TorchLibraryHandle self, const char* name,
                                                    void (*fn)(StableIValue*, uint64_t, uint64_t),
                                                    uint64_t extension_build_version);

// Lists (int[], float[], bool[], Tensor[], Tensor?[] on the boxed stack): a vector of
// StableIValues. Deleting a list frees the vector only: whoever reads an element that is a
// handle (a tensor, an optional's box) takes that handle over, as torch's conversions do.
struct StableListOpaque;
using StableListHandle = StableListOpaque*;
AOTI_TORCH_EXPORT AOTITorchError torch_new_list_reserve_size(size_t size, StableListHandle* ret);
AOTI_TORCH_EXPORT AOTITorchError torch_list_size(StableListHandle list_handle, size_t* size);
AOTI_TORCH_EXPORT AOTITorchError torch_list_get_item(StableListHandle list_handle, size_t index,
                                                     StableIValue* element);
AOTI_TORCH_EXPORT AOTITorchError torch_list_set_item(StableListHandle list_handle, size_t index,
                                                     StableIValue element);
AOTI_TORCH_EXPORT AOTITorchError torch_list_push_back(StableListHandle list_handle,
                                                      StableIValue element);
AOTI_TORCH_EXPORT AOTITorchError torch_delete_list(StableListHandle list_handle);

AOTI_TORCH_EXPORT AOTITorchError torch_parse_device_string(const char* device_string,
                                                           uint32_t* out_device_type,
                                                           int32_t* out_device_index);

typedef void (*ParallelFunc)(int64_t begin, int64_t end, void* ctx);
AOTI_TORCH_EXPORT AOTITorchError torch_parallel_for(int64_t begin, int64_t end,
                                                    int64_t grain_size, ParallelFunc func,
                                                    void* ctx);
AOTI_TORCH_EXPORT AOTITorchError torch_get_thread_idx(uint32_t* out_thread_idx);
AOTI_TORCH_EXPORT AOTITorchError torch_get_num_threads(uint32_t* out_num_threads);

AOTI_TORCH_EXPORT AOTITorchError torch_get_mutable_data_ptr(AtenTensorHandle tensor,
                                                            void** ret_data_ptr);
AOTI_TORCH_EXPORT AOTITorchError torch_get_const_data_ptr(AtenTensorHandle tensor,
                                                          const void** ret_data_ptr);

// Strings (`str` on the boxed stack).
struct StringOpaque;
using StringHandle = StringOpaque*;
AOTI_TORCH_EXPORT AOTITorchError torch_new_string_handle(const char* data, size_t length,
                                                         StringHandle* handle);
AOTI_TORCH_EXPORT AOTITorchError torch_delete_string(StringHandle handle);
AOTI_TORCH_EXPORT AOTITorchError torch_string_length(StringHandle handle, size_t* length);
AOTI_TORCH_EXPORT AOTITorchError torch_string_c_str(StringHandle handle, const char** data);

// CUDA (declared always; without a CUDA build they fail with an error saying so).
AOTI_TORCH_EXPORT AOTITorchError torch_get_current_cuda_blas_handle(void** ret_handle);
AOTI_TORCH_EXPORT AOTITorchError torch_set_current_cuda_stream(void* stream, int32_t device_index);
AOTI_TORCH_EXPORT AOTITorchError torch_get_cuda_stream_from_pool(bool isHighPriority,
                                                                 int32_t device_index,
                                                                 void** ret_stream);
AOTI_TORCH_EXPORT AOTITorchError torch_cuda_stream_synchronize(void* stream,
                                                               int32_t device_index);
// Sets *error_msg (free with torch_c10_cuda_free_error_msg) when `err` is not cudaSuccess.
AOTI_TORCH_EXPORT AOTITorchError torch_c10_cuda_check_msg(int32_t err, const char* filename,
                                                          const char* function_name,
                                                          uint32_t line_number,
                                                          bool include_device_assertions,
                                                          char** error_msg);
AOTI_TORCH_EXPORT void torch_c10_cuda_free_error_msg(char* error_msg);

AOTI_TORCH_EXPORT AOTITorchError torch_set_requires_grad(AtenTensorHandle tensor,
                                                         bool requires_grad);

// 2.11: a tensor over memory released by `deleter(data, deleter_ctx)` with the last reference.
AOTI_TORCH_EXPORT int32_t torch_dtype_float8_e8m0fnu();
AOTI_TORCH_EXPORT int32_t torch_dtype_float4_e2m1fn_x2();
AOTI_TORCH_EXPORT AOTITorchError torch_from_blob(void* data, int64_t ndim,
                                                 const int64_t* sizes_ptr,
                                                 const int64_t* strides_ptr,
                                                 int64_t storage_offset, int32_t dtype,
                                                 int32_t device_type, int32_t device_index,
                                                 AtenTensorHandle* ret, int32_t layout,
                                                 const uint8_t* opaque_metadata,
                                                 int64_t opaque_metadata_size,
                                                 void (*deleter)(void* data, void* ctx),
                                                 void* deleter_ctx);

// 2.13: the message of the last failed call on this thread ("" before any), and heap boxes for
// optional values on the stack.
AOTI_TORCH_EXPORT const char* torch_exception_get_what();
AOTI_TORCH_EXPORT const char* torch_exception_get_what_without_backtrace();
AOTI_TORCH_EXPORT AOTITorchError torch_new_stable_ivalue(StableIValue** ret_value);
AOTI_TORCH_EXPORT AOTITorchError torch_delete_stable_ivalue(StableIValue* value);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STABLE_TORCH_SHIM
