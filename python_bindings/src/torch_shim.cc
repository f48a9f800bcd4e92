// Resolving torch's stable C ABI in the libtorch_cpu torch has loaded (torch_shim.h).
#include "torch_shim.h"

#include <dlfcn.h>

#include <utility>

#include "module_internal.h"
#include "opreg/core/layout.h"
#include "opreg/core/string_util.h"

namespace opreg::python {
namespace {

template <class Fn>
bool Resolve(void* lib, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  return *out != nullptr;
}

// The value of one of the shim's code functions (`aoti_torch_dtype_float32()`, ...); false
// when torch lacks it.
bool ReadCode(void* lib, const std::string& name, int32_t* out) {
  int32_t (*fn)() = nullptr;
  if (!Resolve(lib, name.c_str(), &fn)) return false;
  *out = fn();
  return true;
}

}  // namespace

std::unique_ptr<TorchShim> LoadShim(const std::string& path, std::string* why) {
  // RTLD_NOLOAD: only a library torch has already loaded (never a second copy).
  void* lib = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib == nullptr) {
    *why = StrCat("torch's libtorch_cpu is not loaded from ", path);
    return nullptr;
  }
  auto s = std::make_unique<TorchShim>();
  const char* missing = nullptr;
  auto need = [&](const char* name, auto* field) {
    if (!Resolve(lib, name, field) && missing == nullptr) missing = name;
  };
  need("aoti_torch_library_init_impl", &s->library_init_impl);
  need("aoti_torch_library_impl", &s->library_impl);
  need("aoti_torch_get_data_ptr", &s->get_data_ptr);
  need("aoti_torch_get_dim", &s->get_dim);
  need("aoti_torch_get_sizes", &s->get_sizes);
  need("aoti_torch_get_strides", &s->get_strides);
  need("aoti_torch_get_dtype", &s->get_dtype);
  need("aoti_torch_get_device_type", &s->get_device_type);
  need("aoti_torch_get_device_index", &s->get_device_index);
  need("aoti_torch_delete_tensor_object", &s->delete_tensor);
  need("torch_from_blob", &s->from_blob);
  if (missing != nullptr) {
    *why = StrCat("this torch has no ", missing, " in its stable C ABI (torch 2.11 or later has)");
    return nullptr;
  }
  Resolve(lib, "torch_delete_stable_ivalue", &s->delete_stable_ivalue);  // optional
  Resolve(lib, "torch_new_stable_ivalue", &s->new_stable_ivalue);        // optional
  Resolve(lib, "aoti_torch_is_defined", &s->is_defined);                 // optional
  Resolve(lib, "aoti_torch_delete_library_object", &s->delete_library);  // optional
  Resolve(lib, "aoti_torch_new_tensor_handle", &s->new_tensor_handle);   // optional
  Resolve(lib, "torch_new_list_reserve_size", &s->new_list);             // optional (2.10)
  Resolve(lib, "torch_list_push_back", &s->list_push_back);
  Resolve(lib, "torch_list_size", &s->list_size);
  Resolve(lib, "torch_list_get_item", &s->list_get_item);
  Resolve(lib, "torch_delete_list", &s->delete_list);
  Resolve(lib, "torch_new_string_handle", &s->new_string);               // optional (2.10)
  Resolve(lib, "torch_string_length", &s->string_length);
  Resolve(lib, "torch_string_c_str", &s->string_c_str);
  Resolve(lib, "torch_delete_string", &s->delete_string);
  // Optional, and not part of the stable ABI (torch_shim.h says why it is used anyway).
  Resolve(lib, "_ZN5torch8autograd4impl12bump_versionERKN2at6TensorE", &s->bump_version);
  if (!ReadCode(lib, "aoti_torch_layout_strided", &s->layout_strided) ||
      !ReadCode(lib, "aoti_torch_device_type_cpu", &s->device_cpu) ||
      !ReadCode(lib, "aoti_torch_device_type_cuda", &s->device_cuda)) {
    *why = "this torch lacks a device or layout code function of the stable C ABI";
    return nullptr;
  }
  // Dtypes travel as c10 ScalarType codes (TorchScalarTypeCode), as opreg's boxed ScalarType
  // values do; the shim publishes the same codes, which is checked here once.
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    int32_t code = -1;
    if (!ReadCode(lib, StrCat("aoti_torch_dtype_", TorchDTypeName(dtype)), &code) ||
        code != TorchScalarTypeCode(dtype)) {
      *why = StrCat("this torch's stable C ABI has no code ", TorchScalarTypeCode(dtype),
                    " for dtype ", TorchDTypeName(dtype));
      return nullptr;
    }
  }
  ReadCode(lib, "aoti_torch_device_type_meta", &s->device_meta);  // optional
  // Layout and MemoryFormat codes: compared, not required (without them, ops with such
  // arguments keep Python kernels).
  const std::pair<const char*, int> enum_codes[] = {
      {"aoti_torch_layout_strided", static_cast<int>(Layout::kStrided)},
      {"aoti_torch_layout_sparse_coo", static_cast<int>(Layout::kSparse)},
      {"aoti_torch_layout_sparse_csr", static_cast<int>(Layout::kSparseCsr)},
      {"aoti_torch_layout_sparse_csc", static_cast<int>(Layout::kSparseCsc)},
      {"aoti_torch_layout_sparse_bsr", static_cast<int>(Layout::kSparseBsr)},
      {"aoti_torch_layout_sparse_bsc", static_cast<int>(Layout::kSparseBsc)},
      {"aoti_torch_layout__mkldnn", static_cast<int>(Layout::kMkldnn)},
      {"aoti_torch_layout_jagged", static_cast<int>(Layout::kJagged)},
      {"aoti_torch_memory_format_contiguous_format", static_cast<int>(MemoryFormat::kContiguous)},
      {"aoti_torch_memory_format_preserve_format", static_cast<int>(MemoryFormat::kPreserve)},
      {"aoti_torch_memory_format_channels_last", static_cast<int>(MemoryFormat::kChannelsLast)},
      {"aoti_torch_memory_format_channels_last_3d",
       static_cast<int>(MemoryFormat::kChannelsLast3d)},
  };
  s->enum_codes_match = true;
  for (const auto& [name, code] : enum_codes) {
    int32_t value = -1;
    if (!ReadCode(lib, name, &value) || value != code) s->enum_codes_match = false;
  }
  // `lib` stays open: torch never unloads libtorch_cpu, and the functions are used from now on.
  return s;
}

}  // namespace opreg::python
