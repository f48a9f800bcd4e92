// The code functions of the shim and the code <-> opreg conversions. Codes are torch's, so a
// binary built against torch's headers and one built against opreg's agree on every value.
#include "codes.h"

#include <string>

#include "../include/torch/csrc/inductor/aoti_torch/c/shim.h"
#include "../include/torch/csrc/stable/c/shim.h"
#include "cuda_runtime_calls.h"
#include "opreg/core/error.h"

namespace opreg::torch_stable {

DType DTypeFromCode(int32_t code, const char* what) {
  std::optional<DType> d = DTypeFromTorchScalarTypeCode(code);
  OPREG_CHECK_TYPE(d.has_value(), what, ": expected a dtype opreg has (float32, float64, float16, ",
                   "bfloat16, int8, uint8, int16, int32, int64, bool, float8_e4m3fn, ",
                   "float8_e5m2), got torch ScalarType code ", code);
  return *d;
}

Device DeviceFromCodes(int32_t device_type, int32_t device_index, const char* what) {
  switch (device_type) {
    case kTorchCPU:
      return Device::cpu();
    case kTorchMeta:
      return Device::meta();
    case kTorchCUDA:
      return device_index < 0 ? Device(DeviceType::kCUDA, -1) : Device::cuda(device_index);
    default:
      break;
  }
  OPREG_CHECK_VALUE(false, what,
                    ": expected a cpu, cuda or meta device, got torch DeviceType code ",
                    device_type);
  return Device::cpu();
}

int32_t DeviceTypeCode(const Device& device) {
  switch (device.type) {
    case DeviceType::kCPU:
      return kTorchCPU;
    case DeviceType::kCUDA:
      return kTorchCUDA;
    case DeviceType::kMeta:
      return kTorchMeta;
  }
  return kTorchCPU;
}

int32_t DeviceIndexOf(const Device& device) {
  if (!device.is_cuda()) return -1;
  return device.has_index() ? device.index : CurrentCudaDeviceIndex();
}

}  // namespace opreg::torch_stable

using opreg::DType;
using opreg::TorchScalarTypeCode;

extern "C" {

int32_t aoti_torch_device_type_cpu() { return opreg::torch_stable::kTorchCPU; }
int32_t aoti_torch_device_type_cuda() { return opreg::torch_stable::kTorchCUDA; }
int32_t aoti_torch_device_type_meta() { return opreg::torch_stable::kTorchMeta; }
int32_t aoti_torch_device_type_xpu() { return opreg::torch_stable::kTorchXPU; }
int32_t aoti_torch_device_type_mps() { return opreg::torch_stable::kTorchMPS; }
int32_t aoti_torch_device_type_privateuse1() { return opreg::torch_stable::kTorchPrivateUse1; }

// c10::ScalarType's values; the ones opreg has come from its dtype table.
int32_t aoti_torch_dtype_float8_e5m2() { return TorchScalarTypeCode(DType::kFloat8E5M2); }
int32_t aoti_torch_dtype_float8_e4m3fn() { return TorchScalarTypeCode(DType::kFloat8E4M3FN); }
int32_t aoti_torch_dtype_float8_e5m2fnuz() { return 25; }
int32_t aoti_torch_dtype_float8_e4m3fnuz() { return 26; }
int32_t aoti_torch_dtype_bfloat16() { return TorchScalarTypeCode(DType::kBFloat16); }
int32_t aoti_torch_dtype_float16() { return TorchScalarTypeCode(DType::kFloat16); }
int32_t aoti_torch_dtype_float32() { return TorchScalarTypeCode(DType::kFloat32); }
int32_t aoti_torch_dtype_float64() { return TorchScalarTypeCode(DType::kFloat64); }
int32_t aoti_torch_dtype_uint8() { return TorchScalarTypeCode(DType::kUInt8); }
int32_t aoti_torch_dtype_uint16() { return 27; }
int32_t aoti_torch_dtype_uint32() { return 28; }
int32_t aoti_torch_dtype_uint64() { return 29; }
int32_t aoti_torch_dtype_int8() { return TorchScalarTypeCode(DType::kInt8); }
int32_t aoti_torch_dtype_int16() { return TorchScalarTypeCode(DType::kInt16); }
int32_t aoti_torch_dtype_int32() { return TorchScalarTypeCode(DType::kInt32); }
int32_t aoti_torch_dtype_int64() { return TorchScalarTypeCode(DType::kInt64); }
int32_t aoti_torch_dtype_bool() { return TorchScalarTypeCode(DType::kBool); }
int32_t aoti_torch_dtype_complex32() { return 8; }
int32_t aoti_torch_dtype_complex64() { return 9; }
int32_t aoti_torch_dtype_complex128() { return 10; }
int32_t torch_dtype_float8_e8m0fnu() { return 44; }
int32_t torch_dtype_float4_e2m1fn_x2() { return 45; }

size_t aoti_torch_dtype_element_size(int32_t dtype) {
  std::optional<DType> d = opreg::DTypeFromTorchScalarTypeCode(dtype);
  if (d) return opreg::ItemSize(*d);
  switch (dtype) {
    case 25:
    case 26:
    case 44:
    case 45:
      return 1;  // fp8 fnuz, e8m0, fp4 x2
    case 27:
    case 8:
      return 2;  // uint16, complex32
    case 28:
      return 4;  // uint32
    case 29:
    case 9:
      return 8;  // uint64, complex64
    case 10:
      return 16;  // complex128
    default:
      return 0;
  }
}

int32_t aoti_torch_layout_strided() { return 0; }
int32_t aoti_torch_layout_sparse_coo() { return 1; }
int32_t aoti_torch_layout_sparse_csr() { return 2; }
int32_t aoti_torch_layout__mkldnn() { return 3; }
int32_t aoti_torch_layout_sparse_csc() { return 4; }
int32_t aoti_torch_layout_sparse_bsr() { return 5; }
int32_t aoti_torch_layout_sparse_bsc() { return 6; }
int32_t aoti_torch_layout_jagged() { return 7; }

int32_t aoti_torch_memory_format_contiguous_format() { return 0; }
int32_t aoti_torch_memory_format_preserve_format() { return 1; }
int32_t aoti_torch_memory_format_channels_last() { return 2; }
int32_t aoti_torch_memory_format_channels_last_3d() { return 3; }

uint64_t aoti_torch_abi_version() { return TORCH_ABI_VERSION; }

}  // extern "C"
