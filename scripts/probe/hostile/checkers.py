"""Worker side: the checkers API probes name in their `expect` expression (chk_*, sm_ok). Each
returns None (ok), "unchecked: why" (ok-unchecked) or what is wrong."""
from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Sequence

from . import frameworks
from .frameworks import np
from .model import _short
from .values import Logical, close, is_tensor_like, logical, round_to


def chk_tensor(r: Any, shape: Sequence[int], dtype: str, fill: Any = None) -> Optional[str]:
    """r is a CPU tensor of `shape` and `dtype` (all `fill` when given; NaN matches NaN)."""
    lg = logical(r)
    if tuple(lg.shape) != tuple(shape):
        return f"shape {list(lg.shape)}, want {list(shape)}"
    if lg.dtype != dtype:
        return f"dtype {lg.dtype}, want {dtype}"
    if fill is not None and lg.values is not None and lg.values.size:
        v = np.asarray(lg.values, np.float64)
        if not (np.isnan(fill) and np.isnan(v).all()) and not (v == fill).all():
            return f"values {v.ravel()[:4].tolist()}..., want all {fill!r}"
    return None


def chk_values(r: Any, want: Any, dtype: Optional[str] = None) -> Optional[str]:
    """r holds exactly the values (and shape) of `want` (a NumPy array or a tensor)."""
    lg = logical(r)
    w = logical(want) if is_tensor_like(want) else Logical(np.shape(want), "", "cpu", np.asarray(want))
    if tuple(lg.shape) != tuple(w.shape):
        return f"shape {list(lg.shape)}, want {list(w.shape)}"
    if dtype and lg.dtype != dtype:
        return f"dtype {lg.dtype}, want {dtype}"
    if lg.values is None or w.values is None:
        return "unchecked: values unreadable"
    a = np.asarray(lg.values, np.float64 if np.asarray(lg.values).dtype.kind != "c" else np.complex128)
    b = np.asarray(w.values, a.dtype)
    if a.tobytes() != b.tobytes() and not np.array_equal(a, b, equal_nan=True):
        return f"values {a.ravel()[:4].tolist()}... differ from {b.ravel()[:4].tolist()}..."
    return None


def chk_schema(qualified: str, text: str) -> Optional[str]:
    """A defined op's canonical schema re-parses to itself and, when torch is here and parses the
    text, equals torch's str(parse_schema(text))."""
    opreg = frameworks.opreg
    canon = str(opreg.schema(qualified))
    again = str(opreg._C._schema_info(canon)["name"]) if canon else ""
    if not again:
        return f"canonical form {canon!r} does not re-parse"
    ref = torch_canonical(text, qualified.split("::")[0])
    if ref is None and canon == f"{qualified.split('::')[0]}::{text}":
        return None  # the text was canonical already (long names), and came back unchanged
    if ref is None:
        return "unchecked: torch absent or its parser is not run on this text"
    if ref.startswith("torch rejects: "):
        return f"unchecked: opreg accepts, {ref} (canonical {_short(canon, 120)!r})"
    if ref != canon:
        return f"canonical {_short(canon, 200)!r} != torch's {_short(ref, 200)!r}"
    return None


def torch_canonical(text: str, ns: str) -> Optional[str]:
    """torch's canonical form of `text` (namespace `ns` prefixed), "torch rejects: ..." when
    its parser refuses it, None when torch is absent or the text is too hostile to hand to
    torch's (recursive) parser in this process."""
    torch = frameworks.torch
    if torch is None or len(text) > 4000 or text.count("(") + text.count("[") > 64 or "\0" in text:
        return None
    full = text if "::" in text.split("(")[0] else f"{ns}::{text}"
    try:
        return str(torch._C.parse_schema(full))
    except Exception as e:
        return "torch rejects: " + _short(str(e).splitlines()[0] if str(e) else type(e).__name__, 120)


def chk_library_ns(lib: Any) -> Optional[str]:
    """An op defined in a Library of a hostile namespace is found under `ns::f`, with that
    schema, and only one op answers to the name."""
    qualified = f"{lib.ns}::f"
    try:
        canon = str(frameworks.opreg.schema(qualified))
    except Exception as e:
        return f"defined {_short(qualified, 60)!r}, then lookup failed: {type(e).__name__}: {_short(str(e), 120)}"
    if canon != f"{qualified}(Tensor x) -> Tensor":
        return f"schema of {_short(qualified, 60)!r} is {_short(canon, 120)!r}"
    if "::" in lib.ns or not lib.ns:
        return f"unchecked: namespace {lib.ns!r} accepted; the op is {_short(qualified, 60)!r}"
    return None


def chk_custom(op: Any, x: Any, want: Any) -> Optional[str]:
    """Calling the custom op on x gives want."""
    return chk_values(op(x), want)


