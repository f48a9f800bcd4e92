"""The frameworks the probes use: NumPy (None in a parent without it; the worker needs it) and,
once load_frameworks() ran, opreg, o = opreg.ops.opreg, torch and T = torch.ops.opreg.

The other modules read these as attributes (frameworks.torch), so that they see what
load_frameworks() set."""
from __future__ import annotations

from typing import Any

try:
    import numpy as np
except ImportError:  # the parent runs without NumPy; the worker needs it
    np = None  # type: ignore[assignment]

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
