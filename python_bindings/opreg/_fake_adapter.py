"""A fake given to `register_fake` (torch.library's meaning: a function of tensors returning
tensors of the outputs' shapes and dtypes) as the op's opreg Meta kernel.

opreg's Meta key calls it with opreg meta tensors. A fake written for opreg (`x.new_empty`,
`opreg.empty_like(x)`) runs on them as it is; one written for torch (`torch.empty_like(x)`),
which refuses opreg tensors, is called again with torch meta tensors of the same layouts when
torch is imported, and its torch results come back as opreg meta tensors. Fakes are pure, so
the second call is safe; when both fail the first error is raised. opreg.torch gives torch the
same function as the op's torch-level fake (`FAKES` in _op_events), so torch tracing calls it
with FakeTensors directly and their sizes stay symbolic. (The torch results come back
contiguous: opreg's Meta kernels give the shapes and dtypes of new contiguous outputs.)
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from . import _C


def _any_opreg_tensor(value: Any) -> bool:
    if isinstance(value, _C.Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_any_opreg_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_any_opreg_tensor(v) for v in value.values())
    return False


def torch_meta_like(torch: Any, t: Any) -> Any:
    """A torch meta tensor of opreg tensor `t`'s shape, strides and dtype."""
    return torch.empty_strided(t.shape, t.strides, dtype=getattr(torch, t.dtype), device="meta")


def opreg_meta_like(t: Any) -> Any:
    """An opreg meta tensor of torch tensor `t`'s shape and dtype, contiguous (as opreg's Meta
    kernels' returns are; opreg has no strided meta factory)."""
    return _C.empty(list(t.shape), str(t.dtype), "meta")


def _to_torch(torch: Any, value: Any) -> Any:
    if isinstance(value, _C.Tensor):
        return torch_meta_like(torch, value)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_torch(torch, v) for v in value)
    return value


def _to_opreg(torch: Any, value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return opreg_meta_like(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_opreg(torch, v) for v in value)
    return value


def meta_kernel_of(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The opreg Meta kernel that runs the fake `fn` (see the module's docstring)."""

    def meta_kernel(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as first:
            torch = sys.modules.get("torch")
            if torch is None or not (_any_opreg_tensor(args) or _any_opreg_tensor(kwargs)):
                raise
            try:
                result = fn(*_to_torch(torch, args),
                            **{k: _to_torch(torch, v) for k, v in kwargs.items()})
            except Exception:
                raise first from None
            return _to_opreg(torch, result)

    meta_kernel.__name__ = getattr(fn, "__name__", "fake")
    meta_kernel.__wrapped__ = fn  # type: ignore[attr-defined]
    return meta_kernel
