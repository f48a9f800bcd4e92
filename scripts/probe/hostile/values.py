"""Worker side: what a tensor argument means (Logical: shape, dtype, device, values as NumPy),
memory overlap, rounding to a dtype and tolerances, and the strict meanings of scalar
arguments (a value with none raises RefRejects: the call should have been refused)."""
from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Optional, Tuple

from . import frameworks
from .frameworks import np


class RefRejects(Exception):
    """The call should have been refused: an argument has no meaning for the schema."""


class NoReference(Exception):
    """No reference for this accepted call."""


HUGE_NUMEL = 1 << 24  # inputs larger than this are not copied (stride-0 expansions)


@dataclasses.dataclass
class Logical:
    """What a tensor argument means: shape, dtype, device and (when small, on CPU) its values as
    NumPy (conj/neg views resolved)."""

    shape: Tuple[int, ...]
    dtype: str
    device: str
    values: Any = None          # np.ndarray or None (meta, huge, unreadable)
    framework: str = ""

    @property
    def is_meta(self) -> bool:
        return self.device.startswith("meta")


def is_tensor_like(v: Any) -> bool:
    torch, opreg = frameworks.torch, frameworks.opreg
    if np is not None and isinstance(v, np.ndarray):
        return True
    if torch is not None and isinstance(v, torch.Tensor):
        return True
    return opreg is not None and isinstance(v, opreg.Tensor)


def framework_of(v: Any) -> str:
    torch, opreg = frameworks.torch, frameworks.opreg
    if np is not None and isinstance(v, np.ndarray):
        return "numpy"
    if torch is not None and isinstance(v, torch.Tensor):
        return "torch"
    if opreg is not None and isinstance(v, opreg.Tensor):
        return "opreg"
    return type(v).__name__


def logical(v: Any) -> Logical:
    """The Logical of a NumPy array, torch tensor or opreg.Tensor."""
    torch, opreg = frameworks.torch, frameworks.opreg
    if isinstance(v, np.ndarray):
        native = v.dtype.newbyteorder("=") if v.dtype.byteorder not in "=|" else v.dtype
        vals = np.array(v, dtype=native) if v.size <= HUGE_NUMEL else None
        return Logical(tuple(v.shape), native.name, "cpu", vals, "numpy")
    if torch is not None and isinstance(v, torch.Tensor):
        dt = str(v.dtype).replace("torch.", "")
        dev = str(v.device)
        if dev != "cpu" or v.numel() > HUGE_NUMEL:
            return Logical(tuple(v.shape), dt, dev, None, "torch")
        t = v.detach().resolve_conj().resolve_neg()
        try:
            vals = t.numpy().copy()
        except (TypeError, RuntimeError):
            vals = t.to(torch.float64).numpy().copy()
        return Logical(tuple(v.shape), dt, dev, vals, "torch")
    if isinstance(v, opreg.Tensor):
        shape = tuple(v.shape)
        dt, dev = str(v.dtype), str(v.device)
        if dev != "cpu" or v.numel() > HUGE_NUMEL:
            return Logical(shape, dt, dev, None, "opreg")
        try:
            vals = np.array(v.numpy())
        except Exception:
            if torch is None:
                vals = None
            else:
                vals = logical(torch.from_dlpack(v)).values
        return Logical(shape, dt, dev, vals, "opreg")
    raise TypeError(f"not a tensor: {type(v).__name__}")


