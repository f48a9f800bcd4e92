// opreg::torch_stable: the aoti_torch_aten_* functions of torch's generated
// <torch/csrc/inductor/aoti_torch/generated/c_shim_aten.h> that torch's stable headers call
// directly, with torch's signatures (optional arguments as nullable pointers; results are new
// references). Implemented by libopreg_torch_stable over opreg::torch_compat.
#pragma once

#include "../c/shim.h"

#ifdef __cplusplus
extern "C" {
#endif

AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_narrow(AtenTensorHandle self, int64_t dim,
                                                        int64_t start, int64_t length,
                                                        AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_fill__Scalar(AtenTensorHandle self,
                                                              double value);
// Constant mode only; another mode fails naming it.
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_pad(AtenTensorHandle self, const int64_t* pad,
                                                     int64_t pad_len_, const char* mode,
                                                     double* value, AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_full(const int64_t* size, int64_t size_len_,
                                                      double fill_value, int32_t* dtype,
                                                      int32_t* layout, int32_t* device,
                                                      int32_t device_index_, int32_t* pin_memory,
                                                      AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_new_empty(AtenTensorHandle self,
                                                           const int64_t* size, int64_t size_len_,
                                                           int32_t* dtype, int32_t* layout,
                                                           int32_t* device, int32_t device_index_,
                                                           int32_t* pin_memory,
                                                           AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_new_zeros(AtenTensorHandle self,
                                                           const int64_t* size, int64_t size_len_,
                                                           int32_t* dtype, int32_t* layout,
                                                           int32_t* device, int32_t device_index_,
                                                           int32_t* pin_memory,
                                                           AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_amax(AtenTensorHandle self, const int64_t* dim,
                                                      int64_t dim_len_, int32_t keepdim,
                                                      AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_subtract_Tensor(AtenTensorHandle self,
                                                                 AtenTensorHandle other,
                                                                 double alpha,
                                                                 AtenTensorHandle* ret0);

#ifdef __cplusplus
}  // extern "C"
#endif
