// opreg._torch_native: registers opreg ops as the CPU/CUDA kernels of torch ops through torch's
// own C++ API (torch::Library), for the torch this module was built against; opreg.torch's
// _kernels chooses it over the stable-ABI bridge (src/torch_bridge.cc) when the running torch is
// that torch. The functions mirror the bridge's `_torch_bridge_*` ones. Called from Python with
// the GIL held (which serialises them); torch calls the kernels from any thread.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/library.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "native_kernel.h"
#include "native_values.h"
#include "opreg/core/string_util.h"

namespace py = pybind11;

namespace opreg::torch_native {
namespace {

// The torch IMPL libraries holding an owner's kernels, one per torch op and key: deleting one
// takes its kernel out of torch's dispatcher. The owner is the torch op whose kernels opreg.torch
// registered ("ns::name[.overload]"; an op and its companion share one).
struct ImplLibrary {
  std::string torch_name;
  std::string key;
  std::unique_ptr<torch::Library> lib;
};

absl::flat_hash_map<std::string, std::vector<ImplLibrary>>& Owners() {
  static auto* owners = new absl::flat_hash_map<std::string, std::vector<ImplLibrary>>();
  return *owners;
}

std::string Impl(const std::string& opreg_name, const std::string& torch_ns,
                 const std::string& torch_name, const std::vector<std::string>& keys,
                 const std::string& owner) {
  std::optional<OperatorHandle> op = Dispatcher::Get().FindOp(opreg_name);
  if (!op) return StrCat("no opreg op ", opreg_name);
  if (op->schema().is_vararg() || op->schema().is_varret()) return "varargs";
  std::vector<c10::DispatchKey> parsed;
  for (const std::string& key : keys) {
    try {
      parsed.push_back(c10::parseDispatchKey(key));
    } catch (const c10::Error&) {
      return StrCat("no torch dispatch key ", key);
    }
  }
  std::vector<ImplLibrary>& libs = Owners()[owner];
  for (size_t i = 0; i < keys.size(); ++i) {
    auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, torch_ns, parsed[i],
                                                __FILE__, __LINE__);
    lib->impl(torch_name.c_str(),
              torch::CppFunction::makeFromBoxedFunctor(std::make_unique<NativeKernel>(*op)));
    libs.push_back(ImplLibrary{torch_name, keys[i], std::move(lib)});
  }
  return "";
}

// Deletes the owner's kernels for torch op `torch_name` and key `key` (each empty: any).
bool Release(const std::string& owner, const std::string& torch_name, const std::string& key) {
  auto it = Owners().find(owner);
  if (it == Owners().end()) return true;
  std::vector<ImplLibrary>& libs = it->second;
  for (size_t i = libs.size(); i-- > 0;) {
    if ((torch_name.empty() || libs[i].torch_name == torch_name) &&
        (key.empty() || libs[i].key == key)) {
      libs.erase(libs.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return true;
}

}  // namespace
}  // namespace opreg::torch_native

PYBIND11_MODULE(_torch_native, m) {
  namespace tn = opreg::torch_native;
  m.doc() = "opreg.torch's kernels built against one torch's C++ API (see opreg.torch._kernels).";
  m.attr("TORCH_VERSION") = OPREG_TORCH_NATIVE_TORCH_VERSION;
  m.def("impl", &tn::Impl, py::arg("opreg_name"), py::arg("torch_ns"), py::arg("torch_name"),
        py::arg("keys"), py::arg("owner"),
        "Registers the opreg op `opreg_name` as the kernel of torch op `torch_ns::torch_name` "
        "for each dispatch key in `keys`, kept for `owner` (see release); returns '' on "
        "success, else why not.");
  m.def("release", &tn::Release, py::arg("owner"), py::arg("torch_name") = "",
        py::arg("key") = "",
        "Deletes the kernels registered for `owner`, only those of torch op `torch_name` and "
        "dispatch key `key` where given; always True.");
  m.def("live_results", &tn::LiveResults,
        "How many torch tensors made from opreg results torch has not freed yet.");
}
