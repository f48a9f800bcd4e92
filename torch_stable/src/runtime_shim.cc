// The stable ABI's runtime services over opreg: lists and strings of the boxed stack, optional
// boxes, device parsing, guards and streams (opreg's per-thread current CUDA stream), the
// parallel loop (OpenMP, as opreg's CPU kernels), warnings and the last error message.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../include/torch/csrc/inductor/aoti_torch/c/shim.h"
#include "../include/torch/csrc/stable/c/shim.h"
#include "codes.h"
#include "cuda_runtime_calls.h"
#include "opreg/core/cuda_device_guard.h"
#include "opreg/core/cuda_stream.h"
#include "opreg/core/error.h"
#include "opreg/core/logging.h"
#include "shim_guard.h"
#include "tensor_handle.h"

namespace opreg::torch_stable {

std::string& LastError() {
  thread_local std::string message;
  return message;
}

namespace {

using List = std::vector<StableIValue>;

List& ListOf(StableListHandle h) {
  OPREG_CHECK_VALUE(h != nullptr, "expected a list handle, got nullptr");
  return *reinterpret_cast<List*>(h);
}

std::string& StringOf(StringHandle h) {
  OPREG_CHECK_VALUE(h != nullptr, "expected a string handle, got nullptr");
  return *reinterpret_cast<std::string*>(h);
}

// A device guard: the CUDA device current for its lifetime (none for index -1).
struct Guard {
  std::unique_ptr<CudaDeviceGuard> guard;
  void Set(int32_t index) {
    guard.reset();
    if (index >= 0) guard = std::make_unique<CudaDeviceGuard>(index);
  }
};

// A stream handle: the stream and its device.
struct Stream {
  void* stream;
  int32_t device;
};

}  // namespace
}  // namespace opreg::torch_stable

using opreg::torch_stable::CheckOut;
using opreg::torch_stable::ShimGuard;

extern "C" {

AOTITorchError torch_new_list_reserve_size(size_t size, StableListHandle* ret) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret, "ret");
    auto list = std::make_unique<std::vector<StableIValue>>();
    list->reserve(size);
    *ret = reinterpret_cast<StableListHandle>(list.release());
  });
}

AOTITorchError torch_list_size(StableListHandle list_handle, size_t* size) {
  return ShimGuard(__func__, [&] {
    CheckOut(size, "size");
    *size = opreg::torch_stable::ListOf(list_handle).size();
  });
}

AOTITorchError torch_list_get_item(StableListHandle list_handle, size_t index,
                                   StableIValue* element) {
  return ShimGuard(__func__, [&] {
    CheckOut(element, "element");
    auto& list = opreg::torch_stable::ListOf(list_handle);
    OPREG_CHECK_INDEX(index < list.size(), "list index ", index, " out of range for a list of ",
                      list.size());
    *element = list[index];
  });
}

AOTITorchError torch_list_set_item(StableListHandle list_handle, size_t index,
                                   StableIValue element) {
  return ShimGuard(__func__, [&] {
    auto& list = opreg::torch_stable::ListOf(list_handle);
    OPREG_CHECK_INDEX(index < list.size(), "list index ", index, " out of range for a list of ",
                      list.size());
    list[index] = element;
  });
}

AOTITorchError torch_list_push_back(StableListHandle list_handle, StableIValue element) {
  return ShimGuard(__func__, [&] { opreg::torch_stable::ListOf(list_handle).push_back(element); });
}

AOTITorchError torch_delete_list(StableListHandle list_handle) {
  return ShimGuard(__func__,
                   [&] { delete reinterpret_cast<std::vector<StableIValue>*>(list_handle); });
}

AOTITorchError torch_new_string_handle(const char* data, size_t length, StringHandle* handle) {
  return ShimGuard(__func__, [&] {
    CheckOut(handle, "handle");
    OPREG_CHECK_VALUE(data != nullptr || length == 0, "expected string data, got nullptr");
    *handle = reinterpret_cast<StringHandle>(new std::string(data, length));
  });
}

AOTITorchError torch_delete_string(StringHandle handle) {
  return ShimGuard(__func__, [&] { delete reinterpret_cast<std::string*>(handle); });
}

AOTITorchError torch_string_length(StringHandle handle, size_t* length) {
  return ShimGuard(__func__, [&] {
    CheckOut(length, "length");
    *length = opreg::torch_stable::StringOf(handle).size();
  });
}

