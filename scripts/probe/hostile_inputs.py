#!/usr/bin/env python3
"""Hostile-input probe run over opreg's Python and CLI surfaces.

Generates several hundred probes of bad input and classifies each one:

  refused       a Python exception / a nonzero CLI exit with a message (the wanted answer to
                bad input); flagged `unclear` too when the message does not name the op (or the
                CLI input) and the argument or what was expected
  ok            accepted, and the result matches a reference (NumPy / torch's own ops, the
                trace format's rules, torch's schema parser, ...)
  ok-unchecked  accepted, no reference available (say why in `detail`)
  wrong         accepted but the result differs from the reference, an out / written argument
                was not written, an input that must not change changed, or an argument that
                must be refused (a read-only array to write, mixed devices) was accepted
  crash         the process died by a signal (or exited without answering)
  hang          no answer within the per-probe timeout
  not-run       the hostile input itself could not be built here (NumPy/torch refused it)
  probe-error   a bug in this script's checker (listed, never counted as opreg's)

Surfaces: `opreg.ops.opreg.<op>` with NumPy arrays, torch tensors and opreg tensors,
`torch.ops.opreg.<op>` (after `import opreg.torch`), the tensor constructors and methods,
`opreg.Library` / `opreg.library` / `opreg.custom_op` with hostile schema text,
`opreg.load_library` on hostile paths, `opreg.symm_mem` without a peer, and the CLI
(`opreg plan`, `opreg schema`, `opreg ops --load`).

Python probes run in a long-lived worker subprocess (this file with --worker) that is restarted
after a crash or a hang; CLI probes run with subprocess timeouts. Every child runs under an
address-space limit so that an unbounded allocation fails instead of exhausting the machine.

Run it:

    python scripts/probe/hostile_inputs.py                  # the full run (~1000 probes)
    python scripts/probe/hostile_inputs.py --quick          # ~150 representative probes (CI)
    python scripts/probe/hostile_inputs.py --json out.json  # also write every result as JSON
    python scripts/probe/hostile_inputs.py --list           # list the probes, run nothing

The CLI binary is $OPREG_CLI, else `opreg` on PATH, else build/release/cli/opreg under the repo
root (--cli PATH overrides); without one the CLI probes are skipped with the reason printed.
Exit status: 1 iff some probe crashed, hung or was wrong; 2 on a usage or harness error.

A repro line runs after
    import sys; sys.path.insert(0, "scripts/probe"); import hostile_inputs as h
    h.load_frameworks(); from hostile_inputs import *
which defines np, opreg, o = opreg.ops.opreg, torch, T = torch.ops.opreg and the input helpers
rnd / trnd / otnd / ro / misaligned below.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import numbers
import os
import queue
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

try:
    import numpy as np
except ImportError:  # the parent runs without NumPy; the worker needs it
    np = None  # type: ignore[assignment]

REPO_ROOT = Path(__file__).resolve().parents[2]
PY_TIMEOUT_S = 10.0       # per Python probe
CLI_TIMEOUT_S = 5.0       # per CLI probe
WORKER_START_TIMEOUT_S = 120.0
WORKER_MEMORY = 12 << 30  # address-space limit of the worker (torch maps a few GiB by itself)
CLI_MEMORY = 2 << 30      # address-space limit of each CLI run
QUICK_TARGET = 150
FAILURES = ("crash", "hang", "wrong")
OUTCOMES = ("refused", "ok", "ok-unchecked", "wrong", "crash", "hang", "not-run", "probe-error")
MSG_LIMIT = 600           # characters of a message kept in the report

REPRO_PREAMBLE = ('import sys; sys.path.insert(0, "scripts/probe"); import hostile_inputs as h; '
                  'h.load_frameworks(); from hostile_inputs import *')


# =============================================================================================
# Probes and results
# =============================================================================================

@dataclasses.dataclass
class Probe:
    """One hostile input. Python probes are source text run in the worker: `setup` (statements)
    then `call` (an expression). Op probes (`op` set) give their arguments separately so that
    they can be snapshotted before the call and checked against a reference after it."""

    id: str
    surface: str
    key: bool = False                   # always part of --quick
    setup: str = ""
    call: str = ""
    op: str = ""                        # a built-in op of namespace opreg
    overload: str = "default"           # "default" or "out"
    target: str = ""                    # the callable, e.g. "o.add.out"
    args: Tuple[str, ...] = ()
    kwargs: Tuple[Tuple[str, str], ...] = ()
    must_refuse: str = ""               # accepted anyway -> wrong
    expect: str = ""                    # API probes: an expression over `r` (see check_api)
    op_tokens: Tuple[str, ...] = ()     # a clear refusal names one of these ...
    arg_tokens: Tuple[str, ...] = ()    # ... and one of these (words)
    # CLI probes
    argv: Tuple[str, ...] = ()
    stdin: Optional[bytes] = None
    cli_check: str = ""                 # name of the checker of an accepted run

    @property
    def is_cli(self) -> bool:
        return bool(self.argv)

    def call_text(self) -> str:
        if self.call:
            return self.call
        parts = list(self.args) + [f"{k}={v}" for k, v in self.kwargs]
        return f"{self.target}({', '.join(parts)})"

    def repro(self) -> str:
        if self.is_cli:
            cmd = " ".join(_shell_quote(a) for a in self.argv)
            if self.stdin is not None:
                shown = self.stdin[:120]
                more = f" (+{len(self.stdin) - 120} bytes)" if len(self.stdin) > 120 else ""
                return f"printf %s {_shell_quote(shown.decode('latin-1'))}{more} | {cmd}"
            return cmd
        text = f"{self.setup}; {self.call_text()}" if self.setup else self.call_text()
        return text if len(text) <= 400 else text[:400] + f"... ({len(text)} chars)"


@dataclasses.dataclass
class Result:
    id: str
    surface: str
    outcome: str
    detail: str = ""
    message: str = ""
    unclear: str = ""   # why the refusal message is unclear ("" = clear or not a refusal)
    repro: str = ""
    seconds: float = 0.0


def _shell_quote(s: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_./=:,+-]+", s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def _short(text: str, limit: int = MSG_LIMIT) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


EXPECTATION_WORDS = (
    "expect", "must", "should", "require", "support", "only", "allowed", "valid", "in [",
    "range", "cannot", "can't", "not a ", "no such", "unknown", "overflow", "too ", "exceed",
    "at most", "at least", "does not", "doesn't", "missing", "not found", "is not", "got",
    "not defined", "already", "has no", "no op", "unexpected", "duplicate", "unsupported",
    "forbidden", "negative", "not allowed", "needs", "lazily", "timed out", "timeout",
    "takes", "overlap", "mismatch", "more than", " after ", "follows", "could not", "unterminated",
    "no group", "wrong", "not in [", "callable", "out of memory", "invalid", "not find",
    "empty group", "a trace is", "built without", "not specified", "failed:",
)
# Allocation failures name no single argument: for them the op and the size are enough.
ALLOCATION_WORDS = ("out of memory", "overflow the byte count", "more than 2^63 elements")


def unclear_reason(message: str, op_tokens: Sequence[str], arg_tokens: Sequence[str]) -> str:
    """Why a refusal message fails "names the op, the argument and what was expected"; ""
    when it does not fail."""
    m = message.lower()
    if op_tokens and not any(t.lower() in m for t in op_tokens):
        return "does not name the op/input (" + " | ".join(op_tokens) + ")"
    if arg_tokens and not any(w in m for w in ALLOCATION_WORDS) and not any(re.search(r"(?<![A-Za-z0-9_])" + re.escape(t.lower()) + r"(?![A-Za-z0-9_])", m)
                              for t in arg_tokens):
        return "does not name the argument (" + " | ".join(arg_tokens) + ")"
    if not any(w in m for w in EXPECTATION_WORDS):
        return "does not say what was expected"
    return ""


# =============================================================================================
# Input helpers (the names repro lines use)
# =============================================================================================

torch: Any = None
T: Any = None
o: Any = None
opreg: Any = None


def load_frameworks(with_torch: bool = True) -> str:
    """Imports opreg (and torch with opreg.torch when available) into this module's globals;
    returns why torch is not there ("" when it is)."""
    global torch, T, o, opreg
    import opreg as _opreg
    opreg = _opreg
    o = _opreg.ops.opreg
    if not with_torch:
        return "torch probes disabled (--no-torch)"
    try:
        import torch as _torch
    except ImportError:
        return "torch is not installed"
    try:
        import opreg.torch  # noqa: F401  (registers torch.ops.opreg)
    except Exception as e:  # pragma: no cover - reported, the NumPy part still runs
        return f"import opreg.torch failed: {type(e).__name__}: {e}"
    torch = _torch
    torch.set_num_threads(2)
    T = torch.ops.opreg
    return ""


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
    return opreg.from_dlpack(np.require(rnd(shape, dtype, seed), requirements="C")).clone()


_TORCH_ONLY_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def trnd(shape: Any, dtype: str = "float32", seed: int = 0, device: str = "cpu") -> Any:
    """A torch tensor with the values of rnd(shape, dtype, seed) (float32 values converted for
    torch-only dtypes); device "meta" gives an empty meta tensor."""
    tdt = getattr(torch, dtype)
    if device == "meta":
        return torch.empty(shape, dtype=tdt, device="meta")
    if dtype in _TORCH_ONLY_DTYPES:
        return torch.from_numpy(rnd(shape, "float32", seed)).to(tdt)
    return torch.from_numpy(np.require(rnd(shape, dtype, seed), requirements="C"))


def zcplx(shape: Any, seed: int = 0) -> Any:
    """A complex64 torch tensor (for z.conj() and z.conj().imag views)."""
    return torch.complex(trnd(shape, "float32", seed), trnd(shape, "float32", seed + 1))


# =============================================================================================
# Worker side: logical values, references, comparisons
# =============================================================================================

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
    if np is not None and isinstance(v, np.ndarray):
        return True
    if torch is not None and isinstance(v, torch.Tensor):
        return True
    return opreg is not None and isinstance(v, opreg.Tensor)


def framework_of(v: Any) -> str:
    if np is not None and isinstance(v, np.ndarray):
        return "numpy"
    if torch is not None and isinstance(v, torch.Tensor):
        return "torch"
    if opreg is not None and isinstance(v, opreg.Tensor):
        return "opreg"
    return type(v).__name__


def logical(v: Any) -> Logical:
    """The Logical of a NumPy array, torch tensor or opreg.Tensor."""
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


# =============================================================================================
# Worker side: running one probe
# =============================================================================================

def _refused(e: BaseException, p: Probe) -> Dict[str, Any]:
    msg = f"{type(e).__name__}: {e}"
    return {"outcome": "refused", "message": msg,
            "unclear": unclear_reason(msg, p.op_tokens, p.arg_tokens)}


def _tensor_items(args: Sequence[Any], kwargs: Dict[str, Any]) -> Iterator[Tuple[str, Any]]:
    for i, a in enumerate(args):
        if is_tensor_like(a):
            yield f"arg#{i}", a
    for k, v in kwargs.items():
        if is_tensor_like(v):
            yield k, v


def run_op_probe(p: Probe, ns: Dict[str, Any]) -> Dict[str, Any]:
    """Calls a built-in op; checks refusals left the arguments alone and accepted calls against
    the op's reference (outputs, out / written arguments, untouched inputs)."""
    try:
        if p.setup:
            exec(p.setup, ns)
        target = eval(p.target, ns)
        args = [eval(a, ns) for a in p.args]
        kwargs = {k: eval(v, ns) for k, v in p.kwargs}
    except Exception as e:
        return {"outcome": "not-run", "detail": f"building the input failed: {type(e).__name__}: {e}"}
    op = OPS[p.op]
    params = op.signature(p.overload)
    written = op.written(p.overload)
    try:
        bound = bind(params, args, kwargs)
        bind_error = ""
    except TypeError as e:
        bound, bind_error = {}, str(e)
    before = {name: logical(v) for name, v in _tensor_items(args, kwargs)}
    written_objs = [bound[w] for w in written if w in bound and is_tensor_like(bound[w])]

    try:
        ret = target(*args, **kwargs)
    except Exception as e:
        changed = [n for n, v in _tensor_items(args, kwargs) if not same_bits(before[n].values, logical(v).values)]
        res = _refused(e, p)
        if changed:
            return {"outcome": "wrong", "detail": f"refused, yet modified {', '.join(changed)}",
                    "message": res["message"]}
        return res

    if p.must_refuse:
        return {"outcome": "wrong", "detail": f"accepted {p.must_refuse}"}
    if bind_error:
        return {"outcome": "wrong", "detail": f"accepted a call the schema rejects ({bind_error})"}
    # Inputs that must not change: every tensor argument that is not written and shares no
    # memory with a written one.
    for name, v in _tensor_items(args, kwargs):
        if any(v is w for w in written_objs) or any(overlaps(v, w) for w in written_objs):
            continue
        if not same_bits(before[name].values, logical(v).values):
            return {"outcome": "wrong", "detail": f"input {name} was modified"}
    logical_args = {}
    for prm in params:
        v = bound[prm.name]
        if prm.kind == "Tensor" and v is None:
            return {"outcome": "wrong", "detail": f"accepted None for the non-optional Tensor '{prm.name}'"}
        if prm.kind.startswith("Tensor") and v is not None:
            if not is_tensor_like(v):
                if not isinstance(v, (list, tuple, float, int)):
                    return {"outcome": "wrong", "detail": f"accepted a {type(v).__name__} for Tensor '{prm.name}'"}
                arr = np.asarray(v, np.float32)  # judged as the float32 tensor it spells
                logical_args[prm.name] = Logical(arr.shape, "float32", "cpu", arr, "python")
                continue
            key = next((n for n, a in _tensor_items(args, kwargs) if a is v), None)
            logical_args[prm.name] = before[key] if key else logical(v)
        else:
            logical_args[prm.name] = v
    devices = {lg.device for n, lg in logical_args.items() if isinstance(lg, Logical) and n not in written}
    if len(devices) > 1:
        return {"outcome": "wrong", "detail": f"accepted tensors on devices {sorted(devices)}"}
    try:
        expected = REFERENCES[p.op](logical_args)
    except RefRejects as e:
        if p.target.startswith("T.") and "None" in str(e):
            # torch's own argument parser, not opreg, turns None into a value for these
            # (aten ops do the same: torch.ops.aten.topk(x, 3, -1, None) is largest=False).
            return {"outcome": "ok-unchecked", "detail": f"torch's parser accepted it: {e}"}
        return {"outcome": "wrong", "detail": f"accepted: {e}"}
    except NoReference as e:
        return {"outcome": "ok-unchecked", "detail": str(e)}

    # What came back, and what the written arguments hold now.
    results: List[Tuple[str, Any]] = []
    if written:
        for w in written:
            results.append((f"written '{w}'", bound[w]))
        if p.overload == "out":
            rets = ret if isinstance(ret, (tuple, list)) else (ret,)
            if len(rets) != len(written):
                return {"outcome": "wrong", "detail": f"returned {len(rets)} values for {len(written)} outs"}
            results += [(f"returned #{i}", r) for i, r in enumerate(rets)]
            expected = expected + expected
        elif ret is not None:
            return {"outcome": "wrong", "detail": f"an in-place op returned {type(ret).__name__}"}
    else:
        rets = ret if isinstance(ret, (tuple, list)) else (ret,)
        if len(rets) != len(expected):
            return {"outcome": "wrong", "detail": f"returned {len(rets)} values, want {len(expected)}"}
        results = [(f"returned #{i}", r) for i, r in enumerate(rets)]
    got = []
    for what, r in results:
        if not is_tensor_like(r):
            return {"outcome": "wrong", "detail": f"{what} is a {type(r).__name__}"}
        got.append(logical(r))
    for i, ((what, _), g, want) in enumerate(zip(results, got, expected)):
        group = got[(i // len(written)) * len(written):][:len(written)] if written else got
        why = compare(g, want, what, group if written else got)
        if why:
            return {"outcome": "wrong", "detail": why}
    why = _framework_rule(args, kwargs, [r for _, r in results], got)
    if why:
        return {"outcome": "wrong", "detail": why}
    if any(g.is_meta for g in got):
        return {"outcome": "ok", "detail": "meta: shapes and dtypes checked"}
    return {"outcome": "ok", "detail": ""}


def _framework_rule(args: Sequence[Any], kwargs: Dict[str, Any], rets: Sequence[Any],
                    got: Sequence[Logical]) -> str:
    """The documented rule: results come back in the framework of the tensor arguments (NumPy
    only for dtypes NumPy has)."""
    fws = {framework_of(v) for _, v in _tensor_items(args, kwargs)}
    if len(fws) != 1:
        return ""
    fw = fws.pop()
    for r, g in zip(rets, got):
        want = fw
        if fw == "numpy" and g.dtype not in np.sctypeDict:
            want = "opreg"
        if framework_of(r) != want:
            return f"a {fw} call returned a {framework_of(r)} result ({g.dtype})"
    return ""


def run_api_probe(p: Probe, ns: Dict[str, Any]) -> Dict[str, Any]:
    """Runs setup and call; an accepted call is judged by `expect` (an expression over r that
    gives None: ok, "unchecked: why": ok-unchecked, or a string: wrong)."""
    try:
        if p.setup:
            exec(p.setup, ns)
    except Exception as e:
        return {"outcome": "not-run", "detail": f"setup failed: {type(e).__name__}: {e}"}
    try:
        r = eval(p.call, ns)
    except Exception as e:
        return _refused(e, p)
    if p.must_refuse:
        return {"outcome": "wrong", "detail": f"accepted {p.must_refuse}"}
    if not p.expect:
        return {"outcome": "ok-unchecked", "detail": "no reference for this call"}
    ns["r"] = r
    try:
        verdict = eval(p.expect, ns)
    except Exception as e:
        return {"outcome": "probe-error", "detail": f"checker failed: {type(e).__name__}: {e}"}
    if verdict is None:
        return {"outcome": "ok", "detail": ""}
    if isinstance(verdict, str) and verdict.startswith("unchecked"):
        return {"outcome": "ok-unchecked", "detail": verdict}
    return {"outcome": "wrong", "detail": str(verdict)}


# ---- checkers for API probes (names used in `expect`) --------------------------------------

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
    canon = str(opreg.schema(qualified))
    again = str(opreg._C._schema_info(canon)["name"]) if canon else ""
    if not again:
        return f"canonical form {canon!r} does not re-parse"
    ref = torch_canonical(text, qualified.split("::")[0])
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
    if torch is None or len(text) > 4000 or text.count("(") + text.count("[") > 64 or "\0" in text:
        return None
    full = text if "::" in text.split("(")[0] else f"{ns}::{text}"
    try:
        return str(torch._C.parse_schema(full))
    except Exception as e:
        return "torch rejects: " + _short(str(e).splitlines()[0] if str(e) else type(e).__name__, 120)


def chk_custom(op: Any, x: Any, want: Any) -> Optional[str]:
    """Calling the custom op on x gives want."""
    return chk_values(op(x), want)


# =============================================================================================
# Python probe generation
# =============================================================================================

class Gen:
    """Collects probes with unique ids."""

    def __init__(self) -> None:
        self.probes: List[Probe] = []
        self._ids: Dict[str, int] = {}

    def add(self, p: Probe) -> None:
        n = self._ids.get(p.id, 0)
        self._ids[p.id] = n + 1
        if n:
            p = dataclasses.replace(p, id=f"{p.id}~{n}")
        self.probes.append(p)


@dataclasses.dataclass(frozen=True)
class Fw:
    """How a framework spells tensors in probe source text."""

    name: str          # numpy | torch | opreg | torch.ops
    surface: str
    target: str        # "o" (opreg.ops.opreg) or "T" (torch.ops.opreg)

    def mk(self, shape: Tuple[int, ...], dtype: str = "float32", seed: int = 0) -> str:
        if self.name == "numpy":
            return f"rnd({shape!r}, '{dtype}', {seed})"
        if self.name == "opreg":
            return f"otnd({shape!r}, '{dtype}', {seed})"
        return f"trnd({shape!r}, '{dtype}', {seed})"

    def zeros(self, shape: Tuple[int, ...], dtype: str = "float32") -> str:
        if self.name == "numpy":
            return f"np.zeros({shape!r}, '{dtype}')"
        if self.name == "opreg":
            return f"opreg.zeros({shape!r}, '{dtype}')"
        return f"torch.zeros({shape!r}, dtype=torch.{dtype})"

    @property
    def is_torch(self) -> bool:
        return self.name in ("torch", "torch.ops")


FW_NUMPY = Fw("numpy", "ops:numpy", "o")
FW_TORCH = Fw("torch", "ops:torch", "o")
FW_OPREG = Fw("opreg", "ops:opreg", "o")
FW_TORCH_OPS = Fw("torch.ops", "torch.ops", "T")


def tensor_shapes(op: str, X: Tuple[int, ...]) -> Dict[str, Tuple[int, ...]]:
    """Shapes of the op's tensor inputs that go with an input of shape X."""
    h = X[-1] if X else 1
    if op in ("rms_norm",):
        return {"input": X, "weight": (h,)}
    if op == "fused_add_rms_norm_":
        return {"input": X, "residual": X, "weight": (h,)}
    if op == "linear":
        return {"x": X, "weight": (6, h), "bias": (6,)}
    first = OPS[op].params[0].name
    return {p.name: X for p in OPS[op].params if p.kind == "Tensor" and p.name in (first, "other", "y")}


def out_shapes(op: str, X: Tuple[int, ...], dtype: str, k: int = 3) -> Dict[str, Tuple[Tuple[int, ...], str]]:
    rows = int(np.prod(X[:-1], dtype=np.int64)) if X else 1
    if op == "silu_and_mul":
        return {"out": (X[:-1] + (X[-1] // 2,), dtype)}
    if op == "per_token_quant":
        return {"q": (X, "int8"), "scale": ((rows, 1), "float32")}
    if op == "topk":
        return {"values": (X[:-1] + (k,), dtype), "indices": (X[:-1] + (k,), "int64")}
    if op == "linear":
        return {"out": (X[:-1] + (6,), dtype)}
    if op == "split_add":
        return {"out0": (X, dtype), "out1": (X, dtype)}
    return {"out": (X, dtype)} if OPS[op].outs else {}


SCALAR_BASE = {"add": {"alpha": "0.5"}, "rms_norm": {"eps": "1e-05"}, "fused_add_rms_norm_": {"eps": "1e-05"},
               "per_token_quant": {"dtype": "'int8'"}, "topk": {"k": "3"}, "softmax": {}, "linear": {},
               "mul": {}, "split_add": {}, "silu_and_mul": {}}


class OpCall:
    """A call of a built-in op, assembled from per-argument source text."""

    def __init__(self, fw: Fw, op: str, overload: str = "default", X: Tuple[int, ...] = (4, 8),
                 dtype: str = "float32") -> None:
        self.fw, self.op, self.overload, self.X, self.dtype = fw, op, overload, X, dtype
        self.setup = ""
        self.src: Dict[str, str] = {}
        for i, (name, shape) in enumerate(tensor_shapes(op, X).items()):
            self.src[name] = fw.mk(shape, dtype, i)
        self.src.update(SCALAR_BASE[op])
        if op == "topk" and X and X[-1] < 3:
            self.src["k"] = str(X[-1])
        if op == "per_token_quant" and fw.name == "torch.ops":
            self.src["dtype"] = "torch.int8"
        self.extra_args: List[str] = []
        self.extra_kwargs: List[Tuple[str, str]] = []
        self.drop: List[str] = []
        self.as_keywords = False
        if overload == "out":
            k = int(self.src.get("k", "3")) if op == "topk" else 3
            for name, (shape, odt) in out_shapes(op, X, dtype, k).items():
                self.src[name] = fw.zeros(shape, odt)

    def set(self, /, **src: str) -> "OpCall":
        self.src.update(src)
        return self

    def probe(self, pid: str, *, key: bool = False, must_refuse: str = "", arg: Sequence[str] = ()) -> Probe:
        sig = OPS[self.op].signature(self.overload)
        args: List[str] = []
        kwargs: List[Tuple[str, str]] = []
        gap = False  # a positional parameter left out: the ones after it go by keyword
        for prm in sig:
            if prm.name in self.drop or prm.name not in self.src:
                gap = gap or not prm.kwonly
                continue
            if prm.kwonly or self.as_keywords or gap:
                kwargs.append((prm.name, self.src[prm.name]))
            else:
                args.append(self.src[prm.name])
        args += self.extra_args
        kwargs += self.extra_kwargs
        target = f"{self.fw.target}.{self.op}" + (".out" if self.overload == "out" else "")
        qualified = f"opreg::{self.op}"
        tokens = (qualified, f"opreg.{self.op}", f"{self.op}(")
        return Probe(id=f"{self.fw.surface}/{self.op}{'.out' if self.overload == 'out' else ''}/{pid}",
                     surface=self.fw.surface, key=key, setup=self.setup, op=self.op,
                     overload=self.overload, target=target, args=tuple(args), kwargs=tuple(kwargs),
                     must_refuse=must_refuse, op_tokens=tokens,
                     arg_tokens=tuple(arg) or tuple(p.name for p in sig))


WRONG_DTYPES = {
    "numpy": ("bool", "int8", "uint16", "uint32", "int64", "uint64", "float64", "complex64"),
    "torch": ("bool", "int8", "uint16", "uint64", "float64", "complex64", "float8_e4m3fn"),
    "torch.ops": ("bool", "uint32", "int64", "float64", "complex64"),
    "opreg": ("bool", "int8", "uint64", "float64"),
}
VALID_DTYPES = {"numpy": ("float32", "float16"), "torch": ("float32", "float16", "bfloat16"),
                "torch.ops": ("float32", "bfloat16"), "opreg": ("float32", "float16")}

SCALAR_VALUES = {
    "Scalar": ("float('nan')", "float('inf')", "-float('inf')", "2**63", "-2**63-1", "2**63-1",
               "True", "1j", "'2'", "None", "1e308", "np.float32(2)", "np.int64(3)", "0"),
    "float": ("float('nan')", "float('inf')", "-1.0", "0.0", "1e308", "True", "'1e-6'", "None",
              "2**70", "np.float64(1e-5)", "5e-324", "-0.0", "1"),
    "int:k": ("-1", "0", "8", "9", "2**31", "2**62", "2**63-1", "-2**63", "2**63", "True", "1.5",
              "2.0", "'2'", "None", "np.int64(2)", "np.uint64(2**64-1)"),
    "int:dim": ("1", "-2", "2", "-3", "2**63-1", "-2**63", "2**31", "1.0", "None", "'0'", "True",
                "np.int32(0)"),
    "bool": ("False", "0", "1", "2", "'yes'", "None", "np.bool_(False)", "1.0"),
    "ScalarType": ("'int8'", "'i8'", "'float8_e4m3fn'", "'float32'", "'bogus'", "''", "None", "5",
                   "np.int8", "np.dtype('int8')", "'torch.int8'", "'uint8'", "'int8 '", "'x'*10**6"),
    "ScalarType:torch": ("torch.int8", "torch.float8_e4m3fn", "torch.float32", "'int8'", "None", "5"),
}
SCALAR_SUBSET = {  # torch.ops: fewer, the ones its parser sees differently
    "Scalar": ("float('nan')", "2**63", "True", "1j", "'2'", "None"),
    "float": ("float('nan')", "-1.0", "True", "'1e-6'", "None", "1"),
    "int:k": ("-1", "2**63-1", "2**63", "True", "1.5", "None"),
    "int:dim": ("2", "-2**63", "1.0", "None", "True"),
    "bool": ("2", "'yes'", "None", "1"),
}


def _first_tensor(op: str) -> str:
    return OPS[op].params[0].name


def _second_tensor(op: str) -> Optional[str]:
    names = [p.name for p in OPS[op].params if p.kind == "Tensor"]
    return names[1] if len(names) > 1 else None


# Ops swept in depth per framework (every dtype, layout, argument kind); the others get the
# core probes (valid, a wrong dtype, 0-dim, zero-size, transposed, huge, outs and aliasing).
DEEP_OPS = {
    "numpy": ("add", "fused_add_rms_norm_"),
    "torch": ("add", "fused_add_rms_norm_"),
    "torch.ops": ("add", "fused_add_rms_norm_"),
    "opreg": ("add",),
}
# Scalar arguments swept through every hostile value; the others get the first few.
DEEP_SCALARS = {("add", "alpha"), ("rms_norm", "eps"), ("per_token_quant", "dtype"), ("topk", "k"),
                ("topk", "largest"), ("softmax", "dim")}
CORE_WRONG_DTYPES = {"numpy": ("int8", "float64"), "torch": ("float64",), "torch.ops": ("int64",),
                     "opreg": ("float64",)}


def gen_op_probes(g: Gen, fw: Fw) -> None:
    for op in OPS:
        deep = op in DEEP_OPS[fw.name]
        gen_inputs(g, fw, op, deep)
        if fw.name in ("numpy", "torch.ops"):
            gen_scalars(g, fw, op)
        if fw.name in ("numpy", "torch.ops"):
            gen_call_shapes(g, fw, op, deep)
        if fw.is_torch:
            gen_torch_views(g, fw, op, deep)
        if OPS[op].outs or OPS[op].writes:
            gen_written(g, fw, op, deep)


def gen_inputs(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """Valid calls, wrong dtypes, odd shapes and layouts of the tensor inputs."""
    first, second = _first_tensor(op), _second_tensor(op)
    h = 8
    numpy = fw.name == "numpy"
    for i, dt in enumerate(VALID_DTYPES[fw.name] if deep else VALID_DTYPES[fw.name][:1]):
        g.add(OpCall(fw, op, dtype=dt).probe(f"valid-{dt}", key=i == 0))
    for dt in WRONG_DTYPES[fw.name] if deep else CORE_WRONG_DTYPES[fw.name][:1]:
        g.add(OpCall(fw, op).set(**{first: fw.mk((4, 8), dt)}).probe(f"dtype-{first}-{dt}", arg=(first, "dtype")))
    if second:
        shape = tensor_shapes(op, (4, 8))[second]
        if deep:
            g.add(OpCall(fw, op).set(**{second: fw.mk(shape, "float16", 1)}).probe(f"dtype-{second}-float16", arg=(second,)))
        g.add(OpCall(fw, op).set(**{second: fw.mk((3, 5), "float32", 1)}).probe("shape-mismatch", key=numpy))
    if fw.name == "opreg":
        g.add(OpCall(fw, op, X=(0, 8)).probe("zero-rows"))
        g.add(OpCall(fw, op).set(**{first: "otnd((8, 4)).view((4, 8))"}).probe("view"))
        if deep:
            g.add(OpCall(fw, op).set(**{first: "opreg.from_dlpack(rnd((4, 16))[:, ::2])"}).probe("step-2"))
            g.add(OpCall(fw, op).set(**{first: "otnd((2, 4, 8)).select(0, 1)"}).probe("select-view"))
        return
    g.add(OpCall(fw, op, X=()).probe("0-dim", key=numpy))
    t = ".T" if numpy else ".t()"
    if numpy or deep:
        g.add(OpCall(fw, op, X=(0, 8)).probe("zero-rows", key=numpy))
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((h, 4))}{t}"}).probe("transposed", key=numpy))
    huge = (f"np.broadcast_to({fw.mk((1, 1))}, (2**30, 2**30))", "huge-expanded-2**60") if numpy else \
        (f"{fw.mk((1, 1))}.expand(2**31, 2**31)", "huge-expanded-2**62")
    g.add(OpCall(fw, op).set(**{first: huge[0]}).probe(huge[1], key=True))
    if numpy:
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, h))}[::-1]"}).probe("negative-strides", key=True))
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, h))}.astype('>f4')"}).probe("big-endian", key=True))
    if not deep:
        return
    g.add(OpCall(fw, op, X=(4, 0)).probe("zero-cols"))
    g.add(OpCall(fw, op, X=(2, 0, 8)).probe("zero-middle"))
    g.add(OpCall(fw, op, X=(1, 1, 1, 1, 1, 2, 3, 8)).probe("8-dim"))
    g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, 2 * h))}[:, ::2]"}).probe("step-2"))
    g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, 2 * h))}[:, 1::2]"}).probe("offset-step-2"))
    if numpy:
        g.add(OpCall(fw, op).set(**{first: f"np.broadcast_to({fw.mk((1, h))}, (4, {h}))"}).probe("expanded-stride-0"))
        g.add(OpCall(fw, op).set(**{first: f"np.broadcast_to({fw.mk((1, h))}, (2**40, {h}))"})
              .probe("huge-expanded-rows"))
        g.add(OpCall(fw, op).set(**{n: f"ro({s})" for n, s in OpCall(fw, op).src.items()
                                    if n in tensor_shapes(op, (4, 8))}).probe("read-only-inputs"))
        g.add(OpCall(fw, op).set(**{first: "misaligned((4, 8))"}).probe("misaligned"))
        g.add(OpCall(fw, op).set(**{first: "np.asfortranarray(rnd((4, 8)))"}).probe("fortran-order"))
        g.add(OpCall(fw, op).set(**{first: f"nanify({fw.mk((4, h))})"}).probe("nan-inf-values"))
        if second:
            shape = tensor_shapes(op, (4, 8))[second]
            g.add(OpCall(fw, op).set(**{second: fw.mk(shape, "float64", 1)}).probe(f"dtype-{second}-float64", arg=(second,)))
    else:
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((1, h))}.expand(4, {h})"}).probe("expanded-stride-0"))
        g.add(OpCall(fw, op).set(**{first: f"nanify({fw.mk((4, h))})"}).probe("nan-inf-values"))
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, h))}.requires_grad_()"}).probe("requires-grad"))


