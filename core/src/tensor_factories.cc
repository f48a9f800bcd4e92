// Tensor factories: allocation through the device allocator, fills, and adoption of external
// memory (from_blob).
#include "opreg/core/tensor_factories.h"

#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "blob_layout.h"
#include "element_convert.h"
#include "opreg/core/allocator.h"
#include "opreg/core/recycled_tensors.h"

namespace opreg {
namespace {

std::string Shape(IntArrayRef sizes) { return StrCat("[", absl::StrJoin(sizes, ", "), "]"); }

// Elements a strided layout reaches from offset 0: (largest offset + 1), 0 when empty.
int64_t StridedExtent(IntArrayRef sizes, IntArrayRef strides, const char* method) {
  OPREG_CHECK_VALUE(sizes.size() == strides.size(), method, ": got ", sizes.size(), " sizes ",
                    Shape(sizes), " but ", strides.size(), " strides ", Shape(strides));
  const int64_t numel = ComputeNumel(sizes, method);
  if (numel == 0) return 0;
  int64_t last = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    OPREG_CHECK_VALUE(strides[d] >= 0, method, ": negative stride ", strides[d], " in dim ", d,
                      " is not supported");
    OPREG_CHECK_VALUE(strides[d] == 0 ||
                          sizes[d] - 1 <= (std::numeric_limits<int64_t>::max() - last) / strides[d],
                      method, ": sizes ", Shape(sizes), " with strides ", Shape(strides),
                      " overflow int64");
    last += (sizes[d] - 1) * strides[d];
  }
  return last + 1;
}

size_t CheckedBytes(int64_t elements, DType dtype, const char* method) {
  const auto item = static_cast<int64_t>(ItemSize(dtype));
  OPREG_CHECK_VALUE(elements <= std::numeric_limits<int64_t>::max() / item, method, ": ", elements,
                    " elements of ", DTypeName(dtype), " overflow the byte count");
  return static_cast<size_t>(elements * item);
}

Tensor Allocate(IntArrayRef sizes, IntArrayRef strides, int64_t extent, DType dtype,
                Device device, const char* method) {
  const size_t nbytes = CheckedBytes(extent, dtype, method);
  // The memory from the device's allocator (none for meta tensors); the tensor's objects from
  // this thread's recycled ones when there are some (a functional call's meta results and the
  // outputs torch frees come back to that cache).
  DataPtr data = GetAllocator(device)->Allocate(nbytes);
  Tensor t = RecycledTensors::FromBlob(data.get(), sizes, strides, dtype, device, data.context(),
                                       data.deleter(), RecyclePool::kOwned);
  data.ReleaseContext();  // the tensor's storage owns it now (FromBlob threw before taking it)
  return t;
}

// Whether `value` fits `dtype`, as torch's fill checks it (c10::overflows) but stricter for the
// unsigned types: an integral type takes a finite value whose truncation lies in its range
// (torch wraps small negatives into an unsigned type; opreg refuses them, as NumPy does); a
// floating type takes NaN, infinities and finite values up to its largest; bool takes anything.
void CheckFillValue(double value, DType dtype, const char* method) {
  double lo = 0, hi = 0;  // the range of finite values the dtype takes
  switch (dtype) {
    case DType::kBool:
    case DType::kFloat64:
      return;
    case DType::kFloat32:
      lo = -(hi = std::numeric_limits<float>::max());
      break;
    case DType::kFloat16:
      lo = -(hi = 65504.0);
      break;
    case DType::kBFloat16:
      lo = -(hi = 3.3895313892515355e38);
      break;
    case DType::kFloat8E4M3FN:
      lo = -(hi = 448.0);
      break;
    case DType::kFloat8E5M2:
      lo = -(hi = 57344.0);
      break;
    default: {  // integral: 2^bits (unsigned) or 2^(bits-1) (signed) is one past the maximum
      const int bits = static_cast<int>(ItemSize(dtype)) * 8;
      const bool is_signed = dtype == DType::kInt8 || dtype == DType::kInt16 ||
                             dtype == DType::kInt32 || dtype == DType::kInt64;
      const double past_max = std::ldexp(1.0, is_signed ? bits - 1 : bits);
      const double truncated = std::trunc(value);
      OPREG_CHECK_VALUE(std::isfinite(value) && truncated < past_max &&
                            truncated >= (is_signed ? -past_max : 0.0),
                        method, ": value ", value, " cannot be converted to type ",
                        DTypeName(dtype), " without overflow");
      return;
    }
  }
  OPREG_CHECK_VALUE(!std::isfinite(value) || (value >= lo && value <= hi), method, ": value ",
                    value, " cannot be converted to type ", DTypeName(dtype), " without overflow");
}

void FillCpu(const Tensor& t, double value) {
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = internal::ConvertElement<T>(value);
    T* p = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = v;
  });
}