AOTITorchError torch_string_c_str(StringHandle handle, const char** data) {
  return ShimGuard(__func__, [&] {
    CheckOut(data, "data");
    *data = opreg::torch_stable::StringOf(handle).c_str();
  });
}

AOTITorchError torch_new_stable_ivalue(StableIValue** ret_value) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_value, "ret_value");
    *ret_value = new StableIValue(0);
  });
}

AOTITorchError torch_delete_stable_ivalue(StableIValue* value) {
  return ShimGuard(__func__, [&] { delete value; });
}

AOTITorchError torch_parse_device_string(const char* device_string, uint32_t* out_device_type,
                                         int32_t* out_device_index) {
  return ShimGuard(__func__, [&] {
    CheckOut(out_device_type, "out_device_type");
    CheckOut(out_device_index, "out_device_index");
    OPREG_CHECK_VALUE(device_string != nullptr, "expected a device string, got nullptr");
    absl::StatusOr<opreg::Device> d = opreg::Device::Parse(device_string);
    opreg::ThrowIfError(d.status());
    *out_device_type = static_cast<uint32_t>(opreg::torch_stable::DeviceTypeCode(*d));
    *out_device_index = d->is_cuda() ? d->index : -1;
  });
}

// Chunks of at least grain_size, one per thread (OpenMP), as at::parallel_for.
AOTITorchError torch_parallel_for(int64_t begin, int64_t end, int64_t grain_size, ParallelFunc func,
                                  void* ctx) {
  return ShimGuard(__func__, [&] {
    OPREG_CHECK_VALUE(func != nullptr, "parallel_for: expected a function, got nullptr");
    if (begin >= end) return;
    const int64_t n = end - begin;
    int64_t threads = 1;
#ifdef _OPENMP
    threads = omp_in_parallel() ? 1 : omp_get_max_threads();
#endif
    if (grain_size > 0) threads = std::min<int64_t>(threads, (n + grain_size - 1) / grain_size);
    if (threads <= 1) {
      func(begin, end, ctx);
      return;
    }
    const int64_t chunk = (n + threads - 1) / threads;
    std::string error;
#ifdef _OPENMP
#pragma omp parallel for num_threads(static_cast <int>(threads))
#endif
    for (int64_t t = 0; t < threads; ++t) {
      const int64_t b = begin + t * chunk;
      const int64_t e = std::min(end, b + chunk);
      if (b >= e) continue;
      try {
        func(b, e, ctx);
      } catch (const std::exception& ex) {
#ifdef _OPENMP
#pragma omp critical(opreg_torch_stable_parallel_error)
#endif
        if (error.empty()) error = ex.what();
      }
    }
    OPREG_CHECK(error.empty(), error);
  });
}

AOTITorchError torch_get_thread_idx(uint32_t* out_thread_idx) {
  return ShimGuard(__func__, [&] {
    CheckOut(out_thread_idx, "out_thread_idx");
#ifdef _OPENMP
    *out_thread_idx = static_cast<uint32_t>(omp_get_thread_num());
#else
    *out_thread_idx = 0;
#endif
  });
}

AOTITorchError torch_get_num_threads(uint32_t* out_num_threads) {
  return ShimGuard(__func__, [&] {
    CheckOut(out_num_threads, "out_num_threads");
#ifdef _OPENMP
    *out_num_threads = static_cast<uint32_t>(omp_get_max_threads());
#else
    *out_num_threads = 1;
#endif
  });
}

AOTITorchError aoti_torch_create_device_guard(int32_t device_index, DeviceGuardHandle* ret_guard) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_guard, "ret_guard");
    auto guard = std::make_unique<opreg::torch_stable::Guard>();
    guard->Set(device_index);
    *ret_guard = reinterpret_cast<DeviceGuardHandle>(guard.release());
  });
}

AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle guard) {
  return ShimGuard(__func__, [&] { delete reinterpret_cast<opreg::torch_stable::Guard*>(guard); });
}

AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle guard, int32_t device_index) {
  return ShimGuard(__func__, [&] {
    OPREG_CHECK_VALUE(guard != nullptr, "expected a device guard, got nullptr");
    reinterpret_cast<opreg::torch_stable::Guard*>(guard)->Set(device_index);
  });
}

AOTITorchError aoti_torch_get_current_stream(int32_t device_index, StreamHandle* ret_stream) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_stream, "ret_stream");
    const int32_t device =
        device_index >= 0 ? device_index : opreg::torch_stable::CurrentCudaDeviceIndex();
    *ret_stream = reinterpret_cast<StreamHandle>(
        new opreg::torch_stable::Stream{opreg::CurrentCudaStream(device), device});
  });
}

