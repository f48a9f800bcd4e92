"""`opreg.symm_mem`: symmetric memory between processes on one machine (host backend).

Every rank (a process) creates the same group over a shared store directory, allocates the same
symmetric tensors in the same order, and runs the collectives together:

    import opreg, opreg.symm_mem as sm
    sm.create_group("tp", rank, world_size, store_dir)      # collective
    x = sm.empty((1024,), "float32", "tp")                  # collective: same sizes, same order
    x.numpy()[:] = ...
    y = sm.one_shot_all_reduce(x, "tp")                     # every rank gets the same bits
    sm.destroy_group("tp")                                  # collective

Reductions accumulate in float32 in rank order 0..world-1 and round once, so every rank's
result is bitwise identical. Every wait has a timeout (the group's `timeout_s`, 30 s by
default): an absent or dead peer raises RuntimeError naming the peer, never hangs. Blocking
calls release the GIL. An unknown group name raises KeyError; a collective whose input is not
symmetric raises ValueError naming the op and the argument.

The collectives are the ops `opreg.ops.symm_mem.*` (also callable directly, with their schema
argument order); the functions here give them Pythonic argument orders and defaults.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Dict, Iterator, Optional, Union

from . import _C
from ._C import Tensor

try:
    from ._C import _symm_mem as _sm
except ImportError as e:  # pragma: no cover - builds without opreg::symm_mem
    raise ImportError("opreg.symm_mem: this build of opreg has no symmetric-memory library "
                      "(opreg::symm_mem was not built)") from e

from ._ops import ops

FileStore = _sm.FileStore
SymmetricMemory = _sm.SymmetricMemory

StoreLike = Union[str, "os.PathLike[str]", _sm.FileStore]


# ---- groups ---------------------------------------------------------------------------------

def create_group(name: str, rank: int, world_size: int, store: StoreLike, *,
                 timeout_s: Optional[float] = None, heap_bytes: Optional[int] = None,
                 max_channels: Optional[int] = None) -> None:
    """Collective: creates group `name`, this process being `rank` of `world_size`.

    `store` is a directory every rank sees (or a FileStore over one). `timeout_s` is the
    default timeout of the group's waits (bootstrap, allocations, collectives); `heap_bytes`
    the size of each rank's heap (256 MiB by default, committed only when touched);
    `max_channels` the signal channels per allocation (32 by default).
    """
    _sm.create_group(name, rank, world_size, store, timeout_s, heap_bytes, max_channels)


def destroy_group(name: str) -> None:
    """Collective: unregisters group `name` and removes its store keys. Symmetric tensors of
    the group stay valid (their memory is unmapped when the last one dies)."""
    _sm.destroy_group(name)


def group_exists(name: str) -> bool:
    """True when group `name` is registered in this process."""
    return _sm.group_exists(name)


def group_info(name: str) -> Dict[str, Any]:
    """name, rank, world_size, heap_bytes, max_channels, timeout_s, live_allocations."""
    return dict(_sm.group_info(name))


@contextlib.contextmanager
def group(name: str, rank: int, world_size: int, store: StoreLike, *,
          timeout_s: Optional[float] = None, heap_bytes: Optional[int] = None,
          max_channels: Optional[int] = None) -> Iterator[str]:
    """`with group(...) as name:` creates the group and destroys it on exit (both collective)."""
    create_group(name, rank, world_size, store, timeout_s=timeout_s, heap_bytes=heap_bytes,
                 max_channels=max_channels)
    try:
        yield name
    finally:
        destroy_group(name)


# ---- symmetric tensors ----------------------------------------------------------------------

def empty(shape: Any, dtype: Any, group_name: str) -> Tensor:
    """Collective: a contiguous CPU tensor (uninitialized) in the symmetric heap of
    `group_name`. Every rank must allocate the same shapes and dtypes in the same order."""
    return _sm.empty(shape, dtype, group_name)


def is_symmetric(tensor: Any) -> bool:
    """True when `tensor` is an opreg.Tensor in a live group's symmetric heap."""
    return _sm.is_symmetric(tensor)


def rendezvous(tensor: Tensor) -> SymmetricMemory:
    """The handle of the symmetric allocation holding `tensor` (local; allocations rendezvous
    when they are made): rank, world_size, barrier, put_signal, wait_signal, buffer(rank)."""
    return _sm.rendezvous(tensor)


# ---- collectives (opreg.ops.symm_mem.*) ------------------------------------------------------

def one_shot_all_reduce(input: Tensor, group_name: str, reduce_op: str = "sum", *,
                        out: Any = None) -> Tensor:
    """Sum over ranks of the symmetric `input`; into `out` (any contiguous CPU tensor or
    NumPy array of the same shape and dtype) when given, else into a new tensor."""
    if out is None:
        return ops.symm_mem.one_shot_all_reduce(input, reduce_op, group_name)
    return ops.symm_mem.one_shot_all_reduce_out(input, reduce_op, group_name, out)


def two_shot_all_reduce_(input: Tensor, group_name: str, reduce_op: str = "sum") -> None:
    """In place: the symmetric `input` becomes the sum over ranks."""
    ops.symm_mem.two_shot_all_reduce_(input, reduce_op, group_name)


def all_gather_into(out: Any, input: Tensor, group_name: str) -> Tensor:
    """`out` = the ranks' `input`s concatenated along dim 0 (out: [world * n, ...])."""
    return ops.symm_mem.all_gather_out(input, group_name, out)


def reduce_scatter_into(out: Any, input: Tensor, group_name: str,
                        reduce_op: str = "sum") -> Tensor:
    """`out` = this rank's chunk (flat, numel / world elements) of the sum over ranks."""
    return ops.symm_mem.reduce_scatter_out(input, reduce_op, group_name, out)


def fused_all_reduce_add_rms_norm_(input: Tensor, residual: Any, weight: Any, eps: float,
                                   group_name: str) -> None:
    """In place: input = all_reduce(input); residual += input; input = rms_norm(residual) *
    weight (the arithmetic of opreg::fused_add_rms_norm_)."""
    ops.symm_mem.fused_all_reduce_add_rms_norm_(input, residual, weight, eps, group_name)


__all__ = [
    "FileStore",
    "SymmetricMemory",
    "all_gather_into",
    "create_group",
    "destroy_group",
    "empty",
    "fused_all_reduce_add_rms_norm_",
    "group",
    "group_exists",
    "group_info",
    "is_symmetric",
    "one_shot_all_reduce",
    "reduce_scatter_into",
    "rendezvous",
    "two_shot_all_reduce_",
]
