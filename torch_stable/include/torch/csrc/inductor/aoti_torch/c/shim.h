// opreg::torch_stable: the C functions of torch's stable ABI that kernel libraries call
// (<torch/csrc/inductor/aoti_torch/c/shim.h>), with torch's exact signatures, implemented by
// libopreg_torch_stable over opreg's registry, dispatcher and tensors (docs/torch_stable.md).
//
// Conventions (torch's): a function returning AOTITorchError reports failure with
// AOTI_TORCH_FAILURE and never throws; the message is kept per thread and read with
// torch_exception_get_what() (torch/csrc/stable/c/shim.h). "New reference" results are owned by
// the caller and released with the matching delete function; "borrowed" ones live as long as the
// object they came from. Handles may be used from any thread; a handle itself is not
// synchronized (as a std::shared_ptr object).
//
// This is the subset opreg implements: a function of torch's shim that is missing here is not
// declared, so code using it fails to compile (and a binary built against torch's headers that
// calls it fails to load with an undefined symbol, naming it).
#ifndef AOTI_TORCH_SHIM
#define AOTI_TORCH_SHIM

#include "macros.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- Codes: device types, dtypes, layouts and memory formats are torch's integer codes ----
AOTI_TORCH_EXPORT int32_t aoti_torch_device_type_cpu();
AOTI_TORCH_EXPORT int32_t aoti_torch_device_type_cuda();
AOTI_TORCH_EXPORT int32_t aoti_torch_device_type_meta();
AOTI_TORCH_EXPORT int32_t aoti_torch_device_type_xpu();
AOTI_TORCH_EXPORT int32_t aoti_torch_device_type_mps();
AOTI_TORCH_EXPORT int32_t aoti_torch_device_type_privateuse1();

AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_float8_e5m2();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_float8_e4m3fn();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_float8_e5m2fnuz();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_float8_e4m3fnuz();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_bfloat16();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_float16();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_float32();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_float64();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_uint8();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_uint16();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_uint32();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_uint64();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_int8();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_int16();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_int32();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_int64();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_bool();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_complex32();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_complex64();
AOTI_TORCH_EXPORT int32_t aoti_torch_dtype_complex128();
// Bytes per element of a dtype code (0 for a code torch does not have).
AOTI_TORCH_EXPORT size_t aoti_torch_dtype_element_size(int32_t dtype);

AOTI_TORCH_EXPORT int32_t aoti_torch_layout_strided();
AOTI_TORCH_EXPORT int32_t aoti_torch_layout_sparse_coo();
AOTI_TORCH_EXPORT int32_t aoti_torch_layout_sparse_csr();
AOTI_TORCH_EXPORT int32_t aoti_torch_layout_sparse_csc();
AOTI_TORCH_EXPORT int32_t aoti_torch_layout_sparse_bsr();
AOTI_TORCH_EXPORT int32_t aoti_torch_layout_sparse_bsc();
AOTI_TORCH_EXPORT int32_t aoti_torch_layout__mkldnn();
AOTI_TORCH_EXPORT int32_t aoti_torch_layout_jagged();

AOTI_TORCH_EXPORT int32_t aoti_torch_memory_format_contiguous_format();
AOTI_TORCH_EXPORT int32_t aoti_torch_memory_format_channels_last();
AOTI_TORCH_EXPORT int32_t aoti_torch_memory_format_channels_last_3d();
AOTI_TORCH_EXPORT int32_t aoti_torch_memory_format_preserve_format();

// The TORCH_ABI_VERSION of the headers this runtime implements.
AOTI_TORCH_EXPORT uint64_t aoti_torch_abi_version();

AOTI_TORCH_EXPORT bool aoti_torch_grad_mode_is_enabled();
AOTI_TORCH_EXPORT void aoti_torch_grad_mode_set_enabled(bool enabled);

// ---- Tensors ----
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor);
// A second owning handle to the same tensor (new reference).
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle,
                                                              AtenTensorHandle* new_handle);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret);

AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor,
                                                         void** ret_data_ptr);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor,
                                                             int64_t* ret_size);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret_dim);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret_numel);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor,
                                                              int64_t* ret_numel);
