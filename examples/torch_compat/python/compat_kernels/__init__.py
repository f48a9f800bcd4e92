"""compat_kernels: the Python package of examples/torch_compat, as a torch extension ships one.

It loads the compiled library that sits next to it (libcompat_kernels.so, built against libtorch
or against another runtime of the same C++ API) with torch.ops.load_library, then registers the
fake and autograd formulas of its functional ops from Python (see ops.py). It is plain torch
code: nothing in it knows which runtime the library was built for.
"""
from pathlib import Path

import torch

_HERE = Path(__file__).resolve().parent
_LIBRARIES = sorted(_HERE.glob("libcompat_kernels*.so"))
if not _LIBRARIES:
    raise ImportError(f"compat_kernels: no libcompat_kernels*.so in {_HERE}; build "
                      "examples/torch_compat and copy the library here")
torch.ops.load_library(str(_LIBRARIES[0]))

from . import ops  # noqa: E402  (registers with torch; needs the library's ops loaded)
from .ops import muladd  # noqa: E402

__all__ = ["muladd", "ops"]
