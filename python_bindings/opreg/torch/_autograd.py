"""register_autograd for opreg's torch ops: the Python autograd kernel torch.library makes, in a
torch Library of its own that the op's record keeps (a later call replaces it, a redefinition of
the op destroys it). An op without one has no autograd kernel at all, as a native TORCH_LIBRARY
op without one: torch's C++ autograd fallback runs, with no Python frame. An op made by
opreg.custom_op is the exception, as with torch.library.custom_op: without a formula a backward
through it raises (refuse_backward).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from ._records import RECORDS, TorchOpRecord


def register_autograd(qualified: str, backward: Callable[..., Any],
                      setup_context: Optional[Callable[..., Any]]) -> None:
    """Gives registered torch op `qualified` the autograd formula, replacing an earlier one."""
    with RECORDS.lock:
        record = RECORDS.get(qualified)
        if record is None or record.torch_op is None:
            raise RuntimeError(f"{qualified} is not a torch op")
        _install(record, backward, setup_context)


def refuse_backward(record: TorchOpRecord) -> None:
    """What torch.library.custom_op gives an op without a formula, for an op made by
    opreg.custom_op (a Python kernel already, so its Python autograd kernel adds no frame to a C++
    call path): torch's own autograd kernel with no backward, so a backward through the op raises
    torch's "no autograd formula was registered" instead of the fallback's warning and a silently
    missing gradient. It is registered below torch.library's bookkeeping (the C++ Library
    object), so a later register_autograd, opreg's or torch.library's, replaces it. Ops
    torch.library.register_autograd would refuse (non-functional, kwarg-only tensors) keep the
    fallback."""
    op = record.torch_op
    utils = torch._library.utils
    if not utils.is_functional_schema(op._schema) or utils.has_kwarg_only_tensors(op._schema):
        _drop(record)  # no formula: torch's fallback, as for a new op
        return
    no_formula = torch._library.autograd.Info(None, None)
    kernel = torch._library.autograd.make_autograd_impl(op, no_formula)
    lib = _new_autograd_lib(record)
    lib.m.impl(record.qualified.split("::", 1)[1], "Autograd", kernel, True)


def _drop(record: TorchOpRecord) -> None:
    previous, record.autograd_lib = record.autograd_lib, None
    if previous is not None:
        previous._destroy()


def _new_autograd_lib(record: TorchOpRecord) -> torch.library.Library:
    """The record's autograd Library, new: the previous one (and its formula) destroyed."""
    _drop(record)
    record.autograd_lib = torch.library.Library(record.qualified.split("::", 1)[0], "FRAGMENT")
    return record.autograd_lib


def _install(record: TorchOpRecord, backward: Callable[..., Any],
             setup_context: Optional[Callable[..., Any]]) -> None:
    torch.library.register_autograd(record.torch_op, backward, setup_context=setup_context,
                                    lib=_new_autograd_lib(record))