// Borrowed: valid while the tensor lives.
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor,
                                                      int64_t** ret_sizes);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d,
                                                     int64_t* ret_size);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor,
                                                        int64_t** ret_strides);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d,
                                                       int64_t* ret_stride);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor,
                                                            int32_t* ret_device_type);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor,
                                                             int32_t* ret_device_index);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor,
                                                       int32_t* ret_layout);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor,
                                                               int64_t* ret_storage_offset);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor,
                                                          bool* ret_is_contiguous);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor,
                                                       bool* ret_is_defined);

AOTI_TORCH_EXPORT AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr,
                                                          const int64_t* strides_ptr,
                                                          int32_t dtype, int32_t device_type,
                                                          int32_t device_index,
                                                          AtenTensorHandle* ret_new_tensor);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_as_strided(AtenTensorHandle self,
                                                       const int64_t* sizes_ptr,
                                                       const int64_t* strides_ptr,
                                                       AtenTensorHandle* ret);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch__reinterpret_tensor(
    AtenTensorHandle self, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
    int64_t storage_offset, AtenTensorHandle* ret_new_tensor);
// A tensor over memory the caller keeps alive (no deleter).
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_create_tensor_from_blob(
    void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
    int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
    AtenTensorHandle* ret);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_create_tensor_from_blob_v2(
    void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
    int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
    AtenTensorHandle* ret, int32_t layout, const uint8_t* opaque_metadata,
    int64_t opaque_metadata_size);

AOTI_TORCH_EXPORT AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src,
                                                  int32_t non_blocking);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_zero_(AtenTensorHandle self);

AOTI_TORCH_EXPORT AOTITorchError aoti_torch_item_float32(AtenTensorHandle tensor,
                                                         float* ret_value);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_item_float64(AtenTensorHandle tensor,
                                                         double* ret_value);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_item_int32(AtenTensorHandle tensor,
                                                       int32_t* ret_value);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_item_int64(AtenTensorHandle tensor,
                                                       int64_t* ret_value);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_item_bool(AtenTensorHandle tensor, bool* ret_value);

// ---- Libraries and the dispatcher ----
using StableIValue = uint64_t;
class TorchLibraryOpaque;
using TorchLibraryHandle = TorchLibraryOpaque*;

AOTI_TORCH_EXPORT AOTITorchError aoti_torch_library_init_impl(
    const char* ns, const char* k, const char* file, uint32_t line,
    TorchLibraryHandle* ret_new_torch_lib);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_library_init_def(const char* ns, const char* file,
                                                             uint32_t line,
                                                             TorchLibraryHandle* ret_new_torch_lib);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_library_init_fragment(
    const char* ns, const char* file, uint32_t line, TorchLibraryHandle* ret_new_torch_lib);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_library_impl(TorchLibraryHandle self,
                                                         const char* name,
                                                         void (*fn)(StableIValue*, uint64_t,
                                                                    uint64_t));
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_library_def(TorchLibraryHandle self,
                                                        const char* schema);
// Undoes what the library registered.
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_delete_library_object(TorchLibraryHandle tlh);
// Calls op `opName`.`overloadName` on a boxed stack: takes ownership of the arguments, writes
// the returns (new references) from stack[0].
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_call_dispatcher(const char* opName,
                                                            const char* overloadName,
                                                            StableIValue* stack);

// ---- Devices and streams ----
struct DeviceGuardOpaque;
using DeviceGuardHandle = DeviceGuardOpaque*;
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_create_device_guard(int32_t device_index,
                                                                DeviceGuardHandle* ret_guard);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle guard);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle guard,
                                                                   int32_t device_index);
struct StreamOpaque;
using StreamHandle = StreamOpaque*;
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_delete_stream(StreamHandle stream);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_stream_id(StreamHandle stream,
                                                      int64_t* ret_stream_id);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_current_stream(int32_t device_index,
                                                               StreamHandle* ret_stream);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_current_device_index(int32_t* ret_device_index);
// The current CUDA stream of a device (cudaStream_t; nullptr is the legacy default stream). In a
// build without CUDA it fails with an error saying so.
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index,
                                                                    void** ret_stream);

// ---- Errors and warnings ----
AOTI_TORCH_EXPORT void aoti_torch_check(bool cond, const char* func, const char* file,
                                        uint32_t line, const char* msg);
AOTI_TORCH_EXPORT void aoti_torch_warn(const char* func, const char* file, uint32_t line,
                                       const char* msg);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // AOTI_TORCH_SHIM