def chk_ctor(r: Any, shape: Any) -> Optional[str]:
    """An accepted shape must be ints in range with the element count fitting int64."""
    try:
        dims = [shape] if isinstance(shape, numbers.Integral) else list(shape)
        want = []
        for d in dims:
            if isinstance(d, bool):
                want.append(int(d))
                continue
            if not isinstance(d, (numbers.Integral, np.integer)):
                return f"accepted the non-int size {d!r}"
            want.append(int(d))
    except TypeError:
        return f"accepted the non-sequence shape {shape!r}"
    if any(d < 0 for d in want):
        return f"accepted a negative size: shape {list(r.shape)}"
    numel = 1
    for d in want:
        numel *= d
    if numel * 4 >= 2**63:
        return f"accepted {numel} elements (bytes overflow int64): shape {list(r.shape)}"
    if list(r.shape) != want:
        return f"shape {list(r.shape)}, want {want}"
    return None


DTYPE_ALIASES = {"f32": "float32", "float": "float32", "f16": "float16", "half": "float16",
                 "bf16": "bfloat16", "i8": "int8", "f8e4m3fn": "float8_e4m3fn", "f64": "float64",
                 "double": "float64", "c64": "complex64", "b8": "bool"}


def chk_dtype_echo(r: Any, shape: Any, dt: Any) -> Optional[str]:
    """An accepted dtype spelling must name the dtype the tensor got."""
    if tuple(r.shape) != tuple(shape):
        return f"shape {list(r.shape)}, want {list(shape)}"
    if isinstance(dt, type) and issubclass(dt, np.generic):
        return None if np.dtype(dt).name == str(r.dtype) else f"{dt} gave dtype {r.dtype}"
    if isinstance(dt, str):
        name = dt[len("torch."):] if dt.startswith("torch.") else dt
        name = DTYPE_ALIASES.get(name, name)
        if name == str(r.dtype):
            return None
        if name.lower() == str(r.dtype):
            return f"unchecked: {dt!r} accepted case-insensitively as {r.dtype}"
        return f"accepted the dtype {_short(repr(dt), 60)} as {r.dtype}"
    return f"accepted the dtype {dt!r} ({type(dt).__name__}) as {r.dtype}"


def chk_accepted(r: Any) -> Optional[str]:
    return f"unchecked: accepted, returned {_short(repr(r), 100)}"


def chk_full(r: Any, value: Any, dtype: str) -> Optional[str]:
    """full: every element equals `value` converted to `dtype`; values the dtype cannot hold
    (out of range, non-integral for integer dtypes) must be refused, not wrapped."""
    lg = logical(r)
    if lg.dtype != dtype.replace("'", "") and lg.dtype != dtype:
        return f"dtype {lg.dtype}, want {dtype}"
    v = np.asarray(lg.values)
    if dtype == "bool":
        return None if isinstance(value, (bool, numbers.Real)) and (v == bool(value)).all() else \
            f"filled bool with {v.ravel()[:1].tolist()} for {value!r}"
    if dtype in ("int8", "uint8", "int32", "int64"):
        if not isinstance(value, (bool, numbers.Real)) or not math.isfinite(value):
            return f"filled {dtype} with {v.ravel()[:1].tolist()} for {value!r}"
        # A finite float is truncated toward zero, as np.full and torch.full do; a value out of
        # the dtype's range must be refused (NumPy and torch refuse it), not saturated.
        want = int(value)
        info = (np.iinfo(dtype).min, np.iinfo(dtype).max)
        if not info[0] <= want <= info[1]:
            return f"filled {dtype} with {v.ravel()[:1].tolist()} for {value!r}, which {dtype} cannot hold"
        return None if (v.astype(object) == want).all() else f"values {v.tolist()}, want {want!r}"
    if not isinstance(value, (bool, numbers.Real)):
        return f"accepted the fill value {value!r}"
    want = round_to(dtype, np.full(v.shape, float(value)))
    if dtype == "float8_e4m3fn":
        return "unchecked: float8 values"
    return close(np.asarray(v, np.float64), want, "float32") and f"values {v.tolist()}, want {want.tolist()}"


def chk_arange(r: Any, end: Any, dtype: Optional[str] = None) -> Optional[str]:
    if not isinstance(end, (numbers.Integral,)) or isinstance(end, bool):
        if isinstance(end, bool):
            return chk_values(r, np.arange(int(end)))
        return f"accepted the non-int end {end!r}: shape {list(r.shape)}"
    if end < 0:
        return f"accepted a negative end: shape {list(r.shape)}"
    if end > 10**7:
        return f"accepted arange({end}): shape {list(r.shape)}" if list(r.shape) != [end] else \
            f"unchecked: arange({end}) allocated"
    if dtype and end - 1 > np.iinfo(dtype).max:
        return f"arange({end}) in {dtype}: values up to {end - 1} do not fit, got {logical(r).values.ravel()[-3:].tolist()}"
    return chk_values(r, np.arange(end))


def chk_tensor_data(r: Any) -> Optional[str]:
    return "unchecked: opreg.tensor of hostile data accepted" if r is not None else "None returned"


def sm_ok(r: Any, name: str) -> Optional[str]:
    """A group created with odd parameters: it exists and can be destroyed."""
    import opreg.symm_mem as sm
    if not sm.group_exists(name):
        return f"create_group returned but group {name[:40]!r} does not exist"
    info = sm.group_info(name)
    sm.destroy_group(name)
    return f"unchecked: accepted, group_info {_short(str(info), 200)}"
