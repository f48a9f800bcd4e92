// DLPack export and import: the legacy DLManagedTensor ABI, and the DLTensor-level building
// blocks the Python bindings use for versioned capsules and frameworks' exchange APIs.
#include "opreg/core/dlpack.h"

#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "opreg/core/tensor_factories.h"

namespace opreg {
namespace {

// Everything an exported DLManagedTensor points into lives here, so one delete frees it all and
// drops the tensor reference that keeps the data alive.
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
};

void DeleteExportContext(DLManagedTensor* managed) {
  delete static_cast<ExportContext*>(managed->manager_ctx);
}

// The storage deleter of an imported tensor: hands the DLManagedTensor back to its producer.
void ReleaseImported(void* context) {
  auto* managed = static_cast<DLManagedTensor*>(context);
  if (managed->deleter != nullptr) managed->deleter(managed);
}

// The dtype of `t`, nullopt when opreg has none. No Status on this per-argument path; the error
// is built by FromDLDataType only when it is needed.
constexpr uint32_t DLKey(uint8_t code, uint8_t bits) { return (uint32_t{code} << 8) | bits; }

std::optional<DType> DTypeOfDL(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (DLKey(t.code, t.bits)) {
#define OPREG_DTYPE_FROM_DL(_, e, short_name, torch, size, floating, dlpack, ...) \
  case DLKey(dlpack, (size) * 8):                                         \
    return DType::k##e;
    OPREG_DTYPE_TABLE(OPREG_DTYPE_FROM_DL, _)  // generated from dtype_table.h
#undef OPREG_DTYPE_FROM_DL
    default:
      return std::nullopt;
  }
}

std::string DescribeDLType(DLDataType t) {
  return StrCat("code ", static_cast<int>(t.code), ", bits ", static_cast<int>(t.bits), ", lanes ",
                t.lanes);
}

}  // namespace

DLDataType ToDLDataType(DType dtype) {
  DLDataType t;
  t.lanes = 1;
  t.bits = static_cast<uint8_t>(ItemSize(dtype) * 8);
  t.code = kDLFloat;
  switch (dtype) {
#define OPREG_DTYPE_TO_DL(_, e, short_name, torch, size, floating, dlpack, ...) \
  case DType::k##e:                                                     \
    t.code = dlpack;                                                    \
    break;
    OPREG_DTYPE_TABLE(OPREG_DTYPE_TO_DL, _)  // generated from dtype_table.h
#undef OPREG_DTYPE_TO_DL
  }
  return t;
}

absl::StatusOr<DType> FromDLDataType(DLDataType t) {
  if (std::optional<DType> d = DTypeOfDL(t)) return *d;
  if (t.lanes != 1) {
    return absl::InvalidArgumentError(
        StrCat("unsupported DLPack dtype (", DescribeDLType(t), "): only lanes == 1 is supported"));
  }
  return absl::InvalidArgumentError(
      StrCat("unsupported DLPack dtype (", DescribeDLType(t),
             "): opreg supports float16/32/64, bfloat16, int8/16/32/64, uint8/16/32/64, bool and "
             "float8 e4m3fn/e5m2"));
}

void DescribeDLTensor(const Tensor& tensor, int64_t* shape, int64_t* strides, DLTensor* out) {
  OPREG_CHECK_VALUE(tensor.defined(), "DLPack export: the tensor is undefined");
  const Device device = tensor.device();
  OPREG_CHECK_VALUE(!device.is_meta(),
                    "DLPack export: meta tensors have no data and cannot be exported to DLPack");
  const int64_t dim = tensor.dim();
  for (int64_t d = 0; d < dim; ++d) {
    shape[d] = tensor.sizes()[d];
    strides[d] = tensor.strides()[d];
  }
  // The element pointer with byte_offset 0 is what NumPy and PyTorch expect from producers.
  out->data = tensor.data_ptr();
  out->device.device_type = device.is_cuda() ? kDLCUDA : kDLCPU;
  out->device.device_id = device.is_cuda() ? device.index : 0;
  out->ndim = static_cast<int32_t>(dim);
  out->dtype = ToDLDataType(tensor.dtype());
  out->shape = shape;
  out->strides = strides;
  out->byte_offset = 0;
}

