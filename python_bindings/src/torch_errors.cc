// Why a mirror of a torch class: the bridge crosses torch's stable C ABI, which has no error
// kinds (a stable-ABI kernel's error is a std::runtime_error, RuntimeError in Python), and
// opreg links no libtorch, so c10::NotImplementedError cannot be thrown from here. torch's
// Python layer (CATCH_CORE_ERRORS in torch/csrc/Exceptions.h, the exception translator every
// torch.ops call goes through) catches `torch::PyTorchError` and raises `e.python_type()` with
// `e.what()`. That class has been the same since torch 1.x: std::exception plus one new virtual,
// `PyObject* python_type()`, so a class of the same name and shape, thrown here, is caught there
// (the Itanium C++ ABI matches exception types across shared libraries by type name; the
// module's hidden visibility keeps these symbols from interposing torch's). Only the two virtual
// calls cross, and the vtable order they use is fixed by the declaration below.
#include "torch_errors.h"

#include <string>
#include <utility>

#include "module_internal.h"

namespace torch {

// Mirrors torch/csrc/Exceptions.h; do not add members or virtuals.
struct PyTorchError : public std::exception {
  PyTorchError() = default;
  explicit PyTorchError(std::string msg_) : msg(std::move(msg_)) {}
  virtual PyObject* python_type() = 0;
  const char* what() const noexcept override { return msg.c_str(); }
  std::string msg;
};

}  // namespace torch

namespace opreg::python {
namespace {

struct KindedTorchError final : public torch::PyTorchError {
  KindedTorchError(std::string msg, PyObject* type) : PyTorchError(std::move(msg)), type_(type) {}
  PyObject* python_type() override { return type_; }
  PyObject* type_;  // a builtin exception type, never freed
};

}  // namespace

void ThrowForTorch(const Error& e) { throw KindedTorchError(e.what(), ExceptionFor(e.kind())); }

}  // namespace opreg::python
