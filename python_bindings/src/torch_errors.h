// opreg errors thrown out of a bridged kernel into torch's dispatcher, as torch's Python layer
// would raise them for a libtorch kernel: a TORCH_CHECK_NOT_IMPLEMENTED (ErrorKind
// kNotImplemented) arrives in Python as NotImplementedError, kIndex as IndexError, kValue as
// ValueError, kType as TypeError, kKey as KeyError, anything else as RuntimeError.
//
// Thread safety: stateless; call from any thread that is unwinding an opreg kernel call.
#ifndef OPREG_PYTHON_BINDINGS_SRC_TORCH_ERRORS_H_
#define OPREG_PYTHON_BINDINGS_SRC_TORCH_ERRORS_H_

#include "opreg/core/error.h"

namespace opreg::python {

// Throws an exception that torch's Python error translation maps to the Python exception of
// `e.kind()`, with `e.what()` as its message. Never returns.
[[noreturn]] void ThrowForTorch(const Error& e);

}  // namespace opreg::python

#endif  // OPREG_PYTHON_BINDINGS_SRC_TORCH_ERRORS_H_
