"""opreg: a custom-operator registry and dispatcher (Python front end).

    import numpy as np, opreg
    x = np.ones((2, 3), np.float32)
    y = opreg.ops.opreg.rms_norm(x, np.ones(3, np.float32), 1e-6)   # NumPy in, ndarray out

Results come back in the framework of the tensor arguments, zero-copy: torch tensors in, torch
tensors out (torch's C DLPack exchange API, no Python-level call per tensor); NumPy arrays in,
NumPy arrays out (dtypes NumPy has; others stay opreg.Tensor); opreg.Tensor otherwise. Inside
`with opreg.returning_opreg_tensors():` every result is an opreg.Tensor.

See `opreg.Library`, `opreg.custom_op`, `opreg.load_library` (C++ kernel libraries, unchanged
TORCH_LIBRARY ones included), `opreg.graph` and `opreg.symm_mem`.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from . import _C
from ._C import (
    OpOverload,
    OpPacket,
    Tensor,
    arange,
    dump_op,
    empty,
    empty_like,
    from_dlpack,
    full,
    list_ops,
    ones,
    schema,
    static_registration_errors,
    zeros,
)
from ._loading import RegistrationError, load_library, loaded_libraries
from ._return_mode import returning_opreg_tensors
from ._ops import ops
from ._schema_objects import FunctionSchema, Tag
from .custom_op import CustomOpDef, custom_op, infer_schema
from .graph import Graph, graph
from .library import Library, opcheck, register_autograd
from . import cuda, symm_mem

__version__: str = _C.__version__




def tensor(data: Any, dtype: Optional[str] = None) -> Tensor:
    """A new CPU tensor holding a copy of `data` (nested lists, numbers, NumPy arrays)."""
    import numpy as np

    if isinstance(data, Tensor):
        return data.clone() if dtype is None or dtype == data.dtype else tensor(data.numpy(), dtype)
    a = np.ascontiguousarray(np.asarray(data, dtype=dtype))
    if dtype is None and a.dtype == np.float64 and not isinstance(data, np.ndarray):
        a = a.astype(np.float32)  # Python floats default to float32, as in torch
    return from_dlpack(a).clone()


__all__ = [
    "CustomOpDef",
    "FunctionSchema",
    "Graph",
    "Library",
    "OpOverload",
    "OpPacket",
    "RegistrationError",
    "Tag",
    "Tensor",
    "arange",
    "cuda",
    "custom_op",
    "dump_op",
    "empty",
    "empty_like",
    "from_dlpack",
    "full",
    "graph",
    "infer_schema",
    "list_ops",
    "load_library",
    "loaded_libraries",
    "ones",
    "opcheck",
    "ops",
    "register_autograd",
    "returning_opreg_tensors",
    "schema",
    "static_registration_errors",
    "symm_mem",
    "tensor",
    "zeros",
    "__version__",
]
