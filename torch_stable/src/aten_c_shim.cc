// The aoti_torch_aten_* functions torch's stable headers call directly (generated in torch as
// c_shim_aten.h) rather than through torch_call_dispatcher: narrow, fill_, pad, full, new_empty
// and new_zeros, with torch's signatures (optional arguments as nullable pointers).
#include <string_view>
#include <vector>

#include "../include/torch/csrc/inductor/aoti_torch/generated/c_shim_aten.h"
#include "codes.h"
#include "opreg/core/error.h"
#include "opreg/torch_compat/tensor.h"
#include "shim_guard.h"
#include "tensor_handle.h"

namespace opreg::torch_stable {
namespace {

std::vector<int64_t> Ints(const int64_t* p, int64_t n, const char* what) {
  OPREG_CHECK_VALUE(n >= 0 && (n == 0 || p != nullptr), what, ": expected ", n,
                    " values, got nullptr");
  return std::vector<int64_t>(p, p + n);
}

at::TensorOptions Options(const at::Tensor* like, const int32_t* dtype, const int32_t* layout,
                          const int32_t* device, int32_t device_index, const char* what) {
  at::TensorOptions o;
  if (like != nullptr) o = o.dtype(like->scalar_type()).device(like->device());
  if (dtype != nullptr) {
    o = o.dtype(static_cast<c10::ScalarType>(TorchScalarTypeCode(DTypeFromCode(*dtype, what))));
  }
  OPREG_CHECK_VALUE(layout == nullptr || *layout == kTorchStrided, what,
                    ": expected the strided layout, got code ", layout ? *layout : 0);
  if (device != nullptr) {
    o = o.device(c10::Device(DeviceFromCodes(*device, device_index, what)));
  }
  return o;
}

// new_empty / new_zeros: `self`'s dtype and device unless given (pin_memory has no meaning for
// opreg's CPU tensors and is ignored).
AtenTensorHandle NewLike(bool zeros, AtenTensorHandle self, const int64_t* size, int64_t size_len,
                         const int32_t* dtype, const int32_t* layout, const int32_t* device,
                         int32_t device_index, AtenTensorHandle* ret) {
  const char* what = zeros ? "new_zeros" : "new_empty";
  CheckOut(ret, "ret0");
  const at::Tensor like(TensorOf(self, "self"));
  const auto o = Options(&like, dtype, layout, device, device_index, what);
  const std::vector<int64_t> sizes = Ints(size, size_len, "size");
  return NewHandle((zeros ? at::zeros(sizes, o) : at::empty(sizes, o)).opreg());
}

}  // namespace
}  // namespace opreg::torch_stable

using opreg::torch_stable::CheckOut;
using opreg::torch_stable::NewHandle;
using opreg::torch_stable::ShimGuard;
using opreg::torch_stable::TensorOf;

extern "C" {

AOTITorchError aoti_torch_aten_narrow(AtenTensorHandle self, int64_t dim, int64_t start,
                                      int64_t length, AtenTensorHandle* ret0) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret0, "ret0");
    *ret0 = NewHandle(TensorOf(self, "self").narrow(dim, start, length));
  });
}

AOTITorchError aoti_torch_aten_fill__Scalar(AtenTensorHandle self, double value) {
  return ShimGuard(__func__, [&] { at::Tensor(TensorOf(self, "self")).fill_(value); });
}