def gen_call_shapes(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """Wrong numbers / kinds of arguments."""
    first = _first_tensor(op)
    g.add(OpCall(fw, op).set(**{first: "None"}).probe(f"{first}=None", arg=(first,)))
    if fw.name == "numpy" or deep:
        c = OpCall(fw, op)
        c.extra_args = ["1", "2", "3", "4"]
        g.add(c.probe("too-many-positional", arg=("positional", "argument", "arguments")))
    if op == "silu_and_mul":
        g.add(OpCall(fw, op, X=(4, 7)).probe("odd-last-dim", arg=("x",)))
    if op == "linear":
        g.add(OpCall(fw, op).set(bias="None").probe("bias-None"))
        g.add(OpCall(fw, op).set(bias=fw.mk((5,), "float32", 2)).probe("bias-wrong-shape", arg=("bias",)))
    if op == "mul":
        g.add(OpCall(fw, op).set(other=fw.mk((4, 1), "float32", 1)).probe("broadcast-col"))
    if not deep:
        return
    c = OpCall(fw, op)
    c.drop = [p.name for p in OPS[op].params]
    g.add(c.probe("no-arguments", arg=(first, "argument")))
    c = OpCall(fw, op)
    c.extra_kwargs = [("bogus", "1")]
    g.add(c.probe("unknown-keyword", arg=("bogus",)))
    c = OpCall(fw, op)
    c.extra_kwargs = [(first, c.src[first])]
    g.add(c.probe("duplicate-argument", arg=(first,)))
    c = OpCall(fw, op)
    c.as_keywords = True
    g.add(c.probe("all-by-keyword"))
    for what in ("'tensor'", "[[1.0] * 8] * 4", "1.0", "object()"):
        g.add(OpCall(fw, op).set(**{first: what}).probe(f"{first}={what}", arg=(first,)))
    if op == "add":
        c = OpCall(fw, op)
        c.src.pop("alpha")
        c.extra_args = ["2"]
        g.add(c.probe("kwonly-alpha-positional", arg=("positional", "argument", "arguments", "alpha")))
        g.add(OpCall(fw, op).set(other=fw.mk((8,), "float32", 1)).probe("broadcast-row"))


def gen_scalars(g: Gen, fw: Fw, op: str) -> None:
    """Hostile values of the non-tensor arguments."""
    table = SCALAR_VALUES if fw.name == "numpy" else SCALAR_SUBSET
    for prm in OPS[op].params:
        if prm.kind in ("Tensor", "Tensor?"):
            continue
        kind = prm.kind
        if kind == "int":
            kind = f"int:{'k' if prm.name == 'k' else 'dim'}"
        if kind == "ScalarType" and fw.name == "torch.ops":
            kind = "ScalarType:torch"
        values = table.get(kind, ())
        deep = (op, prm.name) in DEEP_SCALARS
        for v in values if deep else values[:4 if fw.name == "numpy" else 2]:
            key = v in ("float('nan')", "2**63-1", "1.5", "'bogus'", "-2**63")
            g.add(OpCall(fw, op).set(**{prm.name: v}).probe(f"{prm.name}={v[:24]}", key=key, arg=(prm.name,)))


def gen_torch_views(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """torch-only inputs: conj / neg views, meta tensors, device mixes."""
    first, second = _first_tensor(op), _second_tensor(op)
    shapes = tensor_shapes(op, (4, 8))
    g.add(OpCall(fw, op).set(**{first: f"torch._neg_view({fw.mk((4, 8))})"}).probe("neg-view", key=True, arg=(first,)))
    g.add(OpCall(fw, op).set(**{first: "zcplx((4, 8)).conj().imag"}).probe("conj-imag", key=True, arg=(first,)))
    g.add(OpCall(fw, op).set(**{first: "trnd((4, 8), device='meta')"})
          .probe("meta-first-cpu-rest", key=fw.name == "torch",
                 must_refuse="" if len(shapes) == 1 else "a meta tensor with CPU tensors"))
    if not deep:
        return
    g.add(OpCall(fw, op).set(**{first: "zcplx((4, 8)).conj()"}).probe("conj-complex", arg=(first,)))
    g.add(OpCall(fw, op).set(**{first: "zcplx((4, 8)).conj().real"}).probe("conj-real"))
    if second:
        g.add(OpCall(fw, op).set(**{second: f"torch._neg_view({fw.mk(shapes[second], 'float32', 1)})"})
              .probe(f"neg-view-{second}", key=fw.name == "torch", arg=(second,)))
    meta = OpCall(fw, op)
    for n, s in shapes.items():
        meta.src[n] = f"trnd({s!r}, device='meta')"
    g.add(meta.probe("meta-all"))


def gen_written(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """Out arguments (the .out overload) and in-place written arguments."""
    inplace = bool(OPS[op].writes)
    overload = "default" if inplace else "out"
    written = OPS[op].written(overload)
    w0 = written[0]
    first = _first_tensor(op)
    if not inplace:
        g.add(OpCall(fw, op, overload).probe("valid-out", key=fw.name != "opreg"))
    if fw.name == "opreg":
        if deep:
            g.add(OpCall(fw, op, overload).set(**{w0: fw.zeros((5, 5), "float32")}).probe(f"{w0}-wrong-shape", arg=(w0,)))
        return
    shape0 = tensor_shapes(op, (4, 8))[first] if inplace else out_shapes(op, (4, 8), "float32")[w0][0]
    dtype0 = "float32" if inplace else out_shapes(op, (4, 8), "float32")[w0][1]
    mk0 = (lambda s: fw.mk(s, dtype0)) if inplace else (lambda s: fw.zeros(s, dtype0))
    t = ".T" if fw.name == "numpy" else ".t()"
    if len(shape0) == 2 and deep:
        g.add(OpCall(fw, op, overload).set(**{w0: f"{mk0(shape0[::-1])}{t}"}).probe(f"{w0}-transposed", arg=(w0,)))
    if fw.name == "numpy":
        g.add(OpCall(fw, op, overload).set(**{w0: f"ro({OpCall(fw, op, overload).src[w0]})"})
              .probe(f"{w0}-read-only", key=True, must_refuse="a read-only array as a written argument", arg=(w0,)))
    else:
        if len(shape0) == 2 and deep:
            g.add(OpCall(fw, op, overload).set(**{w0: f"{mk0((1, shape0[1]))}.expand{shape0!r}"})
                  .probe(f"{w0}-expanded-stride-0", key=fw.name == "torch", arg=(w0,)))
        g.add(OpCall(fw, op, overload).set(**{w0: f"torch._neg_view({mk0(shape0)})"})
              .probe(f"{w0}-neg-view", key=True, arg=(w0,)))
    gen_aliasing(g, fw, op, overload, written, deep)
    if not deep:
        return
    wrong_dt = "float64" if dtype0 != "float64" else "float32"
    g.add(OpCall(fw, op, overload).set(**{w0: mk0(shape0).replace(dtype0, wrong_dt)}).probe(f"{w0}-dtype-{wrong_dt}", arg=(w0,)))
    g.add(OpCall(fw, op, overload).set(**{w0: mk0((5,) + shape0[1:])}).probe(f"{w0}-wrong-shape", arg=(w0,)))
    g.add(OpCall(fw, op, overload).set(**{w0: mk0(())}).probe(f"{w0}-0-dim", arg=(w0,)))
    if len(shape0) == 2:
        g.add(OpCall(fw, op, overload).set(**{w0: f"{mk0((shape0[0], 2 * shape0[1]))}[:, ::2]"})
              .probe(f"{w0}-step-2", arg=(w0,)))
    if fw.name == "numpy":
        if len(written) > 1:
            w1 = written[1]
            g.add(OpCall(fw, op, overload).set(**{w1: f"ro({OpCall(fw, op, overload).src[w1]})"})
                  .probe(f"{w1}-read-only", must_refuse="a read-only array as a written argument", arg=(w1,)))
        g.add(OpCall(fw, op, overload).set(**{w0: f"np.broadcast_to({mk0((1,) + shape0[1:])}, {shape0!r})"})
              .probe(f"{w0}-broadcast-view", must_refuse="a read-only broadcast view as a written argument", arg=(w0,)))
    elif not inplace:
        g.add(OpCall(fw, op, overload).set(**{w0: f"torch.empty({shape0!r}, dtype=torch.{dtype0}, device='meta')"})
              .probe(f"{w0}-meta", must_refuse="a meta out with CPU inputs", arg=(w0,)))
    if not inplace:
        g.add(OpCall(fw, op, overload).set(**{w0: "None"}).probe(f"{w0}-None", arg=(w0,)))
        c = OpCall(fw, op, overload)
        c.drop = list(written)
        g.add(c.probe("outs-missing", arg=written))


def gen_aliasing(g: Gen, fw: Fw, op: str, overload: str, written: Sequence[str], deep: bool) -> None:
    """Written arguments that are, or partially overlap, another argument."""
    first = _first_tensor(op)
    inplace = overload == "default"
    shapes = tensor_shapes(op, (4, 8))
    outs = {} if inplace else out_shapes(op, (4, 8), "float32")
    w0 = written[0]
    same_as_input = inplace or outs[w0] == (shapes[first], "float32")
    flat = "np.ascontiguousarray(rnd((64,)))" if fw.name == "numpy" else "trnd((64,))"
    if same_as_input and (deep or fw.name == "numpy"):
        # Exactly the input.
        c = OpCall(fw, op, overload)
        c.setup = f"a = {fw.mk(shapes[first])}"
        c.set(**{first: "a", (written[1] if inplace else w0): "a"})
        g.add(c.probe(f"{'residual' if inplace else w0}-is-{first}", key=True, arg=(w0, first) + tuple(written)))
    if same_as_input:
        # The same memory as the input, through another array / tensor object.
        target = written[1] if inplace else w0
        c = OpCall(fw, op, overload)
        c.setup = f"a = {fw.mk(shapes[first])}"
        c.set(**{first: "a", target: "a[:]"})
        g.add(c.probe(f"{target}-is-view-of-{first}", key=True, arg=(w0, first) + tuple(written)))
        # Shifted by 4 elements inside one buffer.
        c = OpCall(fw, op, overload)
        c.setup = f"buf = {flat}"
        c.set(**{first: "buf[:32].reshape(4, 8)", (written[1] if inplace else w0): "buf[4:36].reshape(4, 8)"})
        g.add(c.probe(f"{'residual' if inplace else w0}-overlaps-{first}-shifted", key=True,
                      arg=(w0, first) + tuple(written)))
    second = _second_tensor(op)
    if second and shapes.get(second) == shapes[first] and not inplace and deep:
        c = OpCall(fw, op, overload)
        c.setup = f"buf = {flat}"
        c.set(**{second: "buf[:32].reshape(4, 8)", w0: "buf[8:40].reshape(4, 8)"})
        g.add(c.probe(f"{w0}-overlaps-{second}-shifted", arg=(w0, second)))
    if len(written) > 1 and not inplace and outs[written[0]] == outs[written[1]]:
        c = OpCall(fw, op, overload)
        c.setup = f"b = {fw.zeros(outs[w0][0], outs[w0][1])}"
        c.set(**{written[0]: "b", written[1]: "b"})
        g.add(c.probe("two-outs-same-tensor", key=fw.name == "numpy", arg=tuple(written)))
        c = OpCall(fw, op, overload)
        c.setup = f"b = {fw.zeros(outs[w0][0], outs[w0][1])}"
        c.set(**{written[0]: "b", written[1]: "b[:]"})
        g.add(c.probe("two-outs-same-memory", key=True, arg=tuple(written)))
    if inplace:
        c = OpCall(fw, op, overload)
        c.setup = f"buf = {flat}"
        c.set(input="buf[:32].reshape(4, 8)", weight="buf[:8]")
        g.add(c.probe("weight-inside-input", arg=("weight", "input")))
        t = ".T" if fw.name == "numpy" else ".t()"
        c = OpCall(fw, op, overload).set(input=f"{fw.mk((8, 4))}{t}")
        g.add(c.probe("input-transposed", arg=("input",)))


def gen_op_lookup(g: Gen) -> None:
    """opreg.ops attribute lookups and overload objects."""
    cases = [
        ("missing-op", "o.no_such_op", ("no_such_op",)),
        ("missing-namespace-op", "opreg.ops.no_such_ns.op", ("no_such_ns",)),
        ("missing-overload", "o.add.no_such_overload", ("no_such_overload",)),
        ("odd-name", "getattr(o, 'add.out')", ("add.out",)),
        ("unicode-name", "getattr(o, 'äðð')", ("äðð",)),
        ("long-name", "getattr(o, 'x' * 10**6)", ("xxxx",)),
        ("empty-namespace", "getattr(opreg.ops, '')", ("namespace", "''")),
        ("schema-of-missing", "opreg.schema('nowhere::nothing')", ("nowhere::nothing",)),
        ("schema-of-empty", "opreg.schema('')", ("''", "name")),
        ("schema-of-long", "opreg.schema('a::' + 'b' * 10**6)", ("a::bbb",)),
        ("dump-op-overload-dot", "opreg.dump_op('opreg::add.')", ("opreg::add.",)),
        ("dump-op-nul", "opreg.dump_op('opreg::add\\x00.out')", ("opreg::add",)),
        ("default-overload-call", "o.add.default(rnd((2, 3)), rnd((2, 3), seed=1))", ()),
        ("opoverload-by-string", "opreg.OpOverload('opreg::add.nope')", ("opreg::add.nope",)),
        ("oppacket-by-bad-string", "opreg.OpPacket('no_separator')", ("no_separator",)),
    ]
    for pid, call, tokens in cases:
        expect = ""
        if pid == "default-overload-call":
            expect = "chk_values(r, rnd((2, 3)) + rnd((2, 3), seed=1))"
        g.add(Probe(id=f"op-lookup/{pid}", surface="op-lookup", call=call, expect=expect,
                    op_tokens=tokens, arg_tokens=()))


def gen_constructors(g: Gen) -> None:
    """opreg.empty / zeros / ones / full / arange / empty_like / from_dlpack / tensor."""
    sizes = [("neg", "(-1,)"), ("2**31", "(2**31,)"), ("2**62", "(2**62,)"), ("2**63-1", "(2**63-1,)"),
             ("2**63", "(2**63,)"), ("-2**63", "(-2**63,)"), ("numel-overflow", "(2**31, 2**31, 2**31)"),
             ("bytes-overflow", "(2**31, 2**31)"), ("float", "(2.5,)"), ("str", "('3',)"),
             ("None", "None"), ("nested", "((2,), 3)"), ("bool", "(True, 2)"), ("1000-dims", "(1,) * 1000"),
             ("100k-dims", "(1,) * 100000"), ("zero", "(0, 5)"), ("np-int", "(np.int64(3),)"),
             ("np-uint64-max", "(np.uint64(2**64-1),)")]
    for pid, shape in sizes:
        for ctor in ("empty", "zeros"):
            if ctor == "zeros" and pid not in ("neg", "2**63-1", "bytes-overflow", "float", "100k-dims"):
                continue  # zeros would touch 8 GiB; the rest repeat empty's parsing
            want = _ctor_expect(shape)
            g.add(Probe(id=f"constructors/{ctor}-{pid}", surface="constructors",
                        call=f"opreg.{ctor}({shape}, 'float32')", expect=want,
                        key=pid in ("bytes-overflow", "2**63-1", "neg"),
                        op_tokens=(ctor, "shape", "size"), arg_tokens=("shape", "size", "sizes", "dim")))
    dtypes = ["'bogus'", "''", "5", "np.float32", "'complex64'", "'flöat32'", "'x' * 10**6",
              "'float32\\x00junk'", "object()", "'FLOAT32'"]
    for dt in dtypes:
        g.add(Probe(id=f"constructors/empty-dtype-{dt[:20]}", surface="constructors",
                    call=f"opreg.empty((2, 3), {dt})", expect=f"chk_dtype_echo(r, (2, 3), {dt})",
                    op_tokens=("empty", "dtype"), arg_tokens=("dtype",)))
    fulls = [("nan", "float('nan')", "'float32'"), ("inf", "float('inf')", "'float32'"),
             ("int8-300", "300", "'int8'"), ("int8-neg-129", "-129", "'int8'"), ("uint8-neg", "-1", "'uint8'"),
             ("int64-2**63", "2**63", "'int64'"), ("int64-2**63-1", "2**63-1", "'int64'"),
             ("int32-1.5", "1.5", "'int32'"), ("bool-2", "2", "'bool'"), ("f16-1e5", "1e5", "'float16'"),
             ("f32-1e39", "1e39", "'float32'"), ("int8-nan", "float('nan')", "'int8'"),
             ("str", "'x'", "'float32'"), ("complex", "1j", "'float32'"), ("None", "None", "'float32'"),
             ("f8-1000", "1000.0", "'float8_e4m3fn'")]
    for pid, value, dt in fulls:
        g.add(Probe(id=f"constructors/full-{pid}", surface="constructors",
                    call=f"opreg.full((3,), {value}, {dt})", expect=f"chk_full(r, {value}, {dt})",
                    key=pid in ("int8-300", "int64-2**63-1", "int32-1.5"),
                    op_tokens=("full",), arg_tokens=("fill_value", "value", "fill")))
    aranges = [("neg", "-5"), ("2**62", "2**62"), ("2**63", "2**63"), ("float", "2.5"), ("nan", "float('nan')"),
               ("str", "'5'"), ("zero", "0"), ("ten", "10"), ("int8-200", "200, 'int8'"), ("bool", "True")]
    for pid, a in aranges:
        g.add(Probe(id=f"constructors/arange-{pid}", surface="constructors", call=f"opreg.arange({a})",
                    expect=f"chk_arange(r, {a})", key=pid == "int8-200",
                    op_tokens=("arange",), arg_tokens=("end", "size", "dtype", "value")))
    dl = [("int", "3", ()), ("None", "None", ()), ("str", "'abc'", ()), ("list", "[1.0, 2.0]", ()),
          ("bad-dlpack-method", "type('X', (), {'__dlpack__': lambda self, **k: 42, '__dlpack_device__': lambda self: (1, 0)})()", ()),
          ("raising-dlpack", "type('X', (), {'__dlpack__': lambda self, **k: 1/0, '__dlpack_device__': lambda self: (1, 0)})()", ()),
          ("weird-device", "type('X', (), {'__dlpack__': lambda self, **k: rnd((2,)).__dlpack__(), '__dlpack_device__': lambda self: (99, -7)})()", ()),
          ("readonly-numpy", "ro(rnd((2, 3)))", ()), ("bigendian-numpy", "rnd((2, 3)).astype('>f4')", ()),
          ("object-array", "np.array([1, 'a'], dtype=object)", ()),
          ("structured", "np.zeros(3, dtype=[('a', 'f4'), ('b', 'i4')])", ()),
          ("datetime", "np.arange(3).astype('datetime64[s]')", ()), ("strings", "np.array(['ab', 'cd'])", ()),
          ("negative-strides", "rnd((4, 3))[::-1]", ()), ("stride-0", "np.broadcast_to(rnd((1, 3)), (4, 3))", ()),
          ("0-dim", "np.array(3.5, np.float32)", ()), ("misaligned", "misaligned((5,))", ()),
          ("capsule-twice", "(lambda c: (opreg.from_dlpack(c), opreg.from_dlpack(c)))(rnd((2,)).__dlpack__())", ())]
    for pid, src, _ in dl:
        expect = f"chk_values(r, {src})" if pid in ("readonly-numpy", "bigendian-numpy", "negative-strides",
                                                     "stride-0", "0-dim", "misaligned") else ""
        must = "a capsule used twice" if pid == "capsule-twice" else ""
        g.add(Probe(id=f"constructors/from_dlpack-{pid}", surface="constructors",
                    call=f"opreg.from_dlpack({src})", expect=expect, must_refuse=must,
                    key=pid in ("capsule-twice", "bigendian-numpy", "bad-dlpack-method"),
                    op_tokens=("dlpack",), arg_tokens=()))
    tens = [("ragged", "[[1, 2], [3]]", ""), ("strings", "['a', 'b']", ""), ("huge-int", "[2**70]", ""),
            ("deep", "eval('[' * 200 + '1' + ']' * 200)", ""), ("None", "None", ""),
            ("bad-dtype", "[1, 2], 'bogus'", ""), ("int8-overflow", "[300], 'int8'", ""),
            ("float", "[1.5, 2.5]", "chk_values(r, np.array([1.5, 2.5], np.float32), 'float32')"),
            ("tensor-copy", "opreg.ones((2,))", "chk_values(r, np.ones(2, np.float32))")]
    for pid, src, expect in tens:
        g.add(Probe(id=f"constructors/tensor-{pid}", surface="constructors", call=f"opreg.tensor({src})",
                    expect=expect or "chk_tensor_data(r)", op_tokens=("tensor",), arg_tokens=()))
    likes = [("int", "3"), ("None", "None"), ("meta-shape", "opreg.empty((2,), device='meta')"),
             ("bogus-device", "opreg.ones((2,)), device='tpu'")]
    for pid, src in likes:
        g.add(Probe(id=f"constructors/empty_like-{pid}", surface="constructors", call=f"opreg.empty_like({src})",
                    expect="chk_accepted(r)", op_tokens=("empty_like", "like", "device"), arg_tokens=()))
    for dev in ("'tpu'", "'cuda:99'", "'cpu:-5'", "'meta:x'", "5", "''", "'cpu' * 10**5"):
        g.add(Probe(id=f"constructors/empty-device-{dev[:14]}", surface="constructors",
                    call=f"opreg.empty((2,), 'float32', {dev})", expect="chk_accepted(r)",
                    op_tokens=("device", "cuda", "tpu", "meta", "cpu"), arg_tokens=()))


def _ctor_expect(shape: str) -> str:
    return f"chk_ctor(r, {shape})"


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
        if not isinstance(value, (bool, numbers.Integral)) and not (isinstance(value, float) and value.is_integer()):
            return f"filled {dtype} with {v.ravel()[:1].tolist()} for the non-integral {value!r}"
        info = (np.iinfo(dtype).min, np.iinfo(dtype).max)
        if not info[0] <= int(value) <= info[1]:
            return f"filled {dtype} with {v.ravel()[:1].tolist()} for {value!r}, which {dtype} cannot hold"
        return None if (v.astype(object) == int(value)).all() else f"values {v.tolist()}, want {value!r}"
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


def chk_tensor_shape(r: Any) -> Optional[str]:
    return f"unchecked: accepted, shape {list(r.shape)} on {r.device}"


def gen_tensor_methods(g: Gen) -> None:
    """opreg.Tensor methods with hostile arguments."""
    calls = [
        ("narrow-huge-start", "otnd((4, 3)).narrow(0, 2**62, 1)", ""),
        ("narrow-negative-length", "otnd((4, 3)).narrow(0, 1, -2)", ""),
        ("narrow-overflow", "otnd((4, 3)).narrow(0, 2**63-1, 2)", ""),
        ("narrow-bad-dim", "otnd((4, 3)).narrow(5, 0, 1)", ""),
        ("narrow-valid", "otnd((4, 3)).narrow(0, 1, 2)", "chk_values(r, rnd((4, 3))[1:3])"),
        ("select-out-of-range", "otnd((4, 3)).select(0, 4)", ""),
        ("select-negative", "otnd((4, 3)).select(0, -5)", ""),
        ("select-valid-negative", "otnd((4, 3)).select(0, -1)", "chk_values(r, rnd((4, 3))[-1])"),
        ("select-bad-dim", "otnd((4, 3)).select(-3, 0)", ""),
        ("reshape-two-minus-one", "otnd((4, 3)).reshape((-1, -1))", ""),
        ("reshape-wrong-numel", "otnd((4, 3)).reshape((5, 3))", ""),
        ("reshape-huge", "otnd((4, 3)).reshape((2**62, 0))", ""),
        ("reshape-valid", "otnd((4, 3)).reshape((3, -1))", "chk_values(r, rnd((4, 3)).reshape(3, 4))"),
        ("view-dtype-str", "otnd((4, 3)).view('uint8')", ""),
        ("view-bogus", "otnd((4, 3)).view('bogus')", ""),
        ("view-valid", "otnd((4, 3)).view((12,))", "chk_values(r, rnd((4, 3)).reshape(12))"),
        ("view-noncontiguous", "opreg.from_dlpack(rnd((4, 3)).T).view((12,))", ""),
        ("copy-shape-mismatch", "otnd((4, 3)).copy_(otnd((3, 4)))", ""),
        ("copy-dtype", "otnd((4, 3)).copy_(otnd((4, 3), 'int8'))", "chk_values(r, rnd((4, 3), 'int8').astype(np.float32))"),
        ("copy-readonly-dst", "opreg.from_dlpack(ro(rnd((4, 3)))).copy_(otnd((4, 3), seed=1))", ""),
        ("copy-self-overlap", "(lambda t: t.narrow(0, 1, 3).copy_(t.narrow(0, 0, 3)))(otnd((4, 3)))",
         "chk_values(r, rnd((4, 3))[0:3])"),
        ("item-multi", "otnd((4, 3)).item()", ""),
        ("item-empty", "otnd((0,)).item()", ""),
        ("numpy-bf16", "opreg.empty((2,), 'bfloat16').numpy()", ""),
        ("numpy-meta", "opreg.empty((2,), 'float32', 'meta').numpy()", ""),
        ("new-empty-huge", "otnd((2,)).new_empty((2**62,))", ""),
        ("new-empty-neg", "otnd((2,)).new_empty((-3,))", ""),
        ("size-bad-dim", "otnd((4, 3)).size(7)", ""),
        ("contiguous-of-expanded", "opreg.from_dlpack(np.broadcast_to(rnd((1, 3)), (4, 3))).contiguous()",
         "chk_values(r, np.broadcast_to(rnd((1, 3)), (4, 3)))"),
        ("clone-meta", "opreg.empty((2,), 'float32', 'meta').clone()", "chk_accepted(r)"),
    ]
    must_refuse = {"copy-readonly-dst": "writing into a read-only NumPy array",
                   "copy-shape-mismatch": "copying a [3, 4] tensor into a [4, 3] one",
                   "item-multi": "item() of a 12-element tensor", "item-empty": "item() of an empty tensor",
                   "new-empty-neg": "a negative size", "size-bad-dim": "dim 7 of a 2-dim tensor",
                   "reshape-two-minus-one": "two -1 sizes", "reshape-wrong-numel": "15 elements for 12",
                   "reshape-huge": "0 elements for 12", "narrow-bad-dim": "dim 5 of a 2-dim tensor",
                   "select-bad-dim": "dim -3 of a 2-dim tensor"}
    for pid in ("narrow-huge-start", "narrow-negative-length", "narrow-overflow", "select-out-of-range",
                "select-negative"):
        must_refuse[pid] = "an out-of-range view (its elements lie outside the tensor's memory)"
    for pid, call, expect in calls:
        method = {"new": "new_empty", "item": "item(", "copy": "copy_"}.get(pid.split("-")[0], pid.split("-")[0])
        must = must_refuse.get(pid, "")
        if pid == "view-noncontiguous":
            expect = "chk_values(r, rnd((4, 3)).T.reshape(12))"
        g.add(Probe(id=f"tensor-methods/{pid}", surface="tensor-methods", call=call,
                    expect=expect or "chk_accepted(r)", must_refuse=must,
                    key=pid in ("narrow-overflow", "copy-readonly-dst", "reshape-huge"),
                    op_tokens=(method,), arg_tokens=()))


HOSTILE_SCHEMAS: List[Tuple[str, str]] = [
    ("valid", "hx{i}(Tensor x, int k=2) -> Tensor"),
    ("valid-mutating", "hx{i}(Tensor(a!) x) -> ()"),
    ("empty", ""),
    ("truncated-args", "hx{i}(Tensor x"),
    ("truncated-arrow", "hx{i}(Tensor x) ->"),
    ("truncated-type", "hx{i}(Ten"),
    ("only-paren", "("),
    ("no-name", "(Tensor x) -> Tensor"),
    ("digit-name", "1hx{i}(Tensor x) -> Tensor"),
    ("unicode-name", "hë{i}(Tensor x) -> Tensor"),
    ("cjk-name", "名前{i}(Tensor x) -> Tensor"),
    ("unicode-arg", "hx{i}(Tensor ẍ) -> Tensor"),
    ("long-name-1e6", "h{i}" + "x" * 10**6 + "(Tensor x) -> Tensor"),
    ("long-arg-1e6", "hx{i}(Tensor " + "y" * 10**6 + ") -> Tensor"),
    ("many-args-1e5", "hx{i}(" + ", ".join(f"Tensor a{j}" for j in range(100000)) + ") -> ()"),
    ("dup-args", "hx{i}(Tensor x, Tensor x) -> Tensor"),
    ("dup-returns", "hx{i}(Tensor x) -> (Tensor a, Tensor a)"),
    ("alias-unclosed", "hx{i}(Tensor(a! x) -> Tensor"),
    ("alias-empty", "hx{i}(Tensor(!) x) -> Tensor"),
    ("alias-twice-written", "hx{i}(Tensor(a!) x, Tensor(a!) y) -> Tensor(a!)"),
    ("alias-arrow", "hx{i}(Tensor(a -> b) x) -> Tensor"),
    ("alias-star", "hx{i}(Tensor(*) x) -> Tensor"),
    ("alias-on-int", "hx{i}(int(a!) x) -> ()"),
    ("alias-return-unknown", "hx{i}(Tensor x) -> Tensor(z!)"),
    ("int-default-overflow", "hx{i}(int x=99999999999999999999999) -> ()"),
    ("float-default-1e400", "hx{i}(float x=1e400) -> ()"),
    ("float-default-nan", "hx{i}(float x=nan) -> ()"),
    ("str-default-unterminated", "hx{i}(str s='abc) -> ()"),
    ("str-default-escapes", "hx{i}(str s='\\x00\\n\\u1234') -> ()"),
    ("list-size-huge", "hx{i}(int[99999999999999999999] x) -> ()"),
    ("list-size-2**62", "hx{i}(int[4611686018427387904] x=1) -> ()"),
    ("list-size-negative", "hx{i}(int[-2] x) -> ()"),
    ("default-before-required", "hx{i}(Tensor? x=None, Tensor y) -> ()"),
    ("double-star", "hx{i}(*, *, Tensor x) -> ()"),
    ("trailing-star", "hx{i}(Tensor x, *) -> ()"),
    ("nul-in-name", "hx{i}\0(Tensor x) -> ()"),
    ("newline-inside", "hx{i}(Tensor x)\n -> Tensor"),
    ("two-dots", "hx{i}.a.b(Tensor x) -> ()"),
    ("empty-overload", "hx{i}.(Tensor x) -> ()"),
    ("empty-namespace", "::hx{i}(Tensor x) -> ()"),
    ("other-namespace", "otherns{i}::hx{i}(Tensor x) -> ()"),
    ("unknown-type", "hx{i}(Tensr x) -> ()"),
    ("list-of-list", "hx{i}(Tensor[][][] x) -> ()"),
    ("optional-chain", "hx{i}(Tensor" + "?" * 1000 + " x) -> ()"),
    ("list-chain-1e5", "hx{i}(Tensor" + "[]" * 100000 + " x) -> ()"),
    ("paren-nesting-1e5", "hx{i}(" + "(" * 100000),
    ("return-nesting-1e5", "hx{i}(Tensor x) -> " + "(" * 100000),
    ("tuple-nesting-200", "hx{i}(Tensor x) -> " + "(" * 200 + "Tensor" + ")" * 200),
    ("dict-nesting-1e4", "hx{i}(" + "Dict(str, " * 10000 + "Tensor" + ")" * 10000 + " x) -> ()"),
    ("list-default-nesting-1e5", "hx{i}(int[] x=" + "[" * 100000 + ") -> ()"),
    ("future-nesting", "hx{i}(" + "Future(" * 5000 + "Tensor" + ")" * 5000 + " x) -> ()"),
    ("junk-1e6", "x" * 10**6),
    ("junk-binary", "hx{i}(\xff\xfe\x01)"),
    ("vararg", "hx{i}(...) -> ..."),
    ("keyword-as-name", "hx{i}(Tensor Tensor) -> ()"),
    ("whitespace-only", " \t "),
]


def gen_schema_probes(g: Gen) -> None:
    """Library.define, opreg.library.define and opreg._C._schema_info with hostile text."""
    for i, (pid, text) in enumerate(HOSTILE_SCHEMAS):
        s = text.replace("{i}", str(i))
        ns = f"hostile_ns{i}"
        key = pid in ("paren-nesting-1e5", "return-nesting-1e5", "dict-nesting-1e4", "long-name-1e6",
                      "dup-args", "alias-unclosed", "list-default-nesting-1e5", "list-chain-1e5", "valid")
        setup = f"_lib = opreg.Library('{ns}', 'FRAGMENT'); _text = SCHEMA_TEXTS[{i}]"
        g.add(Probe(id=f"schema/define-{pid}", surface="schema", key=key, setup=setup,
                    call="_lib.define(_text)",
                    expect=f"chk_schema('{ns}::' + r, _text)",
                    op_tokens=("col", "column", "schema", "define", f"hx{i}"), arg_tokens=()))
        if pid in ("valid", "paren-nesting-1e5", "return-nesting-1e5", "dict-nesting-1e4", "list-chain-1e5",
                   "list-default-nesting-1e5", "future-nesting", "nul-in-name", "junk-binary"):
            g.add(Probe(id=f"schema/schema_info-{pid}", surface="schema",
                        setup=f"_text = SCHEMA_TEXTS[{i}]", call="opreg._C._schema_info(_text)",
                        expect="None", op_tokens=("col", "schema"), arg_tokens=()))
    # The reprs above read SCHEMA_TEXTS[i]: HOSTILE_SCHEMAS[i] with {i} replaced by i.
    libs = [("ns-empty", "opreg.Library('', 'FRAGMENT')"), ("ns-colons", "opreg.Library('a::b', 'FRAGMENT')"),
            ("ns-unicode", "opreg.Library('ünï', 'FRAGMENT')"), ("ns-long", "opreg.Library('n' * 10**6, 'FRAGMENT')"),
            ("ns-digit", "opreg.Library('1ns', 'FRAGMENT')"), ("ns-None", "opreg.Library(None, 'FRAGMENT')"),
            ("ns-opreg-DEF", "opreg.Library('opreg', 'DEF')"), ("kind-bogus", "opreg.Library('hostile_k', 'BOGUS')"),
            ("kind-lower", "opreg.Library('hostile_k2', 'def')"),
            ("impl-bad-key", "opreg.Library('hostile_k3', 'IMPL', 'NoSuchKey')"),
            ("impl-unknown-op", "opreg.Library('opreg', 'IMPL', 'CPU').impl('no_such_op', lambda x: x)"),
            ("impl-not-callable", "opreg.Library('opreg', 'IMPL', 'CPU').impl('add', 42)"),
            ("define-twice", "(lambda l: (l.define('twice(Tensor x) -> Tensor'), l.define('twice(Tensor x) -> Tensor')))(opreg.Library('hostile_twice', 'FRAGMENT'))"),
            ("define-bad-tag", "opreg.Library('hostile_tag', 'FRAGMENT').define('t(Tensor x) -> Tensor', tags=('no_such_tag',))"),
            ("define-alias-analysis", "opreg.Library('hostile_aa', 'FRAGMENT').define('t(Tensor x) -> Tensor', 'BOGUS')"),
            ("module-define-no-ns", "opreg.library.define('noqualifier', '(Tensor x) -> Tensor')"),
            ("module-define-bad-schema", "opreg.library.define('hostile_md::f', '(Tensor x -> Tensor')"),
            ("symm-args-unknown", "(lambda l: (l.define('sm(Tensor x) -> Tensor'), l.register_symm_mem_args('sm', ['nope'])))(opreg.Library('hostile_sm', 'FRAGMENT'))"),
            ("link-out-unknown", "(lambda l: (l.define('lo(Tensor x) -> Tensor'), l.link_out_variant('lo', 'lo_out', ['out'])))(opreg.Library('hostile_lo', 'FRAGMENT'))")]
    for pid, call in libs:
        g.add(Probe(id=f"schema/library-{pid}", surface="schema", call=call,
                    expect="'unchecked: accepted'" if pid not in ("ns-opreg-DEF", "define-twice") else "'accepted a second owner/definition'",
                    key=pid in ("ns-opreg-DEF", "define-twice", "impl-unknown-op"),
                    op_tokens=("library", "namespace", "ns", "kind", "define", "impl", "op", "schema", "tag",
                               "dispatch", "callable", "alias_analysis"),
                    arg_tokens=()))


def gen_custom_op_probes(g: Gen) -> None:
    """opreg.custom_op with hostile names, mutates_args and functions."""
    fn = "def f(x: opreg.Tensor) -> opreg.Tensor:\n    return x.clone()"
    cases = [
        ("no-separator", fn, "opreg.custom_op('noseparator', f, mutates_args=())", ""),
        ("empty-name", fn, "opreg.custom_op('hostile_co::', f, mutates_args=())", ""),
        ("empty-ns", fn, "opreg.custom_op('::f', f, mutates_args=())", ""),
        ("long-name", fn, "opreg.custom_op('hostile_co::' + 'f' * 10**6, f, mutates_args=())", ""),
        ("unicode-name", fn, "opreg.custom_op('hostile_co::fü', f, mutates_args=())", ""),
        ("mutates-bogus", fn, "opreg.custom_op('hostile_co::mb', f, mutates_args=('nope',))", ""),
        ("mutates-str", fn, "opreg.custom_op('hostile_co::ms', f, mutates_args='bogus')", ""),
        ("mutates-missing", fn, "opreg.custom_op('hostile_co::mm', f)", ""),
        ("no-annotations", "def f(x):\n    return x", "opreg.custom_op('hostile_co::na', f, mutates_args=())", ""),
        ("varargs", "def f(*xs: opreg.Tensor) -> opreg.Tensor:\n    return xs[0]",
         "opreg.custom_op('hostile_co::va', f, mutates_args=())", ""),
        ("kwargs", "def f(x: opreg.Tensor, **kw) -> opreg.Tensor:\n    return x",
         "opreg.custom_op('hostile_co::kw', f, mutates_args=())", ""),
        ("unsupported-type", "def f(x: dict) -> opreg.Tensor:\n    return x",
         "opreg.custom_op('hostile_co::ut', f, mutates_args=())", ""),
        ("bad-default", "def f(x: opreg.Tensor, n: int = 'a') -> opreg.Tensor:\n    return x",
         "opreg.custom_op('hostile_co::bd', f, mutates_args=())", ""),
        ("not-callable", "", "opreg.custom_op('hostile_co::nc', 42, mutates_args=())", ""),
        ("device-types-bogus", fn, "opreg.custom_op('hostile_co::dt', f, mutates_args=(), device_types='tpu')", ""),
        ("valid", fn, "opreg.custom_op('hostile_co::valid', f, mutates_args=())",
         "chk_custom(r, rnd((2, 3)), rnd((2, 3)))"),
        ("name-is-builtin", fn, "opreg.custom_op('opreg::add', f, mutates_args=())", ""),
        ("schema-string-hostile", fn, "opreg.custom_op('hostile_co::ss', f, mutates_args=(), schema='(Tensor x -> Tensor')", ""),
    ]
    for pid, setup, call, expect in cases:
        g.add(Probe(id=f"custom_op/{pid}", surface="custom_op", setup=setup, call=call,
                    expect=expect or "'unchecked: definition accepted'",
                    must_refuse="redefining opreg::add" if pid == "name-is-builtin" else "",
                    key=pid in ("name-is-builtin", "valid", "mutates-bogus"),
                    op_tokens=("custom_op", "infer_schema", "name", "schema", "mutates_args", "device", "column"),
                    arg_tokens=()))


def gen_load_library_probes(g: Gen) -> None:
    """opreg.load_library on hostile paths (files made in a temp dir by the probe's setup)."""
    mk = "import tempfile, os; _d = tempfile.mkdtemp(prefix='opreg_probe_')"
    build = REPO_ROOT / "build" / "release" / "tests" / "cpp"
    cases = [
        ("directory", f"{mk}", "opreg.load_library(_d)", ("directory", "not a file", "regular file")),
        ("text-file", f"{mk}; open(_d + '/t.so', 'w').write('hello')", "opreg.load_library(_d + '/t.so')", ()),
        ("empty-file", f"{mk}; open(_d + '/e.so', 'w').close()", "opreg.load_library(_d + '/e.so')", ()),
        ("dev-zero", "", "opreg.load_library('/dev/zero')", ("not a regular file", "device", "not a file")),
        ("dev-null", "", "opreg.load_library('/dev/null')", ("not a regular file", "device", "not a file")),
        ("fifo", f"{mk}; os.mkfifo(_d + '/f.so')", "opreg.load_library(_d + '/f.so')", ("fifo", "pipe", "not a regular file", "not a file")),
        ("missing", "", "opreg.load_library('/nonexistent/libnothing.so')", ()),
        ("symlink-loop", f"{mk}; os.symlink(_d + '/b', _d + '/a'); os.symlink(_d + '/a', _d + '/b')",
         "opreg.load_library(_d + '/a')", ("loop", "symbolic", "symlink")),
        ("truncated-elf", f"{mk}; open(_d + '/t.so', 'wb').write(open('{build}/libopreg_test_plugin.so', 'rb').read(200))",
         "opreg.load_library(_d + '/t.so')", ()),
        ("elf-magic-garbage", f"{mk}; open(_d + '/g.so', 'wb').write(b'\\x7fELF' + b'\\xff' * 4000)",
         "opreg.load_library(_d + '/g.so')", ()),
        ("executable", "", "opreg.load_library('/bin/true')", ()),
        ("nul-in-path", "", "opreg.load_library('/tmp/a\\x00b.so')", ()),
        ("int-path", "", "opreg.load_library(3)", ("path",)),
        ("None-path", "", "opreg.load_library(None)", ("path",)),
        ("long-path", "", "opreg.load_library('/tmp/' + 'x' * 5000 + '.so')", ()),
        ("broken-plugin", "", f"opreg.load_library('{build}/libopreg_test_plugin_broken.so')", ("registration",)),
    ]
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                             "/lib64/libm.so.6", "/usr/lib64/libm.so.6") if os.path.exists(p)), None)
    if libm:
        cases.append(("unrelated-lib", "", f"opreg.load_library('{libm}')", ()))
    for pid, setup, call, must_say in cases:
        must = "" if pid == "unrelated-lib" else (
            "a library with failing registrations, silently" if pid == "broken-plugin" else "a path that is no loadable library")
        g.add(Probe(id=f"load_library/{pid}", surface="load_library", setup=setup, call=call,
                    expect="None", must_refuse=must, key=pid in ("fifo", "dev-zero", "directory", "truncated-elf"),
                    op_tokens=("load_library", "libopreg_test_plugin_broken"), arg_tokens=must_say))


