"""The input helpers probe source text and repro lines use: rnd / trnd / otnd (seeded NumPy /
torch / opreg tensors), ro (read-only), misaligned, nanify, zcplx."""
from __future__ import annotations

import math
from typing import Any

from . import frameworks
from .frameworks import np


def rnd(shape: Any, dtype: str = "float32", seed: int = 0) -> Any:
    """A NumPy array of `shape` and `dtype` with reproducible values (small ints for integer
    dtypes, normal floats otherwise)."""
    g = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(g.integers(0, 2, shape)).astype(dt)
    if dt.kind in "iu":
        return np.asarray(g.integers(0 if dt.kind == "u" else -5, 6, shape)).astype(dt)
    if dt.kind == "c":
        return np.asarray(g.standard_normal(shape) + 1j * g.standard_normal(shape)).astype(dt)
    return np.asarray(g.standard_normal(shape)).astype(dt)


def ro(a: Any) -> Any:
    """A read-only copy of a NumPy array."""
    a = np.array(a)
    a.flags.writeable = False
    return a


def misaligned(shape: Any, dtype: str = "float32", seed: int = 0) -> Any:
    """rnd(shape, dtype, seed) stored at an odd address."""
    a = rnd(shape, dtype, seed)
    raw = np.zeros(a.nbytes + 1, np.uint8)
    m = raw[1:].view(a.dtype).reshape(a.shape)
    m[...] = a
    return m


def nanify(a: Any) -> Any:
    """`a` with NaN, +inf and -inf at its first three elements (NumPy or torch)."""
    flat = a.reshape(-1)
    for i, v in enumerate((math.nan, math.inf, -math.inf)):
        if i < flat.shape[0]:
            flat[i] = v
    return a


def otnd(shape: Any, dtype: str = "float32", seed: int = 0) -> Any:
    """An opreg.Tensor owning a copy of rnd(shape, dtype, seed)."""
    return frameworks.opreg.from_dlpack(np.require(rnd(shape, dtype, seed), requirements="C")).clone()


_TORCH_ONLY_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def trnd(shape: Any, dtype: str = "float32", seed: int = 0, device: str = "cpu") -> Any:
    """A torch tensor with the values of rnd(shape, dtype, seed) (float32 values converted for
    torch-only dtypes); device "meta" gives an empty meta tensor."""
    torch = frameworks.torch
    tdt = getattr(torch, dtype)
    if device == "meta":
        return torch.empty(shape, dtype=tdt, device="meta")
    if dtype in _TORCH_ONLY_DTYPES:
        return torch.from_numpy(rnd(shape, "float32", seed)).to(tdt)
    return torch.from_numpy(np.require(rnd(shape, dtype, seed), requirements="C"))


def zcplx(shape: Any, seed: int = 0) -> Any:
    """A complex64 torch tensor (for z.conj() and z.conj().imag views)."""
    return frameworks.torch.complex(trnd(shape, "float32", seed), trnd(shape, "float32", seed + 1))