// Fills a fresh contiguous tensor on any device: meta needs nothing, CUDA gets a host-filled
// buffer copied over (core has no device kernels).
Tensor FilledLike(Tensor result, double value) {
  const Device device = result.device();
  if (device.is_meta()) return result;
  if (device.is_cpu()) {
    FillCpu(result, value);
    return result;
  }
  Tensor host = empty(result.sizes(), result.dtype(), Device::cpu());
  FillCpu(host, value);
  result.copy_(host);
  return result;
}

struct BlobContext {
  void* data;
  std::function<void(void*)> deleter;
};

void DeleteBlob(void* context) {
  std::unique_ptr<BlobContext> blob(static_cast<BlobContext*>(context));
  blob->deleter(blob->data);
}

}  // namespace

Tensor empty(IntArrayRef sizes, DType dtype, Device device) {
  const int64_t numel = ComputeNumel(sizes, "empty()");
  return Allocate(sizes, ContiguousStrides(sizes), numel, dtype, device, "empty()");
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device) {
  const int64_t extent = StridedExtent(sizes, strides, "empty_strided()");
  return Allocate(sizes, strides, extent, dtype, device, "empty_strided()");
}

Tensor empty_like(const Tensor& like) {
  OPREG_CHECK_VALUE(like.defined(), "empty_like(): argument is an undefined tensor");
  return empty(like.sizes(), like.dtype(), like.device());
}

Tensor zeros(IntArrayRef sizes, DType dtype, Device device) {
  return FilledLike(empty(sizes, dtype, device), 0.0);
}

Tensor ones(IntArrayRef sizes, DType dtype, Device device) {
  return FilledLike(empty(sizes, dtype, device), 1.0);
}

Tensor full(IntArrayRef sizes, double value, DType dtype, Device device) {
  CheckFillValue(value, dtype, "full()");
  return FilledLike(empty(sizes, dtype, device), value);
}

Tensor full(IntArrayRef sizes, const Scalar& value, DType dtype, Device device) {
  if (!value.isIntegral() || IsFloatingPoint(dtype) || dtype == DType::kBool) {
    return full(sizes, value.toDouble(), dtype, device);
  }
  // An integer into an integral dtype: exact (a double would round past 2^53).
  const int64_t v = value.toInt();
  CheckFillValue(static_cast<double>(v), dtype, "full()");
  Tensor result = empty(sizes, dtype, device);
  if (result.device().is_meta() || result.numel() == 0) return result;
  Tensor host = result.device().is_cpu() ? result : empty(sizes, dtype, Device::cpu());
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const T x = static_cast<T>(v);  // in range: checked above
      T* p = static_cast<T*>(host.data_ptr());
      for (int64_t i = 0, n = host.numel(); i < n; ++i) p[i] = x;
    }
  });
  if (!result.device().is_cpu()) result.copy_(host);
  return result;
}