DLManagedTensor* ToDLPack(const Tensor& tensor) {
  OPREG_CHECK_VALUE(tensor.defined(), "ToDLPack(): the tensor is undefined");
  OPREG_CHECK_VALUE(!tensor.is_meta(),
                    "ToDLPack(): meta tensors have no data and cannot be exported to DLPack");
  auto ctx = std::make_unique<ExportContext>();
  ctx->tensor = tensor;
  ctx->shape.resize(tensor.dim());
  ctx->strides.resize(tensor.dim());
  DescribeDLTensor(tensor, ctx->shape.data(), ctx->strides.data(), &ctx->managed.dl_tensor);
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = &DeleteExportContext;
  return &ctx.release()->managed;
}

absl::StatusOr<Tensor> FromDLPack(DLManagedTensor* managed) {
  if (managed == nullptr) return absl::InvalidArgumentError("FromDLPack(): null DLManagedTensor");
  return FromDLTensor(managed->dl_tensor, managed, &ReleaseImported);
}

absl::StatusOr<Tensor> FromDLTensor(const DLTensor& dl, void* owner, DataPtr::DeleterFn release,
                                    RecycleScope* recycle, const void* source) {
  const std::optional<DType> dtype = DTypeOfDL(dl.dtype);
  if (!dtype) {
    return absl::InvalidArgumentError(
        StrCat("FromDLPack(): ", FromDLDataType(dl.dtype).status().message()));
  }
  Device device;
  switch (dl.device.device_type) {
    case kDLCPU:
      device = Device::cpu();
      break;
    case kDLCUDA:
      if (dl.device.device_id < 0 || dl.device.device_id > std::numeric_limits<int16_t>::max()) {
        return absl::InvalidArgumentError(
            StrCat("FromDLPack(): invalid CUDA device_id ", dl.device.device_id));
      }
      device = Device::cuda(dl.device.device_id);
      break;
    default:
      return absl::InvalidArgumentError(StrCat("FromDLPack(): unsupported DLPack device type ",
                                               static_cast<int>(dl.device.device_type),
                                               " (opreg accepts kDLCPU = 1 and kDLCUDA = 2)"));
  }
  if (dl.ndim < 0) {
    return absl::InvalidArgumentError(StrCat("FromDLPack(): negative ndim ", dl.ndim));
  }
  if (dl.ndim > 0 && dl.shape == nullptr) {
    return absl::InvalidArgumentError("FromDLPack(): shape is null");
  }
  const IntArrayRef shape(dl.shape, static_cast<size_t>(dl.ndim));
  DimVector contiguous;  // only for producers that leave strides out (compact row-major)
  if (dl.strides == nullptr) contiguous = ContiguousStrides(shape);
  const IntArrayRef strides = dl.strides != nullptr
                                  ? IntArrayRef(dl.strides, static_cast<size_t>(dl.ndim))
                                  : IntArrayRef(contiguous);
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  // from_blob validates the layout (negative figures, overflow, null data) before it takes
  // `owner`, so on any error the caller still owns it.
  try {
    if (recycle == nullptr) return from_blob(data, shape, strides, *dtype, device, owner, release);
    return recycle->FromBlob(data, shape, strides, *dtype, device, owner, release, source);
  } catch (const Error& e) {
    // Negative sizes and strides are named in the producer's terms (dims in order), only once
    // from_blob has refused the layout: a valid tensor is checked once.
    for (int32_t d = 0; d < dl.ndim; ++d) {
      if (dl.shape[d] < 0) {
        return absl::InvalidArgumentError(
            StrCat("FromDLPack(): negative size ", dl.shape[d], " in dim ", d));
      }
      if (strides[d] < 0) {
        return absl::InvalidArgumentError(StrCat("FromDLPack(): negative stride ", strides[d],
                                                 " in dim ", d, " is not supported"));
      }
    }
    return absl::InvalidArgumentError(StrCat("FromDLPack(): ", e.message()));
  }
}

}  // namespace opreg