def same_bits(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return True
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def memory_range(v: Any) -> Optional[Tuple[int, int]]:
    """[first byte, last byte + 1] of the memory a CPU tensor can reach (None: unknown)."""
    torch, opreg = frameworks.torch, frameworks.opreg
    try:
        if isinstance(v, np.ndarray):
            lo, hi = np.lib.array_utils.byte_bounds(v) if hasattr(np.lib, "array_utils") else np.byte_bounds(v)
            return (lo, hi)
        if torch is not None and isinstance(v, torch.Tensor):
            if v.device.type != "cpu":
                return None
            s = v.untyped_storage()
            return (s.data_ptr(), s.data_ptr() + s.nbytes())
        if isinstance(v, opreg.Tensor) and str(v.device) == "cpu":
            return (v.data_ptr(), v.data_ptr() + max(v.nbytes, 1))
    except Exception:
        return None
    return None


def overlaps(a: Any, b: Any) -> bool:
    ra, rb = memory_range(a), memory_range(b)
    return ra is not None and rb is not None and ra[0] < rb[1] and rb[0] < ra[1]


# ---- dtype rounding and tolerances ----------------------------------------------------------

FLOAT_DTYPES = ("float32", "float16", "bfloat16")


def round_to(dtype: str, x: Any) -> Any:
    """float64 values rounded to `dtype` (round to nearest even), back in float64."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        if dtype == "float32":
            return x.astype(np.float32).astype(np.float64)
        if dtype == "float16":
            return x.astype(np.float16).astype(np.float64)
        if dtype == "bfloat16":
            f = x.astype(np.float32)
            bits = f.view(np.uint32).astype(np.uint64)
            rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
            out = rounded.view(np.float32).astype(np.float64)
            return np.where(np.isnan(f), np.nan, out)
    return x


TOLERANCE = {"float32": (2e-4, 1e-5), "float16": (5e-3, 2e-3), "bfloat16": (2e-2, 1e-2)}


def close(got: Any, want: Any, dtype: str) -> Optional[str]:
    """None when got matches want (NaN == NaN, inf == inf), else a description."""
    rtol, atol = TOLERANCE.get(dtype, (0.0, 0.0))
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    with np.errstate(all="ignore"):
        ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    i = tuple(bad[0])
    return (f"{len(bad)} of {ok.size} values differ, e.g. at {list(i)}: got {got[i]!r}, "
            f"want {want[i]!r}")


# ---- strict argument meanings (a value with none should have been refused) ------------------

def as_int(v: Any, what: str) -> int:
    torch = frameworks.torch
    if torch is not None and isinstance(v, torch.Tensor) and v.numel() == 1 and not v.is_floating_point():
        return int(v.item())
    if isinstance(v, (bool, numbers.Integral)) or (np is not None and isinstance(v, np.integer)):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    raise RefRejects(f"{what}={v!r} is not an int")


def as_float(v: Any, what: str) -> float:
    if isinstance(v, (bool, numbers.Real)) or (np is not None and isinstance(v, (np.integer, np.floating))):
        return float(v)
    raise RefRejects(f"{what}={v!r} is not a float")


def as_bool(v: Any, what: str) -> bool:
    if isinstance(v, (bool, numbers.Integral)) or (np is not None and isinstance(v, (np.bool_, np.integer))):
        return bool(v)
    raise RefRejects(f"{what}={v!r} is not a bool")


def as_scalar(v: Any, what: str) -> float:
    if isinstance(v, complex):
        raise RefRejects(f"{what}={v!r} is complex (the tensors are real)")
    return as_float(v, what)


QUANT_DTYPES = {"int8": "int8", "i8": "int8", "torch.int8": "int8",
                "float8_e4m3fn": "float8_e4m3fn", "f8e4m3fn": "float8_e4m3fn",
                "torch.float8_e4m3fn": "float8_e4m3fn"}


def as_quant_dtype(v: Any) -> str:
    """The output dtype per_token_quant's `dtype` argument names; other dtypes are a refusal
    by the op, so they reach here only if wrongly accepted."""
    torch = frameworks.torch
    if torch is not None and isinstance(v, torch.dtype):
        name = str(v)
    elif np is not None and (isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic))):
        name = np.dtype(v).name
    elif isinstance(v, str):
        name = v
    else:
        raise RefRejects(f"dtype={v!r} is not a dtype")
    if name not in QUANT_DTYPES:
        raise RefRejects(f"dtype={v!r}: per_token_quant makes only int8 / float8_e4m3fn")
    return QUANT_DTYPES[name]