AOTITorchError aoti_torch_delete_stream(StreamHandle stream) {
  return ShimGuard(__func__,
                   [&] { delete reinterpret_cast<opreg::torch_stable::Stream*>(stream); });
}

// The stream's address is its id (the legacy default stream is 0), unique while it lives.
AOTITorchError aoti_torch_stream_id(StreamHandle stream, int64_t* ret_stream_id) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_stream_id, "ret_stream_id");
    OPREG_CHECK_VALUE(stream != nullptr, "expected a stream handle, got nullptr");
    *ret_stream_id = static_cast<int64_t>(
        reinterpret_cast<intptr_t>(reinterpret_cast<opreg::torch_stable::Stream*>(stream)->stream));
  });
}

AOTITorchError aoti_torch_get_current_device_index(int32_t* ret_device_index) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_device_index, "ret_device_index");
    *ret_device_index = opreg::torch_stable::CurrentCudaDeviceIndex();
  });
}

AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_stream, "ret_stream");
    const int32_t device =
        device_index >= 0 ? device_index : opreg::torch_stable::CurrentCudaDeviceIndex();
    *ret_stream = opreg::CurrentCudaStream(device);
  });
}

AOTITorchError torch_set_current_cuda_stream(void* stream, int32_t device_index) {
  return ShimGuard(__func__, [&] {
    const int32_t device =
        device_index >= 0 ? device_index : opreg::torch_stable::CurrentCudaDeviceIndex();
    opreg::SetCurrentCudaStream(device, stream);
  });
}

// opreg keeps no stream pool: the pool's stream is the current one, which is what a kernel
// library asking for a side stream gets when it then launches in order (correct, not
// concurrent).
AOTITorchError torch_get_cuda_stream_from_pool(bool /*isHighPriority*/, int32_t device_index,
                                               void** ret_stream) {
  return aoti_torch_get_current_cuda_stream(device_index, ret_stream);
}

AOTITorchError torch_cuda_stream_synchronize(void* stream, int32_t device_index) {
  return ShimGuard(__func__,
                   [&] { opreg::torch_stable::SynchronizeCudaStream(stream, device_index); });
}

AOTITorchError torch_get_current_cuda_blas_handle(void** ret_handle) {
  return ShimGuard(__func__, [&] {
    CheckOut(ret_handle, "ret_handle");
    *ret_handle = opreg::torch_stable::CurrentCublasHandle();
  });
}

AOTITorchError torch_c10_cuda_check_msg(int32_t err, const char* filename,
                                        const char* function_name, uint32_t line_number,
                                        bool /*include_device_assertions*/, char** error_msg) {
  return ShimGuard(__func__, [&] {
    CheckOut(error_msg, "error_msg");
    *error_msg = nullptr;
    const std::string message = opreg::torch_stable::CudaErrorMessage(err);
    if (message.empty()) return;
    const std::string full = message + " at " + (filename ? filename : "?") + ":" +
                             std::to_string(line_number) + " in " +
                             (function_name ? function_name : "?");
    *error_msg = static_cast<char*>(std::malloc(full.size() + 1));
    if (*error_msg != nullptr) std::memcpy(*error_msg, full.c_str(), full.size() + 1);
  });
}

void torch_c10_cuda_free_error_msg(char* error_msg) { std::free(error_msg); }

const char* torch_exception_get_what() { return opreg::torch_stable::LastError().c_str(); }

const char* torch_exception_get_what_without_backtrace() {
  return opreg::torch_stable::LastError().c_str();
}

// torch's AOTI_TORCH_CHECK reports through this; it throws, as torch's does.
void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line,
                      const char* msg) {
  if (cond) return;
  throw opreg::Error(
      opreg::ErrorKind::kRuntime,
      opreg::StrCat(msg != nullptr ? msg : "check failed", " (in ", func != nullptr ? func : "?",
                    " at ", file != nullptr ? file : "?", ":", line, ")"));
}

void aoti_torch_warn(const char* func, const char* file, uint32_t line, const char* msg) {
  opreg::Logger().warn("{} (in {} at {}:{})", msg != nullptr ? msg : "",
                       func != nullptr ? func : "?", file != nullptr ? file : "?", line);
}

}  // extern "C"
