"""opreg.returning_opreg_tensors, in a module of its own so that opreg's modules can use it
without importing the package's __init__ (no import cycle)."""
from __future__ import annotations

import contextlib
from typing import Iterator

from . import _C


@contextlib.contextmanager
def returning_opreg_tensors(enabled: bool = True) -> Iterator[None]:
    """Op calls on this thread return opreg.Tensor results inside the block, whatever framework
    their tensor arguments came from (torch, NumPy); `enabled=False` restores the default."""
    old = _C._set_return_opreg_tensors(enabled)
    try:
        yield
    finally:
        _C._set_return_opreg_tensors(old)