def gen_symm_mem_probes(g: Gen) -> None:
    """opreg.symm_mem in one process: no group, hostile group parameters, a lone rank."""
    mk = "import tempfile, os; _d = tempfile.mkdtemp(prefix='opreg_sm_')"
    grp = f"{mk}; import opreg.symm_mem as sm; _g = 'hg_' + os.path.basename(_d); sm.create_group(_g, 0, 1, _d, timeout_s=2)"
    sym = f"{grp}; _x = sm.empty((4,), 'float32', _g); _x.numpy()[:] = np.arange(4)"
    cases = [
        ("empty-no-group", "import opreg.symm_mem as sm", "sm.empty((4,), 'float32', 'no_such_group')", "", ("no_such_group",)),
        ("info-no-group", "import opreg.symm_mem as sm", "sm.group_info('no_such_group')", "", ("no_such_group",)),
        ("destroy-no-group", "import opreg.symm_mem as sm", "sm.destroy_group('no_such_group')", "", ("no_such_group",)),
        ("allreduce-no-group", "", "opreg.ops.symm_mem.one_shot_all_reduce(rnd((4,)), 'sum', 'no_such_group')", "", ("no_such_group", "input")),
        ("allreduce-no-args", "", "opreg.ops.symm_mem.one_shot_all_reduce()", "", ("input",)),
        ("world-0", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hw0', 0, 0, _d, timeout_s=1)", "", ("world_size", "world")),
        ("world-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hwn', 0, -1, _d, timeout_s=1)", "", ("world_size", "world")),
        ("world-2**31", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hwh', 0, 2**31, _d, timeout_s=1)", "", ("world_size", "world")),
        ("rank-eq-world", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hrw', 1, 1, _d, timeout_s=1)", "", ("rank",)),
        ("rank-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hrn', -1, 1, _d, timeout_s=1)", "", ("rank",)),
        ("store-missing", "import opreg.symm_mem as sm", "sm.create_group('hsm', 0, 1, '/nonexistent/store', timeout_s=1)", "", ("store", "/nonexistent/store")),
        ("store-is-file", "import opreg.symm_mem as sm", "sm.create_group('hsf', 0, 1, '/etc/hostname', timeout_s=1)", "", ("store", "/etc/hostname")),
        ("store-dev-null", "import opreg.symm_mem as sm", "sm.create_group('hsd', 0, 1, '/dev/null', timeout_s=1)", "", ("store", "/dev/null")),
        ("timeout-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('htn', 0, 1, _d, timeout_s=-1)", "", ("timeout_s",)),
        ("timeout-nan", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('htnan', 0, 1, _d, timeout_s=float('nan'))", "", ("timeout_s",)),
        ("timeout-inf", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('htinf', 0, 1, _d, timeout_s=float('inf'))", "sm_ok(r, 'htinf')", ("timeout_s",)),
        ("heap-neg", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hhn', 0, 1, _d, timeout_s=1, heap_bytes=-1)", "", ("heap_bytes",)),
        ("heap-zero", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hhz', 0, 1, _d, timeout_s=1, heap_bytes=0)", "sm_ok(r, 'hhz')", ("heap_bytes",)),
        ("heap-2**62", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hhh', 0, 1, _d, timeout_s=1, heap_bytes=2**62)", "sm_ok(r, 'hhh')", ("heap_bytes", "heap")),
        ("heap-2**64", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hh64', 0, 1, _d, timeout_s=1, heap_bytes=2**64)", "", ("heap_bytes",)),
        ("channels-0", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hc0', 0, 1, _d, timeout_s=1, max_channels=0)", "sm_ok(r, 'hc0')", ("max_channels",)),
        ("channels-2**31", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hch', 0, 1, _d, timeout_s=1, max_channels=2**31)", "sm_ok(r, 'hch')", ("max_channels",)),
        ("name-empty", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('', 0, 1, _d, timeout_s=1)", "sm_ok(r, '')", ("name",)),
        ("name-long", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('g' * 100000, 0, 1, _d, timeout_s=1)", "sm_ok(r, 'g' * 100000)", ("name",)),
        ("name-slashes", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('../../etc/x', 0, 1, _d, timeout_s=1)", "sm_ok(r, '../../etc/x')", ("name",)),
        ("lone-rank-of-2", f"{mk}; import opreg.symm_mem as sm", "sm.create_group('hlone', 0, 2, _d, timeout_s=1)", "", ("rank", "peer", "timed out", "timeout")),
        ("twice", f"{grp}", "sm.create_group(_g, 0, 1, _d, timeout_s=1)", "", ("already", "exists")),
        ("empty-neg-size", f"{grp}", "sm.empty((-4,), 'float32', _g)", "", ("shape", "size")),
        ("empty-huge", f"{grp}", "sm.empty((2**62,), 'float32', _g)", "", ("shape", "size", "heap", "bytes")),
        ("empty-bytes-overflow", f"{grp}", "sm.empty((2**31, 2**31), 'float32', _g)", "", ("shape", "size", "heap", "bytes")),
        ("empty-bad-dtype", f"{grp}", "sm.empty((4,), 'bogus', _g)", "", ("dtype",)),
        ("empty-valid", f"{grp}", "sm.empty((4,), 'float32', _g)", "chk_tensor(r, (4,), 'float32')", ()),
        ("get-buffer-huge-offset", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'float32', 2**62)", "", ("offset", "storage_offset")),
        ("get-buffer-neg-offset", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'float32', -1)", "", ("offset", "storage_offset")),
        ("get-buffer-too-big", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (5,), 'float32')", "", ("shape", "size", "fit")),
        ("get-buffer-offset-overflow", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2**62,), 'float32', 2**62)", "", ("offset", "shape", "fit")),
        ("get-buffer-neg-size", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (-1,), 'float32')", "", ("shape", "size")),
        ("get-buffer-bad-rank", f"{sym}", "sm.rendezvous(_x).get_buffer(5, (2,), 'float32')", "", ("rank",)),
        ("get-buffer-bad-dtype", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'bogus')", "", ("dtype",)),
        ("get-buffer-valid", f"{sym}", "sm.rendezvous(_x).get_buffer(0, (2,), 'float32', 1)", "chk_values(r, np.array([1.0, 2.0], np.float32))", ()),
        ("buffer-bad-rank", f"{sym}", "sm.rendezvous(_x).buffer(-1)", "", ("rank",)),
        ("wait-signal-bad-channel", f"{sym}", "sm.rendezvous(_x).wait_signal(0, 2**40)", "", ("channel",)),
        ("rendezvous-non-symmetric", f"{grp}", "sm.rendezvous(opreg.ones((4,)))", "", ("symmetric", "tensor")),
        ("allreduce-non-symmetric", f"{grp}", "sm.one_shot_all_reduce(opreg.ones((4,)), _g)", "", ("input",)),
        ("allreduce-bad-op", f"{sym}", "sm.one_shot_all_reduce(_x, _g, 'bogus')", "", ("reduce_op",)),
        ("allreduce-valid", f"{sym}", "sm.one_shot_all_reduce(_x, _g)", "chk_values(r, np.arange(4, dtype=np.float32))", ()),
        ("allreduce-out-readonly", f"{sym}", "sm.one_shot_all_reduce(_x, _g, out=ro(np.zeros(4, np.float32)))", "", ("out",)),
        ("allreduce-out-is-input", f"{sym}", "sm.one_shot_all_reduce(_x, _g, out=_x)", "chk_values(r, np.arange(4, dtype=np.float32))", ("out",)),
        ("allgather-out-wrong", f"{sym}", "sm.all_gather_into(np.zeros(3, np.float32), _x, _g)", "", ("out",)),
        ("reduce-scatter-valid", f"{sym}", "sm.reduce_scatter_into(np.zeros(4, np.float32), _x, _g)", "chk_values(r, np.arange(4, dtype=np.float32))", ()),
        ("two-shot-inplace", f"{sym}", "(sm.two_shot_all_reduce_(_x, _g), _x)[1]", "chk_values(r, np.arange(4, dtype=np.float32))", ()),
        ("fused-non-symmetric", f"{sym}", "sm.fused_all_reduce_add_rms_norm_(opreg.ones((4,)), np.ones(4, np.float32), np.ones(4, np.float32), 1e-6, _g)", "", ("input",)),
        ("destroy-twice", f"{grp}; sm.destroy_group(_g)", "sm.destroy_group(_g)", "", ("group",)),
        ("filestore-missing", "import opreg.symm_mem as sm", "sm.FileStore('/nonexistent/dir')", "'unchecked: accepted'", ("/nonexistent/dir",)),
    ]
    for pid, setup, call, expect, args in cases:
        must = "a read-only out" if pid == "allreduce-out-readonly" else ""
        g.add(Probe(id=f"symm_mem/{pid}", surface="symm_mem", setup=setup, call=call,
                    expect=expect or "'unchecked: accepted'", must_refuse=must,
                    key=pid in ("lone-rank-of-2", "get-buffer-huge-offset", "get-buffer-offset-overflow",
                                "allreduce-out-readonly", "empty-bytes-overflow"),
                    op_tokens=("symm_mem", "group", "create_group", "empty", "rendezvous", "get_buffer",
                               "buffer", "all_reduce", "all_gather", "reduce_scatter", "store", "rms_norm",
                               "wait_signal", "destroy"),
                    arg_tokens=args))


def sm_ok(r: Any, name: str) -> Optional[str]:
    """A group created with odd parameters: it exists and can be destroyed."""
    import opreg.symm_mem as sm
    if not sm.group_exists(name):
        return f"create_group returned but group {name[:40]!r} does not exist"
    info = sm.group_info(name)
    sm.destroy_group(name)
    return f"unchecked: accepted, group_info {_short(str(info), 200)}"


def python_probes(with_torch: bool) -> List[Probe]:
    g = Gen()
    gen_op_probes(g, FW_NUMPY)
    gen_op_probes(g, FW_OPREG)
    if with_torch:
        gen_op_probes(g, FW_TORCH)
        gen_op_probes(g, FW_TORCH_OPS)
    gen_op_lookup(g)
    gen_constructors(g)
    gen_tensor_methods(g)
    gen_schema_probes(g)
    gen_custom_op_probes(g)
    gen_load_library_probes(g)
    gen_symm_mem_probes(g)
    gen_unknown_ops(g)
    return g.probes


def gen_unknown_ops(g: Gen) -> None:
    """Ops opreg lists that this file has no table entry for: garbage arguments only."""
    for name in opreg.list_ops():
        ns, _, rest = name.partition("::")
        base, _, overload = rest.partition(".")
        if ns == "opreg" and base in OPS:
            continue
        if ns == "symm_mem" and overload:
            continue
        target = f"opreg.ops.{ns}.{base}" + (f".{overload}" if overload else "")
        for pid, args in (("no-args", ""), ("None", "None"), ("garbage", "'x', 2**63, float('nan')"),
                          ("numpy", "rnd((4,)), 'sum', 'no_such_group'")):
            g.add(Probe(id=f"{'symm_mem' if ns == 'symm_mem' else 'other-ops'}/{name}-{pid}",
                        surface="symm_mem" if ns == "symm_mem" else "other-ops",
                        call=f"{target}({args})", expect="'unchecked: accepted'",
                        op_tokens=(name.split(".")[0],), arg_tokens=()))


SCHEMA_TEXTS = [text.replace("{i}", str(i)) for i, (_, text) in enumerate(HOSTILE_SCHEMAS)]


# =============================================================================================
# Worker process
# =============================================================================================

def _limit_memory(nbytes: int) -> None:
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    except (ImportError, ValueError, OSError):
        pass


def worker_main(with_torch: bool) -> int:
    """Reads requests (JSON lines) on stdin, answers on the original stdout; everything opreg,
    torch or a kernel prints goes to stderr."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _limit_memory(WORKER_MEMORY)
    torch_note = load_frameworks(with_torch)
    probes = python_probes(torch is not None)
    by_id = {p.id: p for p in probes}
    listing = [{"id": p.id, "surface": p.surface, "key": p.key, "repro": p.repro()} for p in probes]
    out.write(json.dumps({"listing": listing, "torch": torch_note}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        p = by_id[req["id"]]
        ns = dict(WORKER_NAMESPACE())
        t0 = time.monotonic()
        try:
            res = run_op_probe(p, ns) if p.op else run_api_probe(p, ns)
        except Exception as e:  # a bug here, not in opreg
            res = {"outcome": "probe-error", "detail": f"{type(e).__name__}: {e}"}
        res["seconds"] = time.monotonic() - t0
        for k in ("message", "detail"):
            if k in res:
                res[k] = _short(str(res[k]), 4000)
        out.write(json.dumps(res) + "\n")
    return 0


def WORKER_NAMESPACE() -> Dict[str, Any]:  # noqa: N802 - reads like the namespace it is
    g = globals()
    names = ("np", "opreg", "o", "torch", "T", "rnd", "trnd", "otnd", "ro", "misaligned", "nanify",
             "zcplx", "chk_tensor", "chk_values", "chk_schema", "chk_custom", "chk_ctor",
             "chk_dtype_echo", "chk_full", "chk_arange", "chk_tensor_data", "chk_tensor_shape", "chk_accepted",
             "sm_ok", "SCHEMA_TEXTS")
    return {n: g[n] for n in names}


# =============================================================================================
# Parent: the worker client
# =============================================================================================

class Worker:
    """The worker subprocess: restarted after a crash or a hang."""

    def __init__(self, args: argparse.Namespace, log_path: Path) -> None:
        self.args = args
        self.log_path = log_path
        self.proc: Optional[subprocess.Popen] = None
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.listing: List[Dict[str, Any]] = []
        self.torch_note = ""
        self.starts = 0

    def start(self) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker"]
        if self.args.no_torch:
            cmd.append("--no-torch")
        env = dict(os.environ, OMP_NUM_THREADS="2", PYTHONFAULTHANDLER="1", PYTHONUNBUFFERED="1")
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                     start_new_session=True, env=env, cwd=str(REPO_ROOT))
        log.close()
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()
        self.starts += 1
        first = self._get(WORKER_START_TIMEOUT_S)
        if not isinstance(first, dict) or "listing" not in first:
            raise RuntimeError(f"the probe worker did not start ({first!r}); see {self.log_path}")
        self.listing = first["listing"]
        self.torch_note = first["torch"]

    @staticmethod
    def _read(proc: subprocess.Popen, q: "queue.Queue[Optional[str]]") -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            q.put(raw.decode("utf-8", "replace"))
        q.put(None)

    def _get(self, timeout: float) -> Any:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout"
        if line is None:
            assert self.proc is not None
            try:
                rc = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                rc = None
            return ("died", rc)
        return json.loads(line)

    def run(self, probe_id: str, timeout: float) -> Dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps({"id": probe_id}) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ans = self._get(timeout)
        if isinstance(ans, dict):
            return ans
        if ans == "timeout":
            self.kill()
            return {"outcome": "hang", "detail": f"no answer in {timeout:g} s"}
        rc = ans[1]
        self.proc = None
        tail = self._log_tail()
        if rc is not None and rc < 0:
            try:
                sig = signal.Signals(-rc).name
            except ValueError:
                sig = f"signal {-rc}"
            return {"outcome": "crash", "detail": f"worker killed by {sig}; log: {tail}"}
        return {"outcome": "crash", "detail": f"worker exited with status {rc} without answering; log: {tail}"}

    def _log_tail(self) -> str:
        try:
            data = self.log_path.read_bytes()[-3000:].decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [ln for ln in data.splitlines() if ln.strip()][-6:]
        return _short(" | ".join(lines), 700)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.proc = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
                pass
        self.kill()


# =============================================================================================
# Parent: CLI probes
# =============================================================================================

def find_cli(explicit: Optional[str]) -> Tuple[Optional[str], str]:
    """The opreg CLI: --cli, $OPREG_CLI, `opreg` on PATH, build/release/cli/opreg; with the
    reason when there is none."""
    for source, cand in (("--cli", explicit), ("$OPREG_CLI", os.environ.get("OPREG_CLI")),
                         ("PATH", shutil.which("opreg")),
                         ("build tree", str(REPO_ROOT / "build" / "release" / "cli" / "opreg"))):
        if not cand:
            continue
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand, source
        if source in ("--cli", "$OPREG_CLI"):
            return None, f"{source} names {cand!r}, which is not an executable file"
    return None, ("no opreg CLI: set OPREG_CLI, put `opreg` on PATH or build "
                  "build/release/cli/opreg")


class TraceInvalid(Exception):
    pass


def plan_model(trace: Any, alignment_opt: Optional[int] = None) -> Tuple[List[Tuple[int, int, int]], int]:
    """The buffers and alignment a trace means under docs/trace_format.md; raises TraceInvalid
    for a trace the format forbids."""
    if not isinstance(trace, dict):
        raise TraceInvalid("top level is not an object")
    if "buffers" not in trace or not isinstance(trace["buffers"], list):
        raise TraceInvalid("no 'buffers' array")

    def integer(v: Any, what: str, lo: int, hi: int) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TraceInvalid(f"{what}={v!r} is not an integer")
        if not lo <= v <= hi:
            raise TraceInvalid(f"{what}={v} outside [{lo}, {hi}]")
        return v

    align = trace.get("alignment", 64)
    align = integer(align, "alignment", 1, 2**63 - 1) if alignment_opt is None else alignment_opt
    bufs = []
    for b in trace["buffers"]:
        if isinstance(b, dict):
            if not all(k in b for k in ("size", "first", "last")):
                raise TraceInvalid("buffer object without size/first/last")
            size, first, last = b["size"], b["first"], b["last"]
        elif isinstance(b, list):
            if len(b) != 3:
                raise TraceInvalid(f"buffer array of length {len(b)}")
            size, first, last = b
        else:
            raise TraceInvalid(f"buffer entry {b!r}")
        size = integer(size, "size", 0, 2**56)
        first = integer(first, "first", 0, 2**31 - 2)
        last = integer(last, "last", 0, 2**31 - 2)
        if first > last:
            raise TraceInvalid(f"first {first} > last {last}")
        bufs.append((size, first, last))
    if sum(s for s, _, _ in bufs) > 2**60:
        raise TraceInvalid("sizes add up to more than 2^60")
    return bufs, align


def check_plan_output(stdout: str, trace: Any, alignment_opt: Optional[int]) -> Tuple[str, str]:
    """Checks an accepted `opreg plan --json --offsets` run against the trace: every offset
    aligned, no two buffers live at the same step overlapping in memory, arena and lower bound
    as the format defines them."""
    try:
        bufs, align = plan_model(trace, alignment_opt)
    except TraceInvalid as e:
        return "wrong", f"accepted a trace the format forbids: {e}"
    try:
        res = json.loads(stdout)
    except ValueError:
        return "wrong", f"output is not JSON: {_short(stdout, 200)}"
    offs = res.get("offsets")
    if not isinstance(offs, list) or len(offs) != len(bufs):
        return "wrong", f"{len(offs) if isinstance(offs, list) else offs!r} offsets for {len(bufs)} buffers"
    if res.get("buffers") != len(bufs):
        return "wrong", f"reports {res.get('buffers')} buffers, the trace has {len(bufs)}"
    if res.get("naive_bytes") != sum(s for s, _, _ in bufs):
        return "wrong", f"naive_bytes {res.get('naive_bytes')} != sum of sizes {sum(s for s, _, _ in bufs)}"
    rounded = [-(-s // align) * align for s, _, _ in bufs]
    for i, off in enumerate(offs):
        if not isinstance(off, int) or off < 0 or off % align:
            return "wrong", f"buffer {i}: offset {off!r} not a multiple of {align}"
        if bufs[i][0] and off + bufs[i][0] > res.get("arena_bytes", 0):
            return "wrong", f"buffer {i} ends at {off + bufs[i][0]}, past the arena {res.get('arena_bytes')}"
    events: Dict[int, List[int]] = {}
    for i, (s, f, l) in enumerate(bufs):
        if s:
            events.setdefault(f, []).append(i)
    live: List[int] = []
    lb = 0
    for step in sorted(set(events) | {l for _, _, l in bufs}):
        live = [i for i in live if bufs[i][2] >= step] + events.get(step, [])
        lb = max(lb, sum(rounded[i] for i in live))
        spans = sorted((offs[i], offs[i] + bufs[i][0], i) for i in live)
        for (a0, a1, ia), (b0, b1, ib) in zip(spans, spans[1:]):
            if b0 < a1:
                return "wrong", f"buffers {ia} and {ib} are live at step {step} and overlap in memory"
    if res.get("lb_bytes") != lb:
        return "wrong", f"lb_bytes {res.get('lb_bytes')}, the trace's max live bytes are {lb}"
    if res.get("arena_bytes", -1) < lb:
        return "wrong", f"arena {res.get('arena_bytes')} below the lower bound {lb}"
    return "ok", ""


def gen_cli_probes(cli: str, tmp: Path) -> List[Probe]:
    """Probes of `opreg plan`, `opreg schema` and `opreg ops --load`."""
    out: List[Probe] = []
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    d = tmp / "adir"
    d.mkdir()

    def plan(pid: str, text: Optional[bytes] = None, path: Optional[str] = None, opts: Sequence[str] = (),
             key: bool = False, check: str = "plan") -> None:
        if path is None:
            path = str(tmp / f"plan-{len(out)}.json")
            Path(path).write_bytes(text or b"")
        argv = (cli, "plan", "--json", "--offsets", *opts, path)
        out.append(Probe(id=f"cli:plan/{pid}", surface="cli:plan", key=key, argv=argv, cli_check=check,
                         op_tokens=(os.path.basename(path), "line", "column", "trace", "--", "option",
                                    "stdin"), arg_tokens=()))

    j = lambda obj: json.dumps(obj).encode()  # noqa: E731
    valid = {"alignment": 64, "buffers": [{"size": 1024, "first": 0, "last": 3}, [512, 1, 2], [2048, 3, 5]]}
    plan("valid", j(valid), key=True)
    import random
    rng = random.Random(7)
    big = {"buffers": [[rng.randrange(0, 1 << 20), s, s + rng.randrange(0, 20)] for s in
                       (rng.randrange(0, 2000) for _ in range(2000))]}
    plan("valid-2000-buffers", j(big), key=True)
    plan("valid-zero-sizes", j({"buffers": [[0, 0, 0], [0, 0, 5], [64, 1, 1]]}))
    plan("valid-alignment-1", j({"alignment": 1, "buffers": [[3, 0, 1], [5, 1, 2]]}))
    plan("valid-alignment-3", j({"alignment": 3, "buffers": [[4, 0, 1], [5, 1, 2]]}))
    plan("valid-max-size", j({"buffers": [[2**56, 0, 0]]}))
    plan("valid-max-step", j({"buffers": [[64, 2**31 - 2, 2**31 - 2]]}))
    plan("valid-array-entries", b'{"buffers": [[1, 0, 0]], "name": "x", "extra": {"a": [1, 2]}}')
    plan("empty-file", b"")
    plan("empty-object", b"{}", key=True)
    plan("buffers-number", b'{"buffers": 5}')
    plan("size-1e400", b'{"buffers": [{"size": 1e400, "first": 0, "last": 1}]}', key=True)
    plan("size-negative", b'{"buffers": [{"size": -1, "first": 0, "last": 1}]}', key=True)
    plan("size-2**56+1", j({"buffers": [[2**56 + 1, 0, 1]]}))
    plan("size-2**63", j({"buffers": [[2**63, 0, 1]]}))
    plan("size-2**64", j({"buffers": [[2**64, 0, 1]]}))
    plan("size-float", b'{"buffers": [[1.5, 0, 1]]}', key=True)
    plan("size-float-integral", b'{"buffers": [[64.0, 0, 1]]}')
    plan("size-exponent", b'{"buffers": [[1e3, 0, 1]]}')
    plan("size-string", b'{"buffers": [["10", 0, 1]]}')
    plan("size-null", b'{"buffers": [[null, 0, 1]]}')
    plan("size-true", b'{"buffers": [[true, 0, 1]]}')
    plan("first-gt-last", b'{"buffers": [[64, 5, 1]]}')
    plan("first-negative", b'{"buffers": [[64, -1, 1]]}')
    plan("last-2**31-1", j({"buffers": [[64, 0, 2**31 - 1]]}))
    plan("last-2**40", j({"buffers": [[64, 0, 2**40]]}))
    plan("sum-over-2**60", j({"buffers": [[2**56, i, i] for i in range(20)]}), key=True)
    plan("alignment-0", j({"alignment": 0, "buffers": [[64, 0, 1]]}), key=True)
    plan("alignment-negative", j({"alignment": -64, "buffers": [[64, 0, 1]]}))
    plan("alignment-2**62", j({"alignment": 2**62, "buffers": [[64, 0, 1], [64, 0, 1]]}), key=True)
    plan("alignment-2**40-many", j({"alignment": 2**40, "buffers": [[1, 0, 1]] * 20}))
    plan("alignment-1e400", b'{"alignment": 1e400, "buffers": [[64, 0, 1]]}')
    plan("alignment-string", b'{"alignment": "64", "buffers": [[64, 0, 1]]}')
    plan("nan-literal", b'{"buffers": [[NaN, 0, 1]]}')
    plan("infinity-literal", b'{"buffers": [[Infinity, 0, 1]]}')
    plan("deep-nesting-ignored-key", b'{"buffers": [], "x": ' + b"[" * 100000 + b"]" * 100000 + b"}", key=True)
    plan("deep-nesting-unbalanced", b"[" * 1000000)
    plan("deep-nesting-objects", b'{"a":' * 100000 + b"1" + b"}" * 100000)
    plan("huge-junk-array", b'{"buffers": [], "junk": [' + b"0," * 2000000 + b"0]}")
    plan("entry-string", b'{"buffers": ["abc"]}')
    plan("entry-short-array", b'{"buffers": [[64, 0]]}')
    plan("entry-long-array", b'{"buffers": [[64, 0, 1, 2]]}')
    plan("entry-nested-array", b'{"buffers": [[[64], 0, 1]]}')
    plan("entry-missing-last", b'{"buffers": [{"size": 64, "first": 0}]}')
    plan("non-utf8-name", b'{"name": "\xff\xfe", "buffers": [[64, 0, 1]]}', key=True)
    plan("non-utf8-raw", b"\xff\xfe\x00\x01" * 100)
    plan("control-chars-name", b'{"name": "a\\u0000b\\u001b[31m", "buffers": [[64, 0, 1]]}')
    plan("top-level-array", b"[[64, 0, 1]]")
    plan("top-level-null", b"null")
    plan("duplicate-keys", b'{"buffers": [[64, 0, 1]], "buffers": [[128, 0, 1], [64, 0, 0]]}')
    plan("bom", b"\xef\xbb\xbf" + j(valid))
    plan("trailing-garbage", j(valid) + b" xyz")
    plan("comment", b'{"buffers": [[64, 0, 1]] /* c */}')
    plan("directory", path=str(d), key=True)
    plan("missing-file", path=str(tmp / "no-such.json"))
    plan("fifo-no-writer", path=str(fifo), key=True, check="plan")
    plan("dev-zero", path="/dev/zero", key=True)
    plan("dev-null", path="/dev/null")
    plan("dev-urandom", path="/dev/urandom")
    plan("option-alignment-negative", j(valid), opts=("--alignment", "-1"))
    plan("option-alignment-zero", j(valid), opts=("--alignment", "0"))
    plan("option-alignment-2**64", j(valid), opts=("--alignment", str(2**64)), key=True)
    plan("option-alignment-text", j(valid), opts=("--alignment", "abc"))
    plan("option-alignment-trailing", j(valid), opts=("--alignment", "64abc"))
    plan("option-budget-negative", j(valid), opts=("--budget-ms", "-5"))
    plan("option-budget-1e30", j(valid), opts=("--budget-ms", "1e30"))
    plan("option-capacity-negative", j(valid), opts=("--budget-ms", "10", "--capacity", "-1"))
    plan("option-capacity-2**70", j(valid), opts=("--budget-ms", "10", "--capacity", str(2**70)))
    plan("option-unknown", j(valid), opts=("--bogus",))
    plan("option-missing-value", j(valid), opts=("--alignment",))
    plan("budget-on-big", j(big), opts=("--budget-ms", "200"), check="plan-budget")
    # stdin
    out.append(Probe(id="cli:plan/stdin-valid", surface="cli:plan", argv=(cli, "plan", "--json", "--offsets", "-"),
                     stdin=j(valid), cli_check="plan", op_tokens=("stdin", "-", "line")))
    out.append(Probe(id="cli:plan/stdin-empty", surface="cli:plan", argv=(cli, "plan", "--json", "--offsets", "-"),
                     stdin=b"", cli_check="plan", op_tokens=("stdin", "-", "line")))
    out.append(Probe(id="cli:plan/no-file", surface="cli:plan", argv=(cli, "plan"), cli_check="plan",
                     op_tokens=("usage", "trace", "plan")))
    out.append(Probe(id="cli:plan/two-files", surface="cli:plan", argv=(cli, "plan", str(tmp / "plan-0.json"), str(tmp / "plan-0.json")),
                     cli_check="none", op_tokens=("usage", "trace", "plan", "plan-0.json")))
    # opreg schema
    for i, (pid, text) in enumerate(HOSTILE_SCHEMAS):
        s = text.replace("{i}", str(i)).encode("utf-8", "surrogateescape") if "\xff" not in text \
            else text.replace("{i}", str(i)).encode("latin-1")
        key = pid in ("paren-nesting-1e5", "return-nesting-1e5", "dict-nesting-1e4", "list-default-nesting-1e5",
                      "long-name-1e6", "valid", "nul-in-name", "future-nesting")
        out.append(Probe(id=f"cli:schema/{pid}", surface="cli:schema", key=key, argv=(cli, "schema"),
                         stdin=s + b"\n", cli_check=f"schema:{i}", op_tokens=("col", "line", "schema"),
                         arg_tokens=()))
    for pid, path in (("directory", str(d)), ("fifo", str(fifo)), ("dev-zero", "/dev/zero"),
                      ("missing", str(tmp / "nope.txt"))):
        out.append(Probe(id=f"cli:schema/file-{pid}", surface="cli:schema", key=pid in ("fifo", "dev-zero"),
                         argv=(cli, "schema", path), cli_check="schema-file",
                         op_tokens=(os.path.basename(path), "line", "col"), arg_tokens=()))
    out.append(Probe(id="cli:schema/namespace-hostile", surface="cli:schema",
                     argv=(cli, "schema", "--namespace", "a::b\n("), stdin=b"f(Tensor x) -> Tensor\n",
                     cli_check="schema-any", op_tokens=("namespace",)))
    out.append(Probe(id="cli:schema/many-lines", surface="cli:schema", argv=(cli, "schema"),
                     stdin=b"f(Tensor x) -> Tensor\n" * 20000, cli_check="schema-many"))
    # opreg ops --load
    text = tmp / "text.so"
    text.write_text("hello")
    empty = tmp / "empty.so"
    empty.write_bytes(b"")
    trunc = tmp / "trunc.so"
    plugin = REPO_ROOT / "build" / "release" / "tests" / "cpp" / "libopreg_test_plugin.so"
    trunc.write_bytes(plugin.read_bytes()[:300] if plugin.exists() else b"\x7fELF")
    for pid, path, key in (("directory", str(d), True), ("text", str(text), False), ("empty", str(empty), False),
                           ("dev-zero", "/dev/zero", True), ("fifo", str(fifo), True),
                           ("missing", str(tmp / "nope.so"), False), ("truncated-elf", str(trunc), True),
                           ("executable", "/bin/true", False)):
        out.append(Probe(id=f"cli:ops/load-{pid}", surface="cli:ops", key=key,
                         argv=(cli, "ops", "--load", path), cli_check="ops-load",
                         op_tokens=(os.path.basename(path), path), arg_tokens=()))
    for pid, name in (("name-missing", "nowhere::nothing"), ("name-empty", ""), ("name-long", "a::" + "b" * 100000),
                      ("name-dot", "opreg::add."), ("name-colons", "::::"), ("name-valid", "opreg::add")):
        out.append(Probe(id=f"cli:ops/{pid}", surface="cli:ops", argv=(cli, "ops", name),
                         cli_check="ops-name" if pid == "name-valid" else "ops-any",
                         op_tokens=(name[:20] or "name", "op", "usage"), arg_tokens=()))
    if plugin.exists():
        out.append(Probe(id="cli:ops/load-valid-plugin", surface="cli:ops",
                         argv=(cli, "ops", "--load", str(plugin)), cli_check="ops-any"))
    return out


def _cli_plan_trace(p: Probe) -> Tuple[Any, Optional[int]]:
    """The trace a plan probe reads (None: unreadable / not JSON) and its --alignment."""
    path = p.argv[-1]
    align = None
    if "--alignment" in p.argv:
        try:
            align = int(p.argv[p.argv.index("--alignment") + 1])
        except (ValueError, IndexError):
            align = None
    if path == "-":
        data = p.stdin or b""
    else:
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                return None, align
            data = Path(path).read_bytes()
        except OSError:
            return None, align
    try:
        return json.loads(data.decode("utf-8-sig")), align  # JSON allows ignoring a BOM
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "unparsable", align


def judge_cli(p: Probe, rc: int, stdout: str, stderr: str, canon: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """Classifies a finished CLI run (rc >= 0)."""
    msg = (stderr.strip() or stdout.strip())
    if p.cli_check.startswith("schema:"):
        return judge_schema_cli(p, rc, stdout, stderr, canon.get(int(p.cli_check.split(":")[1]), {}))
    if rc != 0:
        if not msg:
            return {"outcome": "wrong", "detail": f"exit {rc} with no message"}
        return {"outcome": "refused", "message": f"exit {rc}: {msg}",
                "unclear": unclear_reason(msg, p.op_tokens, p.arg_tokens)}
    if "--capacity" in p.argv and p.cli_check == "plan":
        return judge_capacity(p, stdout)
    if p.cli_check in ("plan", "plan-budget"):
        trace, align = _cli_plan_trace(p)
        if trace is None:
            return {"outcome": "wrong", "detail": "accepted input that is not a readable regular file"}
        if trace == "unparsable":
            return {"outcome": "wrong", "detail": "accepted input that is not valid JSON (UTF-8)"}
        if p.cli_check == "plan-budget":
            stdout = stdout.strip().splitlines()[0] if stdout.strip() else stdout
        outcome, detail = check_plan_output(stdout, trace, align)
        return {"outcome": outcome, "detail": detail}
    if p.cli_check == "ops-name":
        return {"outcome": "ok" if "opreg::add(Tensor self" in stdout else "wrong",
                "detail": "" if "opreg::add(Tensor self" in stdout else f"dump lacks the schema: {_short(stdout, 200)}"}
    if p.cli_check == "ops-load":
        return {"outcome": "wrong", "detail": f"loaded a non-library: {_short(stdout, 200)}"}
    if p.cli_check == "schema-many":
        lines = stdout.splitlines()
        ok = len(lines) == 20000 and set(lines) == {"f(Tensor x) -> Tensor"}
        return {"outcome": "ok" if ok else "wrong", "detail": "" if ok else f"{len(lines)} lines out"}
    if p.cli_check == "schema-file":
        return {"outcome": "wrong", "detail": f"accepted a non-file: {_short(stdout, 200)}"}
    return {"outcome": "ok-unchecked", "detail": f"exit 0: {_short(stdout, 120)}"}


def judge_capacity(p: Probe, stdout: str) -> Dict[str, Any]:
    """`plan --budget-ms N --capacity B` that exited 0: it found a placement within B."""
    try:
        res = json.loads(stdout)
        asked = int(p.argv[p.argv.index("--capacity") + 1])
    except (ValueError, IndexError):
        return {"outcome": "wrong", "detail": f"output is not JSON: {_short(stdout, 200)}"}
    if res.get("outcome") != "found" or not 0 <= res.get("arena_bytes", -1) <= asked:
        return {"outcome": "wrong", "detail": f"exit 0 with {_short(stdout, 200)}"}
    note = "" if res.get("capacity") == asked else f"(reports capacity {res.get('capacity')}, asked {asked})"
    return {"outcome": "ok", "detail": note}


def judge_schema_cli(p: Probe, rc: int, stdout: str, stderr: str, canon: Dict[str, Any]) -> Dict[str, Any]:
    """`opreg schema` on one hostile text: every output line is a canonical schema or an
    'error: col N: ...' line, the exit status says whether any failed, and an accepted schema
    matches torch's canonical form (when torch parses it) and opreg's own Python parser."""
    lines = stdout.splitlines()
    errors = [ln for ln in lines if ln.startswith("error:")]
    if rc not in (0, 1):
        return {"outcome": "wrong", "detail": f"exit {rc}: {_short(stderr or stdout, 200)}"}
    if rc == 1 and not errors:
        return {"outcome": "wrong", "detail": f"exit 1 without an error line: {_short(stdout + stderr, 200)}"}
    if rc == 0 and errors:
        return {"outcome": "wrong", "detail": "error lines but exit 0"}
    if rc == 1:
        msg = " | ".join(errors)
        return {"outcome": "refused", "message": msg, "unclear": unclear_reason(msg, ("col",), ())}
    accepted = [ln for ln in lines if ln.strip()]
    if len(accepted) != 1:
        return {"outcome": "ok-unchecked", "detail": f"{len(accepted)} output lines for a multi-line text"}
    out = accepted[0]
    ref = canon.get("torch")
    py = canon.get("opreg")
    if py is not None and py != out:
        return {"outcome": "wrong", "detail": f"CLI canonical {_short(out, 150)!r} != Python's {_short(py, 150)!r}"}
    if ref is None:
        return {"outcome": "ok-unchecked", "detail": "torch's parser not run on this text"}
    if ref.startswith("torch rejects"):
        return {"outcome": "ok-unchecked", "detail": f"opreg accepts, {ref}"}
    return ({"outcome": "ok", "detail": ""} if ref == out else
            {"outcome": "wrong", "detail": f"canonical {_short(out, 150)!r} != torch's {_short(ref, 150)!r}"})


def run_cli_probe(p: Probe, timeout: float, canon: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """Runs one CLI probe under an address-space limit and a timeout."""
    shell = f'ulimit -v {CLI_MEMORY // 1024} 2>/dev/null; exec "$0" "$@"'
    argv = ["/bin/sh", "-c", shell, *p.argv]
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if p.stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        return {"outcome": "not-run", "detail": f"could not start the CLI: {e}"}
    try:
        out_b, err_b = proc.communicate(p.stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return {"outcome": "hang", "detail": f"no exit in {timeout:g} s", "seconds": time.monotonic() - t0}
    secs = time.monotonic() - t0
    out, err = out_b.decode("utf-8", "replace"), err_b.decode("utf-8", "replace")
    if proc.returncode < 0:
        try:
            sig = signal.Signals(-proc.returncode).name
        except ValueError:
            sig = f"signal {-proc.returncode}"
        return {"outcome": "crash", "detail": f"killed by {sig}; stderr: {_short(err.strip(), 300)}", "seconds": secs}
    res = judge_cli(p, proc.returncode, out, err, canon)
    res["seconds"] = secs
    if "message" in res:
        res["message"] = _short(res["message"], 4000)
    return res


def schema_canon_table() -> Dict[int, Dict[str, Optional[str]]]:
    """For each hostile schema text that is safe to hand to torch's recursive parser: torch's
    canonical form (str(parse_schema(text)), or "torch rejects: ...") and opreg's, as opreg's
    Python front end prints it (None when opreg refuses it). Run in a child process."""
    table: Dict[int, Dict[str, Optional[str]]] = {}
    for i, t in enumerate(SCHEMA_TEXTS):
        if len(t) > 4000 or t.count("(") + t.count("[") > 64 or "\0" in t or "\n" in t:
            continue
        entry: Dict[str, Optional[str]] = {"torch": None, "opreg": None}
        if torch is not None:
            try:
                entry["torch"] = str(torch._C.parse_schema(t))
            except Exception as e:
                entry["torch"] = "torch rejects: " + _short(str(e).splitlines()[0] if str(e) else "", 120)
        has_ns = "::" in t.split("(")[0]
        try:
            name = opreg.Library(f"canon{i}", "FRAGMENT").define(t)
            canon = str(opreg.schema(f"canon{i}::{name}"))
            entry["opreg"] = canon if has_ns else canon.split("::", 1)[1]
        except Exception:
            pass
        table[i] = entry
    return table


def schema_canon_via_worker(with_torch: bool) -> Dict[int, Dict[str, Any]]:
    """schema_canon_table() computed in a child process (a crash there costs only the
    reference, which the CLI schema probes then lack)."""
    code = ("import json, sys; sys.path.insert(0, %r); import hostile_inputs as h; "
            "h.load_frameworks(%r); print(json.dumps(h.schema_canon_table()))"
            % (str(Path(__file__).resolve().parent), with_torch))
    shell = f'ulimit -v {WORKER_MEMORY // 1024} 2>/dev/null; exec "$0" "$@"'
    try:
        r = subprocess.run(["/bin/sh", "-c", shell, sys.executable, "-c", code], capture_output=True,
                           timeout=120, cwd=str(REPO_ROOT))
        data = json.loads(r.stdout.decode().strip().splitlines()[-1])
        return {int(k): v for k, v in data.items()}
    except Exception:
        return {}


# =============================================================================================
# Parent: selection, report
# =============================================================================================

def select_quick(probes: List[Dict[str, Any]], target: int) -> List[Dict[str, Any]]:
    """A representative subset of about `target` probes: one key probe per (surface, variant)
    (an op's variant stands for the same variant of the other ops), then an even sample of
    the rest."""
    chosen: List[str] = []
    groups = set()
    for p in probes:
        if p["key"]:
            group = (p["surface"], p["id"].rsplit("/", 1)[-1])
            if group not in groups:
                groups.add(group)
                chosen.append(p["id"])
    rest = [p["id"] for p in probes if p["id"] not in set(chosen)]
    room = max(target - len(chosen), 0)
    if room:
        step = len(rest) / room
        chosen += [rest[int(i * step)] for i in range(min(room, len(rest)))]
    keep = set(chosen)
    return [p for p in probes if p["id"] in keep]


def print_report(results: List[Result], notes: List[str], elapsed: float) -> None:
    surfaces = sorted({r.surface for r in results}, key=lambda s: [r.surface for r in results].index(s))
    cols = list(OUTCOMES) + ["unclear"]
    width = max(len(s) for s in surfaces + ["surface", "total"]) + 2
    head = "surface".ljust(width) + "".join(c.rjust(13) for c in cols) + "total".rjust(8)
    print(head)
    print("-" * len(head))
    totals = {c: 0 for c in cols}
    for s in surfaces:
        rs = [r for r in results if r.surface == s]
        row = {c: sum(r.outcome == c for r in rs) for c in OUTCOMES}
        row["unclear"] = sum(bool(r.unclear) for r in rs)
        for c in cols:
            totals[c] += row[c]
        print(s.ljust(width) + "".join(str(row[c]).rjust(13) for c in cols) + str(len(rs)).rjust(8))
    print("-" * len(head))
    print("total".ljust(width) + "".join(str(totals[c]).rjust(13) for c in cols) + str(len(results)).rjust(8))
    print(f"\n{len(results)} probes in {elapsed:.1f} s; crashes {totals['crash']}, hangs {totals['hang']}, "
          f"silently wrong {totals['wrong']}; ok-unchecked {totals['ok-unchecked']}; unclear {totals['unclear']}")
    for n in notes:
        print(f"note: {n}")
    print(f"\nrepro lines run after: {REPRO_PREAMBLE}")
    for title, pick in (("CRASH", lambda r: r.outcome == "crash"), ("HANG", lambda r: r.outcome == "hang"),
                        ("WRONG", lambda r: r.outcome == "wrong"),
                        ("PROBE-ERROR (harness)", lambda r: r.outcome == "probe-error"),
                        ("UNCLEAR refusal messages", lambda r: bool(r.unclear))):
        chosen = [r for r in results if pick(r)]
        if not chosen:
            continue
        print(f"\n== {title} ({len(chosen)}) ==")
        for r in chosen:
            print(f"- {r.id}: {_short(r.detail or r.unclear, 400)}")
            if r.unclear:
                print(f"    message: {_short(r.message, 300)}")
            print(f"    repro: {r.repro}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"about {QUICK_TARGET} representative probes")
    ap.add_argument("--json", metavar="PATH", help="write every result here")
    ap.add_argument("--cli", metavar="PATH", help="the opreg CLI binary (default: see the module doc)")
    ap.add_argument("--timeout", type=float, default=PY_TIMEOUT_S, help="seconds per Python probe")
    ap.add_argument("--cli-timeout", type=float, default=CLI_TIMEOUT_S, help="seconds per CLI probe")
    ap.add_argument("--no-torch", action="store_true", help="skip the torch probes")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI probes")
    ap.add_argument("--only", metavar="SUBSTRING", help="run only probes whose id contains this")
    ap.add_argument("--list", action="store_true", help="list the probes and exit")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker_main(not args.no_torch)

    t0 = time.monotonic()
    notes: List[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="opreg_hostile_"))
    worker = Worker(args, tmp / "worker.log")
    results: List[Result] = []
    try:
        worker.start()
        if worker.torch_note:
            notes.append(f"torch probes skipped: {worker.torch_note}")
        py = worker.listing
        cli_probes: List[Probe] = []
        if args.no_cli:
            notes.append("CLI probes skipped: --no-cli")
        else:
            cli, why = find_cli(args.cli)
            if cli is None:
                notes.append(f"CLI probes skipped: {why}")
            else:
                notes.append(f"CLI: {cli} (from {why})")
                cli_probes = gen_cli_probes(cli, tmp)
        listing = py + [{"id": p.id, "surface": p.surface, "key": p.key, "repro": p.repro()} for p in cli_probes]
        if args.only:
            listing = [p for p in listing if args.only in p["id"]]
        if args.quick:
            listing = select_quick(listing, QUICK_TARGET)
        if args.list:
            for p in listing:
                print(f"{p['id']}\t{_short(p['repro'], 300)}")
            print(f"{len(listing)} probes", file=sys.stderr)
            return 0
        cli_by_id = {p.id: p for p in cli_probes}
        canon = schema_canon_via_worker(not args.no_torch) if any(p["id"].startswith("cli:schema/") for p in listing) else {}
        for n, item in enumerate(listing, 1):
            pid = item["id"]
            start = time.monotonic()
            if pid in cli_by_id:
                res = run_cli_probe(cli_by_id[pid], args.cli_timeout, canon)
            else:
                res = worker.run(pid, args.timeout)
            r = Result(id=pid, surface=item["surface"], outcome=res["outcome"],
                       detail=res.get("detail", ""), message=res.get("message", ""),
                       unclear=res.get("unclear", "") if res["outcome"] == "refused" else "",
                       repro=item["repro"], seconds=round(res.get("seconds", time.monotonic() - start), 4))
            results.append(r)
            if r.outcome in FAILURES:
                print(f"[{n}/{len(listing)}] {r.outcome.upper()} {pid}: {_short(r.detail, 200)}", file=sys.stderr)
        if worker.starts > 1:
            notes.append(f"the worker was started {worker.starts} times (once + once per crash/hang)")
    finally:
        worker.close()
    elapsed = time.monotonic() - t0
    print_report(results, notes, elapsed)
    if args.json:
        counts: Dict[str, Dict[str, int]] = {}
        for r in results:
            c = counts.setdefault(r.surface, {k: 0 for k in OUTCOMES + ("unclear",)})
            c[r.outcome] += 1
            c["unclear"] += bool(r.unclear)
        total = {k: sum(c[k] for c in counts.values()) for k in OUTCOMES + ("unclear",)}
        Path(args.json).write_text(json.dumps({
            "counts": counts, "total": total, "probes": len(results), "seconds": round(elapsed, 1),
            "quick": args.quick, "notes": notes, "repro_preamble": REPRO_PREAMBLE,
            "results": [dataclasses.asdict(r) for r in results]}, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any(r.outcome in FAILURES for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