// Constant padding only (torch's default mode): the last dims are padded from the back, pairs
// (before, after) per dim; negative pads crop, as in torch.
AOTITorchError aoti_torch_aten_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_,
                                   const char* mode, double* value, AtenTensorHandle* ret0) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret0, "ret0");
    const at::Tensor x(TensorOf(self, "self"));
    const std::vector<int64_t> p = opreg::torch_stable::Ints(pad, pad_len_, "pad");
    OPREG_CHECK_NOT_IMPLEMENTED(mode == nullptr || std::string_view(mode) == "constant",
                                "pad: mode '", mode, "' is not implemented (only 'constant')");
    OPREG_CHECK_VALUE(p.size() % 2 == 0 && static_cast<int64_t>(p.size() / 2) <= x.dim(),
                      "pad: expected an even number of pads, at most 2 per dim (", x.dim(),
                      " dims), got ", p.size());
    std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
    at::Tensor src = x;
    std::vector<int64_t> dst_start(sizes.size(), 0);
    for (size_t k = 0; k < p.size() / 2; ++k) {
      const int64_t d = x.dim() - 1 - static_cast<int64_t>(k);
      const int64_t before = p[2 * k], after = p[2 * k + 1];
      const int64_t out_size = sizes[d] + before + after;
      OPREG_CHECK_VALUE(out_size >= 0, "pad: dim ", d, " of size ", sizes[d], " padded by (",
                        before, ", ", after, ") is negative");
      // Negative pads crop the source; positive ones move where it lands.
      const int64_t crop_front = before < 0 ? -before : 0;
      const int64_t crop_back = after < 0 ? -after : 0;
      src = src.narrow(d, crop_front, sizes[d] - crop_front - crop_back);
      dst_start[d] = before > 0 ? before : 0;
      sizes[d] = out_size;
    }
    at::Tensor out = at::full(sizes, value != nullptr ? *value : 0.0,
                              at::TensorOptions().dtype(x.scalar_type()).device(x.device()));
    at::Tensor region = out;
    for (size_t d = 0; d < sizes.size(); ++d) {
      region = region.narrow(static_cast<int64_t>(d), dst_start[d], src.size(d));
    }
    region.copy_(src);
    *ret0 = NewHandle(out.opreg());
  });
}

AOTITorchError aoti_torch_aten_full(const int64_t* size, int64_t size_len_, double fill_value,
                                    int32_t* dtype, int32_t* layout, int32_t* device,
                                    int32_t device_index_, int32_t* pin_memory,
                                    AtenTensorHandle* ret0) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret0, "ret0");
    (void)pin_memory;
    const auto o =
        opreg::torch_stable::Options(nullptr, dtype, layout, device, device_index_, "full");
    *ret0 = NewHandle(
        at::full(opreg::torch_stable::Ints(size, size_len_, "size"), fill_value, o).opreg());
  });
}

AOTITorchError aoti_torch_aten_new_empty(AtenTensorHandle self, const int64_t* size,
                                         int64_t size_len_, int32_t* dtype, int32_t* layout,
                                         int32_t* device, int32_t device_index_,
                                         int32_t* pin_memory, AtenTensorHandle* ret0) {
  return ShimGuard(__func__, [&] {
    *ret0 = opreg::torch_stable::NewLike(false, self, size, size_len_, dtype, layout, device,
                                         device_index_, ret0);
  });
}

AOTITorchError aoti_torch_aten_new_zeros(AtenTensorHandle self, const int64_t* size,
                                         int64_t size_len_, int32_t* dtype, int32_t* layout,
                                         int32_t* device, int32_t device_index_,
                                         int32_t* pin_memory, AtenTensorHandle* ret0) {
  return ShimGuard(__func__, [&] {
    *ret0 = opreg::torch_stable::NewLike(true, self, size, size_len_, dtype, layout, device,
                                         device_index_, ret0);
  });
}

AOTITorchError aoti_torch_aten_amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                    int32_t keepdim, AtenTensorHandle* ret0) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret0, "ret0");
    const std::vector<int64_t> dims = opreg::torch_stable::Ints(dim, dim_len_, "dim");
    *ret0 = NewHandle(at::amax(at::Tensor(TensorOf(self, "self")), dims, keepdim != 0).opreg());
  });
}

AOTITorchError aoti_torch_aten_subtract_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                               double alpha, AtenTensorHandle* ret0) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret0, "ret0");
    const at::Tensor a(TensorOf(self, "self")), b(TensorOf(other, "other"));
    // alpha stays a double, as in torch's implementation of this function: integral tensors
    // then refuse it ("argument alpha must not be a floating point number"), as there.
    const at::Scalar a_scalar(alpha);
    *ret0 = NewHandle(at::sub(a, b, a_scalar).opreg());
  });
}

}  // extern "C"
