"""Worker side: the built-in ops' signatures (OPS), Python-style binding of a call (bind), a
NumPy reference per op (REFERENCES) and compare() of a result with the reference."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .frameworks import np
from .values import (FLOAT_DTYPES, Logical, NoReference, RefRejects, as_bool, as_float, as_int,
                     as_quant_dtype, as_scalar, close, round_to, same_bits)


# ---- the built-in ops: signatures and references --------------------------------------------

class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: str                 # "Tensor", "Tensor?", "Scalar", "float", "int", "bool", "ScalarType"
    kwonly: bool = False
    default: Any = REQUIRED


@dataclasses.dataclass(frozen=True)
class OpDef:
    params: Tuple[Param, ...]
    outs: Tuple[str, ...] = ()      # out arguments of the .out overload
    writes: Tuple[str, ...] = ()    # arguments the default overload writes (in-place ops)

    def signature(self, overload: str) -> Tuple[Param, ...]:
        if overload == "out":
            return self.params + tuple(Param(n, "Tensor", kwonly=True) for n in self.outs)
        return self.params

    def written(self, overload: str) -> Tuple[str, ...]:
        return self.outs if overload == "out" else self.writes


def _t(name: str) -> Param:
    return Param(name, "Tensor")


OPS: Dict[str, OpDef] = {
    "add": OpDef((_t("self"), _t("other"), Param("alpha", "Scalar", True, 1)), ("out",)),
    "mul": OpDef((_t("self"), _t("other")), ("out",)),
    "split_add": OpDef((_t("x"), _t("y")), ("out0", "out1")),
    "rms_norm": OpDef((_t("input"), _t("weight"), Param("eps", "float", False, 1e-6)), ("out",)),
    "fused_add_rms_norm_": OpDef((_t("input"), _t("residual"), _t("weight"),
                                  Param("eps", "float", False, 1e-6)), (), ("input", "residual")),
    "silu_and_mul": OpDef((_t("x"),), ("out",)),
    "per_token_quant": OpDef((_t("x"), Param("dtype", "ScalarType")), ("q", "scale")),
    "topk": OpDef((_t("x"), Param("k", "int"), Param("dim", "int", False, -1),
                   Param("largest", "bool", False, True)), ("values", "indices")),
    "softmax": OpDef((_t("x"), Param("dim", "int", False, -1)), ("out",)),
    "linear": OpDef((_t("x"), _t("weight"), Param("bias", "Tensor?", False, None)), ("out",)),
}


def bind(params: Sequence[Param], args: Sequence[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """Python-style binding of a call to a schema; raises TypeError like the op should."""
    positional = [p for p in params if not p.kwonly]
    if len(args) > len(positional):
        raise TypeError(f"{len(args)} positional arguments for {len(positional)} parameters")
    bound: Dict[str, Any] = {p.name: a for p, a in zip(positional, args)}
    names = {p.name for p in params}
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"unexpected keyword argument {k!r}")
        if k in bound:
            raise TypeError(f"multiple values for argument {k!r}")
        bound[k] = v
    for p in params:
        if p.name not in bound:
            if p.default is REQUIRED:
                raise TypeError(f"missing argument {p.name!r}")
            bound[p.name] = p.default
    return bound


@dataclasses.dataclass
class Expected:
    """One output: its shape and dtype, and its values (float64) or a checker of them."""

    shape: Tuple[int, ...]
    dtype: str
    values: Any = None
    check: Optional[Callable[[Any, List[Logical]], Optional[str]]] = None


def _vals(b: Dict[str, Logical], name: str) -> Any:
    lg = b[name]
    if lg.values is None:
        raise NoReference(f"argument '{name}' has no readable values ({lg.device}, {lg.shape})")
    return np.asarray(lg.values, np.float64) if np.asarray(lg.values).dtype.kind != "c" else lg.values


def _need_float(b: Dict[str, Logical], name: str) -> str:
    dt = b[name].dtype
    if dt not in FLOAT_DTYPES:
        raise RefRejects(f"'{name}' has dtype {dt}; the op computes only in f32/f16/bf16")
    return dt


def _same_dtype(b: Dict[str, Logical], names: Sequence[str], first: str) -> None:
    for n in names:
        if b[n].dtype != b[first].dtype:
            raise RefRejects(f"'{n}' has dtype {b[n].dtype}, '{first}' has {b[first].dtype}")


def _broadcast(*shapes: Tuple[int, ...]) -> Tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError as e:
        raise RefRejects(f"shapes {shapes} do not broadcast") from e


def ref_add(b: Dict[str, Any]) -> List[Expected]:
    dt = _need_float(b, "self")
    _same_dtype(b, ["other"], "self")
    alpha = as_scalar(b["alpha"], "alpha")
    shape = _broadcast(b["self"].shape, b["other"].shape)
    with np.errstate(all="ignore"):
        v = round_to(dt, _vals(b, "self") + round_to("float32", alpha) * _vals(b, "other"))
    return [Expected(shape, dt, v)]


def ref_mul(b: Dict[str, Any]) -> List[Expected]:
    dt = _need_float(b, "self")
    _same_dtype(b, ["other"], "self")
    shape = _broadcast(b["self"].shape, b["other"].shape)
    with np.errstate(all="ignore"):
        return [Expected(shape, dt, round_to(dt, _vals(b, "self") * _vals(b, "other")))]


def ref_split_add(b: Dict[str, Any]) -> List[Expected]:
    dt = _need_float(b, "x")
    _same_dtype(b, ["y"], "x")
    if b["x"].shape != b["y"].shape:
        raise RefRejects("x and y differ in shape")
    x, y = _vals(b, "x"), _vals(b, "y")
    with np.errstate(all="ignore"):
        return [Expected(b["x"].shape, dt, round_to(dt, x + y)),
                Expected(b["x"].shape, dt, round_to(dt, x - y))]


def _rms(x: Any, w: Any, eps: float) -> Any:
    with np.errstate(all="ignore"):
        ms = np.mean(x * x, axis=-1, keepdims=True) if x.shape[-1] else np.zeros(x.shape[:-1] + (1,))
        return x / np.sqrt(ms + eps) * w


def _norm_checks(b: Dict[str, Any], wname: str) -> Tuple[str, float]:
    dt = _need_float(b, "input")
    _same_dtype(b, [wname], "input")
    if len(b["input"].shape) < 1:
        raise RefRejects("input is 0-dim")
    if b[wname].shape != (b["input"].shape[-1],):
        raise RefRejects(f"weight shape {b[wname].shape} for input {b['input'].shape}")
    eps = as_float(b["eps"], "eps")
    if not math.isfinite(eps) or eps < 0:
        raise RefRejects(f"eps={eps!r}")
    return dt, eps


def ref_rms_norm(b: Dict[str, Any]) -> List[Expected]:
    dt, eps = _norm_checks(b, "weight")
    eps32 = float(np.float32(eps)) if eps < 3.4e38 else math.inf
    v = _rms(_vals(b, "input"), _vals(b, "weight"), eps32)
    return [Expected(b["input"].shape, dt, round_to(dt, v))]


def ref_fused_add_rms_norm_(b: Dict[str, Any]) -> List[Expected]:
    """Outputs in the order of OPS[...].writes: input (normalized), residual (the sum)."""
    dt, eps = _norm_checks(b, "weight")
    _same_dtype(b, ["residual"], "input")
    if b["residual"].shape != b["input"].shape:
        raise RefRejects("residual and input differ in shape")
    eps32 = float(np.float32(eps)) if eps < 3.4e38 else math.inf
    with np.errstate(all="ignore"):
        s = round_to(dt, _vals(b, "input") + _vals(b, "residual"))
    return [Expected(b["input"].shape, dt, round_to(dt, _rms(s, _vals(b, "weight"), eps32))),
            Expected(b["input"].shape, dt, s)]


def ref_silu_and_mul(b: Dict[str, Any]) -> List[Expected]:
    dt = _need_float(b, "x")
    shape = b["x"].shape
    if len(shape) < 1 or shape[-1] % 2:
        raise RefRejects(f"x shape {shape}: needs an even last dimension")
    x = _vals(b, "x")
    d = shape[-1] // 2
    a, g = x[..., :d], x[..., d:]
    with np.errstate(all="ignore"):
        v = a / (1.0 + np.exp(-a)) * g
    return [Expected(shape[:-1] + (d,), dt, round_to(dt, v))]


def ref_per_token_quant(b: Dict[str, Any]) -> List[Expected]:
    """A property check: scale = absmax / qmax per row; q * scale reproduces x to within the
    rounding of the quantized format."""
    _need_float(b, "x")
    qdt = as_quant_dtype(b["dtype"])
    shape = b["x"].shape
    if len(shape) < 1:
        raise RefRejects("x is 0-dim")
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    x = _vals(b, "x").reshape(rows, shape[-1])
    qmax = 127.0 if qdt == "int8" else 448.0
    absmax = np.max(np.abs(x), axis=1, initial=0.0) if shape[-1] else np.zeros(rows)
    scale = (absmax.astype(np.float32) / np.float32(qmax)).astype(np.float64).reshape(rows, 1)

    def check_q(q: Any, got: List[Logical]) -> Optional[str]:
        s = got[1].values
        if s is None:
            return "scale unreadable"
        s = np.asarray(s, np.float64).reshape(rows, 1)
        q2 = np.asarray(q, np.float64).reshape(rows, shape[-1])
        with np.errstate(all="ignore"):
            target = np.where(s == 0, 0.0, x / np.where(s == 0, 1.0, s))
            if qdt == "int8":
                err = np.abs(q2 - np.clip(target, -127, 127))
                bad = ~(err <= 0.5 + 1e-3) & ~np.isnan(x)
            else:
                tgt = np.clip(target, -448, 448)
                err = np.abs(q2 - tgt)
                bad = ~(err <= np.maximum(np.abs(tgt) * 2.0 ** -4, 2.0 ** -9) * 1.001) & ~np.isnan(x)
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            return f"q at {list(i)} = {q2[i]!r}, x/scale = {target[i]!r}"
        return None

    return [Expected(shape, qdt, check=check_q), Expected((rows, 1), "float32", scale)]


def _order(x: Any, largest: bool) -> Any:
    """Per row of 2-D x: indices in topk order (NaN counts as the largest, ties by index)."""
    nan = np.isnan(x)
    filled = np.where(nan, 0.0, x)
    keys = (-filled, ~nan) if largest else (filled, nan)
    return np.stack([np.lexsort((np.arange(x.shape[1]),) + tuple(kk[r] for kk in keys))
                     for r in range(x.shape[0])]) if x.shape[0] else np.zeros((0, x.shape[1]), np.int64)


def ref_topk(b: Dict[str, Any]) -> List[Expected]:
    dt = _need_float(b, "x")
    shape = b["x"].shape
    if len(shape) < 1:
        raise RefRejects("x is 0-dim")
    k = as_int(b["k"], "k")
    dim = as_int(b["dim"], "dim")
    largest = as_bool(b["largest"], "largest")
    nd = len(shape)
    if not -nd <= dim < nd:
        raise RefRejects(f"dim={dim} for a {nd}-dim x")
    dim %= nd
    if not 0 <= k <= shape[dim]:
        raise RefRejects(f"k={k} for a dimension of size {shape[dim]}")
    x = np.moveaxis(_vals(b, "x"), dim, -1)
    out_shape = shape[:dim] + (k,) + shape[dim + 1:]
    if x.size == 0:
        return [Expected(out_shape, dt, np.zeros(out_shape)), Expected(out_shape, "int64", np.zeros(out_shape))]
    flat = x.reshape(-1, shape[dim])
    idx = _order(flat, largest)[:, :k]
    vals = np.take_along_axis(flat, idx, axis=1).reshape(x.shape[:-1] + (k,))
    want = np.moveaxis(vals, -1, dim)

    def check_indices(got: Any, all_got: List[Logical]) -> Optional[str]:
        if k == 0:
            return None
        gi = np.moveaxis(np.asarray(got), dim, -1).reshape(-1, k).astype(np.int64)
        if gi.size and (gi.min() < 0 or gi.max() >= shape[dim]):
            return f"an index outside [0, {shape[dim]})"
        picked = np.take_along_axis(flat, np.clip(gi, 0, max(shape[dim] - 1, 0)), axis=1)
        if not same_bits(picked, np.take_along_axis(flat, idx, axis=1)):
            return "x[indices] differs from the top-k values"
        if any(len(set(r)) != len(r) for r in gi.tolist()):
            return "a repeated index"
        return None

    return [Expected(out_shape, dt, want), Expected(out_shape, "int64", check=check_indices)]


def ref_softmax(b: Dict[str, Any]) -> List[Expected]:
    dt = _need_float(b, "x")
    shape = b["x"].shape
    if len(shape) < 1:
        raise RefRejects("x is 0-dim")
    dim = as_int(b["dim"], "dim")
    if not -len(shape) <= dim < len(shape):
        raise RefRejects(f"dim={dim} for a {len(shape)}-dim x")
    x = _vals(b, "x")
    with np.errstate(all="ignore"):
        m = np.max(x, axis=dim, keepdims=True) if x.size else x
        e = np.exp(x - m)
        v = e / np.sum(e, axis=dim, keepdims=True)
    return [Expected(shape, dt, round_to(dt, v))]


def ref_linear(b: Dict[str, Any]) -> List[Expected]:
    dt = _need_float(b, "x")
    names = ["weight"] + (["bias"] if b["bias"] is not None else [])
    _same_dtype(b, names, "x")
    xs, ws = b["x"].shape, b["weight"].shape
    if len(xs) < 1 or len(ws) != 2 or ws[1] != xs[-1]:
        raise RefRejects(f"x {xs} with weight {ws}")
    if b["bias"] is not None and b["bias"].shape != (ws[0],):
        raise RefRejects(f"bias {b['bias'].shape} for weight {ws}")
    with np.errstate(all="ignore"):
        v = _vals(b, "x") @ _vals(b, "weight").T
        if b["bias"] is not None:
            v = v + _vals(b, "bias")
    return [Expected(xs[:-1] + (ws[0],), dt, round_to(dt, v))]


REFERENCES: Dict[str, Callable[[Dict[str, Any]], List[Expected]]] = {
    "add": ref_add, "mul": ref_mul, "split_add": ref_split_add, "rms_norm": ref_rms_norm,
    "fused_add_rms_norm_": ref_fused_add_rms_norm_, "silu_and_mul": ref_silu_and_mul,
    "per_token_quant": ref_per_token_quant, "topk": ref_topk, "softmax": ref_softmax,
    "linear": ref_linear,
}


def compare(got: Logical, want: Expected, what: str, all_got: List[Logical]) -> Optional[str]:
    if tuple(got.shape) != tuple(want.shape):
        return f"{what}: shape {list(got.shape)}, want {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"{what}: dtype {got.dtype}, want {want.dtype}"
    if got.is_meta:
        return None
    if got.values is None:
        return f"{what}: values unreadable"
    if want.check is not None:
        why = want.check(got.values, all_got)
        return f"{what}: {why}" if why else None
    if want.values is None:
        return None
    if np.asarray(got.values).dtype.kind in "iub":
        return None if same_bits(np.asarray(got.values, np.float64), np.asarray(want.values, np.float64)) \
            else f"{what}: integer values differ"
    why = close(got.values, want.values, want.dtype)
    return f"{what}: {why}" if why else None
