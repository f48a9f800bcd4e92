"""CUDA devices and streams: which stream opreg's CUDA ops launch on.

Like torch, each thread has a current stream per device, the legacy default stream until set.
opreg's CUDA kernels launch on it and its CUDA allocator allocates on it, without synchronizing,
so opreg ops can run on a torch stream::

    s = torch.cuda.Stream()
    with opreg.cuda.stream(s):          # or a raw cudaStream_t value (int)
        y = opreg.ops.opreg.rms_norm(x, w, 1e-6)

opreg never creates or destroys streams: a stream must outlive the work queued on it and the
tensors allocated while it was current.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

from . import _C

__all__ = ["current_stream", "device_count", "is_available", "set_stream", "stream"]


def device_count() -> int:
    """Visible CUDA devices (0 without a driver, a GPU, or a CUDA build of opreg)."""
    return _C._cuda_device_count()


def is_available() -> bool:
    """True when opreg can run CUDA ops here."""
    return device_count() > 0


def current_stream(device: int = 0) -> int:
    """This thread's current stream on `device`, as a cudaStream_t value (0: legacy stream)."""
    return _C._cuda_current_stream(device)


def _handle_and_device(s: Any, device: Optional[int]) -> "tuple[int, int]":
    """(cudaStream_t value, device index) of `s`: None, an int, or a torch-style stream."""
    if s is None or (isinstance(s, int) and not isinstance(s, bool)):
        return (s or 0), (0 if device is None else device)
    if not hasattr(s, "cuda_stream"):
        raise TypeError(
            "opreg.cuda.stream: expected a cudaStream_t value (int), None, or an object with a "
            f"'cuda_stream' attribute such as torch.cuda.Stream; got {type(s).__name__}")
    if device is None:
        device = getattr(getattr(s, "device", None), "index", None)
    return int(s.cuda_stream), (0 if device is None else device)


def set_stream(s: Any, device: Optional[int] = None) -> None:
    """Makes `s` this thread's current stream on `device` (default: the stream's own, else 0)."""
    handle, dev = _handle_and_device(s, device)
    _C._cuda_set_stream(dev, handle)


@contextlib.contextmanager
def stream(s: Any, device: Optional[int] = None) -> Iterator[None]:
    """Runs the block with `s` as the current stream on `device`, then restores the previous one."""
    handle, dev = _handle_and_device(s, device)
    previous = _C._cuda_current_stream(dev)
    _C._cuda_set_stream(dev, handle)
    try:
        yield
    finally:
        _C._cuda_set_stream(dev, previous)