Tensor arange(int64_t end, DType dtype, Device device) {
  OPREG_CHECK_VALUE(end >= 0, "arange(): end must be non-negative, got ", end);
  return arange(0.0, static_cast<double>(end), 1.0, dtype, device);
}

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  OPREG_CHECK_VALUE(std::isfinite(start) && std::isfinite(end), "arange(): start ", start,
                    " and end ", end, " must be finite");
  OPREG_CHECK_VALUE(step != 0 && std::isfinite(step),
                    "arange(): step must be finite and nonzero, got ", step);
  OPREG_CHECK_VALUE((step > 0 && end >= start) || (step < 0 && end <= start), "arange(): step ",
                    step, " has the wrong sign for start ", start, " and end ", end);
  const double count = std::ceil((end - start) / step);
  OPREG_CHECK_VALUE(count < 9.0e18, "arange(): too many elements (", count, ")");
  const auto n = static_cast<int64_t>(count);
  // Every element must fit the dtype (torch wraps them silently; opreg refuses).
  if (n > 0) {
    CheckFillValue(start, dtype, "arange(): start");
    CheckFillValue(start + static_cast<double>(n - 1) * step, dtype, "arange(): last element");
  }
  Tensor result = empty({n}, dtype, device);
  if (device.is_meta()) return result;
  Tensor host = device.is_cpu() ? result : empty({n}, dtype, Device::cpu());
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(host.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      p[i] = internal::ConvertElement<T>(start + static_cast<double>(i) * step);
    }
  });
  if (!device.is_cpu()) result.copy_(host);
  return result;
}

BlobLayout CheckBlobLayout(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                           Device device) {
  // One pass over the layout for the common, valid case (framework tensors come through here on
  // every call); anything it cannot vouch for goes to the checks that name the problem.
  bool ok = sizes.size() == strides.size();
  int64_t numel = 1, last = 0;
  for (size_t d = 0; ok && d < sizes.size(); ++d) {
    const int64_t size = sizes[d], stride = strides[d];
    int64_t reach = 0;
    ok = size >= 0 && stride >= 0 && !__builtin_mul_overflow(numel, size, &numel) &&
         (size == 0 || (!__builtin_mul_overflow(size - 1, stride, &reach) &&
                        !__builtin_add_overflow(last, reach, &last)));
  }
  const auto item = static_cast<int64_t>(ItemSize(dtype));
  int64_t nbytes = 0;
  ok = ok && (numel == 0 || !__builtin_mul_overflow(last + 1, item, &nbytes));
  if (!ok) {  // throws, or (should the two ever disagree) recomputes both figures
    nbytes = static_cast<int64_t>(
        CheckedBytes(StridedExtent(sizes, strides, "from_blob()"), dtype, "from_blob()"));
    numel = ComputeNumel(sizes, "from_blob()");
  }
  OPREG_CHECK_VALUE(data != nullptr || nbytes == 0 || device.is_meta(),
                    "from_blob(): data is null but the tensor needs ", nbytes, " bytes");
  return BlobLayout{numel, static_cast<size_t>(nbytes)};
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device,
                 void* owner, DataPtr::DeleterFn release) {
  const BlobLayout layout = CheckBlobLayout(data, sizes, strides, dtype, device);
  auto storage =
      make_intrusive<StorageImpl>(DataPtr(data, nullptr, nullptr, device), layout.nbytes);
  StorageImpl* raw = storage.get();
  Tensor t(make_intrusive<TensorImpl>(Storage(std::move(storage)), sizes, strides, 0, dtype,
                                      layout.numel));
  // Nothing can throw any more: the storage, made without an owner just above, takes `owner`.
  raw->AdoptOwner(owner, release);
  return t;
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device,
                 std::function<void(void*)> deleter) {
  if (!deleter) return from_blob(data, sizes, strides, dtype, device, nullptr, nullptr);
  auto ctx = std::make_unique<BlobContext>(BlobContext{data, std::move(deleter)});
  Tensor t = from_blob(data, sizes, strides, dtype, device, ctx.get(), &DeleteBlob);
  ctx.release();  // owned by the storage now (from_blob threw before taking it otherwise)
  return t;
}

Tensor from_blob(void* data, IntArrayRef sizes, DType dtype, Device device,
                 std::function<void(void*)> deleter) {
  return from_blob(data, sizes, ContiguousStrides(sizes), dtype, device, std::move(deleter));
}

}  // namespace opreg
